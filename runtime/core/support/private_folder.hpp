// Internal: a folder ptxrt writes and prunes (the disk cache and its shard folders, the
// precompiled-header folder, the tuning database's folder), opened so that no one else can send
// a write or a delete of ptxrt's anywhere else.
//
// A folder is opened once, by the path the user gave, with its last component never a symbolic
// link (O_NOFOLLOW | O_DIRECTORY), and checked on the descriptor: it must be this user's and
// writable by no one else, as git's safe.directory and ccache require; ptxrt creates it with mode
// 0700. Everything after goes through that descriptor (openat, mkdirat, renameat, unlinkat),
// never following a link, as systemd's chase() and openat2(RESOLVE_NO_SYMLINKS) do: a link put
// where a child should be, or the folder's path renamed meanwhile, cannot redirect ptxrt. The
// folders above the last component are the user's choice and resolve as any path does.
//
// Thread safety: every member is const; a PrivateFolder may be used from any thread.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"
#include "support/file_descriptor.hpp"
#include "support/regular_file.hpp"

namespace ptxrt::detail {

class PTXRT_API PrivateFolder {
 public:
  // Opens the folder `path`, creating it (mode 0700) and its missing parents. `role` ("disk
  // cache") begins every message about it and its children. Throws Error(io) "<role> '<path>'
  // <what is wrong>" when it cannot be created or opened, is a symbolic link or not a folder, is
  // another user's, or group or others can write to it (see untrusted_folder).
  static PrivateFolder open(const std::filesystem::path& path, std::string_view role);

  PrivateFolder(PrivateFolder&&) noexcept = default;
  PrivateFolder& operator=(PrivateFolder&&) noexcept = default;

  // As the user gave it, for messages.
  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path path_of(std::string_view name) const { return path_ / name; }
  const std::string& role() const noexcept { return role_; }

  // Creates the child folder `name` (mode 0700) unless something is at that name already; false,
  // with errno set, when it cannot.
  bool make_folder(std::string_view name) const;
  // The child folder `name`, checked as open() checks a folder; nothing when `name` is missing.
  std::optional<PrivateFolder> open_folder(std::string_view name) const;

  // openat(name, flags | O_NOFOLLOW | O_CLOEXEC, mode): a link at `name` fails (ELOOP).
  FileDescriptor open_file(std::string_view name, int flags, mode_t mode = 0600) const;
  // The file `name` with `flags` (O_RDONLY, O_RDWR), created (mode 0600) when missing: a lock
  // file. Throws Error(io) "<what> '<path>': <what is wrong>" when it cannot be opened or what is
  // there is not a regular file of this user (a FIFO there never blocks the open).
  FileDescriptor open_own_file(std::string_view name, int flags, std::string_view what) const;
  // The regular file `name`, read as open_regular_file reads (non-blocking open, fstat), a link
  // refused; nothing when it is missing. Throws Error(io) naming `what` and the file's path.
  std::optional<OpenedFile> open_regular_file(std::string_view name, std::string_view what) const;
  // What is at `name` itself (a link, not its target); nothing when `name` is missing.
  std::optional<struct stat> status_of(std::string_view name) const;
  // Every name in the folder but "." and "..", in no order; none when it cannot be read.
  std::vector<std::string> names() const;
  // renameat within the folder; false, with errno set, when it fails.
  bool rename(std::string_view from, std::string_view to) const;
  // Deletes `name`, which this process created and still owns (a temporary file of its own).
  void remove_own_file(std::string_view name) const;
  // Deletes `name` only when it is a regular file of this user that `written_by_ptxrt` (given the
  // file opened for reading) recognises as one ptxrt wrote, and `name` still names that file.
  // True when it deleted it.
  bool remove_file_if(std::string_view name,
                      const std::function<bool(const OpenedFile&)>& written_by_ptxrt) const;

 private:
  PrivateFolder(FileDescriptor descriptor, std::filesystem::path path, std::string role);

  FileDescriptor descriptor_;
  std::filesystem::path path_;
  std::string role_;
};

// Why a folder whose own status is `status` (see PrivateFolder::status_of) may not hold what
// ptxrt writes: it is a symbolic link or not a folder, another user's, or writable by group or
// others. Empty when it may.
std::string untrusted_folder(const struct stat& status);

// Why a file ptxrt would use at some name cannot be, from the status of what is there (see
// PrivateFolder::status_of): "is a symbolic link, ...", "is a FIFO, ...", "is owned by uid 65534,
// ..."; `kind` names what should be there ("a cache entry"). Empty when it is a regular file of
// this user.
PTXRT_API std::string unusable_file(const struct stat& status, std::string_view kind);

// The last modification time in `status`, as std::filesystem reports it.
std::filesystem::file_time_type modification_time(const struct stat& status);

}  // namespace ptxrt::detail
