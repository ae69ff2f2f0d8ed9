// The lock that lets one caller at a time, across the threads and processes sharing a cache
// directory, compile the entry for a key: an advisory flock(2) on <shard>/<key>.lock, taken by
// DiskCache::load_or_compile. Internal to the disk cache.
//
// The holder deletes the file before releasing it, so a lock file exists only while its entry is
// being compiled. A waiter that gets the lock on a file just deleted sees that the path no longer
// names it and starts over on the path's new file, so at most one caller holds the lock the path
// names. A process that dies holding the lock loses it with its descriptors (the kernel releases
// flocks); the file it leaves is deleted by the next caller that locks the key, or by the cache's
// next scan (remove_if_unlocked).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "support/file_descriptor.hpp"

namespace ptxrt::detail {

class EntryLock {
 public:
  // Waits up to `patience` for the lock on `path`, creating the file (mode 0600) when missing.
  EntryLock(std::filesystem::path path, std::chrono::milliseconds patience);
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;
  // Deletes the file, then releases the lock.
  ~EntryLock();

  // Empty when the lock is held; otherwise why not ("cannot open ...", "flock: ...", "waited
  // ..."), and the caller goes on without it, as it would without the lock.
  const std::string& failure() const noexcept { return failure_; }

 private:
  std::filesystem::path path_;
  FileDescriptor file_;
  std::string failure_;
};

// Deletes the lock file `path` unless a caller holds it; true when it did.
bool remove_if_unlocked(const std::filesystem::path& path);

}  // namespace ptxrt::detail
