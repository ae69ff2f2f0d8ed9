#include "support/private_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {

namespace fs = std::filesystem;

namespace {

constexpr int folder_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

[[noreturn]] void refuse(std::string_view role, const fs::path& path, std::string_view problem) {
  throw Error(ErrorKind::io,
              std::string(role) + " '" + path.string() + "': " + std::string(problem));
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string owner_problem(const struct stat& status) {
  if (status.st_uid == ::geteuid()) return {};
  return "is owned by uid " + std::to_string(status.st_uid) + ", not by this user (uid " +
         std::to_string(::geteuid()) + ")";
}

// The folder `name` in `parent`, not through a link, checked; nothing when `name` is missing.
FileDescriptor open_checked(int parent, const fs::path& name, std::string_view role,
                            const fs::path& path) {
  FileDescriptor folder(::openat(parent, name.c_str(), folder_flags));
  if (!folder) {
    const int error = errno;
    if (error == ENOENT) return folder;
    // A link or a file there fails the open: say which it is.
    struct stat status {};
    std::string problem;
    if ((error == ELOOP || error == ENOTDIR) &&
        ::fstatat(parent, name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0)
      problem = untrusted_folder(status);
    refuse(role, path,
           problem.empty() ? std::string("cannot open it: ") + std::strerror(error) : problem);
  }
  struct stat status {};
  if (::fstat(folder.get(), &status) != 0)
    refuse(role, path, std::string("cannot inspect it: ") + std::strerror(errno));
  if (std::string problem = untrusted_folder(status); !problem.empty()) refuse(role, path, problem);
  return folder;
}

// Creates the folders of `parents` that are missing, 0700 like the folder ptxrt puts in them;
// errno of the first that could not be created, or 0.
int make_parents(const fs::path& parents) {
  fs::path partial;
  for (const fs::path& part : parents) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  }
  return 0;
}

}  // namespace

std::string untrusted_folder(const struct stat& status) {
  if (S_ISLNK(status.st_mode))
    return "is a symbolic link, which ptxrt does not follow into a folder it writes (name the "
           "folder itself)";
  if (!S_ISDIR(status.st_mode))
    return "is " + std::string(file_type_name(status.st_mode)) + ", not a folder";
  if (std::string problem = owner_problem(status); !problem.empty()) return problem;
  if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "is writable by group or others (mode " + mode_text(status.st_mode) +
           "), so another user could plant files in it; chmod 700 it";
  return {};
}

std::string unusable_file(const struct stat& status, std::string_view kind) {
  if (!S_ISREG(status.st_mode))
    return "is " + std::string(file_type_name(status.st_mode)) + ", not " + std::string(kind);
  return owner_problem(status);
}

fs::file_time_type modification_time(const struct stat& status) {
  const auto since_epoch = std::chrono::seconds(status.st_mtim.tv_sec) +
                           std::chrono::nanoseconds(status.st_mtim.tv_nsec);
  return std::chrono::file_clock::from_sys(std::chrono::sys_time<std::chrono::nanoseconds>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch)));
}

PrivateFolder::PrivateFolder(FileDescriptor descriptor, fs::path path, std::string role)
    : descriptor_(std::move(descriptor)), path_(std::move(path)), role_(std::move(role)) {}

PrivateFolder PrivateFolder::open(const fs::path& path, std::string_view role) {
  const fs::path folder = path.has_filename() ? path : path.parent_path();
  const fs::path leaf = folder.filename();
  // ".", ".." and "/" end in no link: the path opens as it is.
  if (leaf.empty() || leaf == "." || leaf == "..") {
    FileDescriptor opened = open_checked(AT_FDCWD, folder, role, path);
    if (!opened) refuse(role, path, "does not exist");
    return PrivateFolder(std::move(opened), path, std::string(role));
  }
  const fs::path parent = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
  const int parents_error = make_parents(parent);
  const FileDescriptor parent_folder(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_folder)
    refuse(role, path,
           std::string("cannot create it: ") +
               std::strerror(parents_error != 0 ? parents_error : errno));
  if (::mkdirat(parent_folder.get(), leaf.c_str(), 0700) != 0 && errno != EEXIST)
    refuse(role, path, std::string("cannot create it: ") + std::strerror(errno));
  FileDescriptor opened = open_checked(parent_folder.get(), leaf, role, path);
  if (!opened) refuse(role, path, "vanished while it was opened");
  return PrivateFolder(std::move(opened), path, std::string(role));
}

bool PrivateFolder::make_folder(std::string_view name) const {
  return ::mkdirat(descriptor_.get(), std::string(name).c_str(), 0700) == 0 || errno == EEXIST;
}

std::optional<PrivateFolder> PrivateFolder::open_folder(std::string_view name) const {
  FileDescriptor child = open_checked(descriptor_.get(), fs::path(name), role_, path_of(name));
  if (!child) return std::nullopt;
  return PrivateFolder(std::move(child), path_of(name), role_);
}

FileDescriptor PrivateFolder::open_file(std::string_view name, int flags, mode_t mode) const {
  return FileDescriptor(
      ::openat(descriptor_.get(), std::string(name).c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode));
}

FileDescriptor PrivateFolder::open_own_file(std::string_view name, int flags,
                                            std::string_view what) const {
  FileDescriptor file = open_file(name, flags | O_CREAT | O_NONBLOCK, 0600);
  const int error = errno;
  struct stat status {};
  std::string problem;
  if (!file) {
    const std::optional<struct stat> found = status_of(name);
    problem = found ? unusable_file(*found, "a regular file") : "";
    if (problem.empty()) problem = std::strerror(error);
  } else if (::fstat(file.get(), &status) != 0) {
    problem = std::strerror(errno);
  } else {
    problem = unusable_file(status, "a regular file");
  }
  if (!problem.empty()) refuse(what, path_of(name), problem);
  return file;
}

std::optional<OpenedFile> PrivateFolder::open_regular_file(std::string_view name,
                                                           std::string_view what) const {
  return open_regular_file_at(descriptor_.get(), fs::path(name), path_of(name), what,
                              {.follow_symlinks = false});
}

std::optional<struct stat> PrivateFolder::status_of(std::string_view name) const {
  struct stat status {};
  if (::fstatat(descriptor_.get(), std::string(name).c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0)
    return std::nullopt;
  return status;
}

std::vector<std::string> PrivateFolder::names() const {
  // A listing of its own (a dup would share the read position with other threads' listings),
  // which closedir closes.
  const int listing = ::openat(descriptor_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listing < 0) return {};
  const std::unique_ptr<DIR, int (*)(DIR*)> directory(::fdopendir(listing), ::closedir);
  if (!directory) {
    ::close(listing);
    return {};
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(directory.get())) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  return names;
}

bool PrivateFolder::rename(std::string_view from, std::string_view to) const {
  return ::renameat(descriptor_.get(), std::string(from).c_str(), descriptor_.get(),
                    std::string(to).c_str()) == 0;
}

void PrivateFolder::remove_own_file(std::string_view name) const {
  ::unlinkat(descriptor_.get(), std::string(name).c_str(), 0);
}

bool PrivateFolder::remove_file_if(
    std::string_view name, const std::function<bool(const OpenedFile&)>& written_by_ptxrt) const {
  // Checked before opening too: opening a device could have effects of its own.
  const std::optional<struct stat> before = status_of(name);
  if (!before || !unusable_file(*before, "a file").empty()) return false;
  OpenedFile file{open_file(name, O_RDONLY | O_NONBLOCK | O_NOCTTY), {}};
  if (!file.descriptor || ::fstat(file.descriptor.get(), &file.status) != 0 ||
      !unusable_file(file.status, "a file").empty() || !written_by_ptxrt(file))
    return false;
  // Only the file recognised: another process may have renamed a new one to `name` since.
  const std::optional<struct stat> now = status_of(name);
  if (!now || now->st_ino != file.status.st_ino || now->st_dev != file.status.st_dev) return false;
  return ::unlinkat(descriptor_.get(), std::string(name).c_str(), 0) == 0;
}

}  // namespace ptxrt::detail
