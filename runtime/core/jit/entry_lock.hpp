// The lock that lets one caller at a time, across the threads and processes sharing a cache
// directory, compile the entry for a key: an advisory flock(2) on <shard>/<key>.lock, taken by
// DiskCache::load_or_compile. Internal to the disk cache.
//
// The holder deletes the file before releasing it, so a lock file exists only while its entry is
// being compiled. A waiter that gets the lock on a file just deleted sees that the name no longer
// names it and starts over on the name's new file, so at most one caller holds the lock the name
// names. A process that dies holding the lock loses it with its descriptors (the kernel releases
// flocks); the file it leaves is deleted by the next caller that locks the key, or by the cache's
// next scan (remove_if_unlocked). Lock files are opened in their shard folder's descriptor, never
// through a link, and only an empty regular file of this user, as ptxrt makes them, is one.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "support/file_descriptor.hpp"
#include "support/private_folder.hpp"

namespace ptxrt::detail {

class EntryLock {
 public:
  // Waits up to `patience` for the lock on the file `name` in `shard` (which outlives the lock),
  // creating it (mode 0600) when missing.
  EntryLock(const PrivateFolder& shard, std::string name, std::chrono::milliseconds patience);
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;
  // Deletes the file, then releases the lock.
  ~EntryLock();

  // Empty when the lock is held; otherwise why not ("disk cache lock '...': is a FIFO, ...",
  // "...: waited 300 s ..."), and the caller goes on without it, as it would without the lock.
  const std::string& failure() const noexcept { return failure_; }

 private:
  void fail(std::string_view problem);

  const PrivateFolder& shard_;
  std::string name_;
  FileDescriptor file_;
  std::string failure_;
};

// Deletes the lock file `name` in `shard` unless a caller holds it or it is not a lock file
// ptxrt made; true when it did.
bool remove_if_unlocked(const PrivateFolder& shard, std::string_view name);

}  // namespace ptxrt::detail
