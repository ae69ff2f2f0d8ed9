// Internal: the tuning database's file on disk. Every change holds an exclusive flock of
// "<file>.lock" and replaces the whole file (temporary file, fsync, rename), so that writers in
// any number of processes take turns and a reader sees a whole file, old or new. The lock and the
// temporary go into the database's folder, opened as a PrivateFolder: created 0700 when missing,
// refused when it is a link, another user's, or writable by group or others.
//
// Thread safety: one LockedDatabaseFile per change, on one thread; the flock serializes them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "support/file_descriptor.hpp"
#include "support/private_folder.hpp"

namespace ptxrt::detail {

class LockedDatabaseFile {
 public:
  // Opens the folder of `path` and waits for the lock. Throws Error (io) naming the lock file
  // when it cannot be locked, and what PrivateFolder::open throws for the folder.
  explicit LockedDatabaseFile(const std::filesystem::path& path);

  // Replaces the file's content with `text`. A "<file>.tmp" that a writer killed half-way left is
  // removed when it starts as `beginning` does (JSON's whitespace aside: how every database file
  // begins); anything else there is refused. Throws Error (io) naming the file.
  void replace(const std::string& text, std::string_view beginning) const;

 private:
  std::string name_;  // the file's name in folder_
  PrivateFolder folder_;
  FileDescriptor lock_;
};

}  // namespace ptxrt::detail
