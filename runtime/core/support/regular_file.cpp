#include "support/regular_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"

namespace ptxrt::detail {

namespace {

[[noreturn]] void fail(std::string_view what, const std::filesystem::path& path,
                       std::string_view problem) {
  std::string message(what);
  message += ' ';
  message += quoted_path(path);
  message += ": ";
  message += problem;
  throw Error(ErrorKind::io, std::move(message));
}

// Fills `buffer` from `offset` on until it is full or the file ends (pread: the descriptor's
// position is left alone). The bytes read, or -1 with errno set.
ssize_t read_at(int descriptor, std::uint64_t offset, std::string& buffer) {
  std::size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t got = ::pread(descriptor, buffer.data() + done, buffer.size() - done,
                                static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

}  // namespace

std::string_view file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::optional<OpenedFile> open_regular_file(const std::filesystem::path& path,
                                            std::string_view what, const ReadLimits& limits) {
  return open_regular_file_at(AT_FDCWD, path, path, what, limits);
}

std::optional<OpenedFile> open_regular_file_at(int folder, const std::filesystem::path& name,
                                               const std::filesystem::path& path,
                                               std::string_view what, const ReadLimits& limits) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (!limits.follow_symlinks) flags |= O_NOFOLLOW;
  FileDescriptor descriptor(::openat(folder, name.c_str(), flags));
  if (!descriptor) {
    const int error = errno;
    if (error == ENOENT) return std::nullopt;
    if (error == ELOOP && !limits.follow_symlinks)
      fail(what, path, "is a symbolic link, which is not followed here");
    fail(what, path, std::strerror(error));
  }
  OpenedFile file{std::move(descriptor), {}};
  if (::fstat(file.descriptor.get(), &file.status) != 0) fail(what, path, std::strerror(errno));
  if (!S_ISREG(file.status.st_mode))
    fail(what, path,
         std::string("is ") + std::string(file_type_name(file.status.st_mode)) +
             ", not a regular file");
  const int status_flags = ::fcntl(file.descriptor.get(), F_GETFL);
  if (status_flags < 0 || ::fcntl(file.descriptor.get(), F_SETFL, status_flags & ~O_NONBLOCK) != 0)
    fail(what, path, std::strerror(errno));
  return file;
}

std::string read_opened_file(const OpenedFile& file, const std::filesystem::path& path,
                             std::string_view what, const ReadLimits& limits) {
  const auto size = static_cast<std::uint64_t>(file.status.st_size);
  if (size > limits.max_bytes)
    fail(what, path,
         std::to_string(size) + " bytes, more than the " + std::to_string(limits.max_bytes) +
             " bytes allowed");
  std::string content(static_cast<std::size_t>(size), '\0');
  // From 0 to fstat's size: a file that shrinks meanwhile is read short and said so.
  const ssize_t got = read_at(file.descriptor.get(), 0, content);
  if (got < 0) fail(what, path, std::strerror(errno));
  if (static_cast<std::uint64_t>(got) < size)
    fail(what, path,
         "changed while it was read (" + std::to_string(got) + " of " + std::to_string(size) +
             " bytes)");
  return content;
}

std::string read_opened_range(const OpenedFile& file, const std::filesystem::path& path,
                              std::string_view what, std::uint64_t offset, std::uint64_t size) {
  std::string content(static_cast<std::size_t>(size), '\0');
  const ssize_t got = read_at(file.descriptor.get(), offset, content);
  if (got < 0) fail(what, path, std::strerror(errno));
  const auto done = static_cast<std::uint64_t>(got);
  if (done < size)
    fail(what, path,
         "ends at byte " + std::to_string(offset + done) + ", before bytes " +
             std::to_string(offset) + " to " + std::to_string(offset + size - 1));
  return content;
}

std::string read_opened_prefix(const OpenedFile& file, std::size_t bytes) {
  std::string prefix(bytes, '\0');
  prefix.resize(static_cast<std::size_t>(
      std::max<ssize_t>(0, read_at(file.descriptor.get(), 0, prefix))));
  return prefix;
}

std::optional<std::string> read_regular_file_if_exists(const std::filesystem::path& path,
                                                       std::string_view what,
                                                       const ReadLimits& limits) {
  std::optional<OpenedFile> file = open_regular_file(path, what, limits);
  if (!file) return std::nullopt;
  return read_opened_file(*file, path, what, limits);
}

std::string read_regular_file(const std::filesystem::path& path, std::string_view what,
                              const ReadLimits& limits) {
  std::optional<std::string> content = read_regular_file_if_exists(path, what, limits);
  if (!content) fail(what, path, "no such file");
  return *std::move(content);
}

}  // namespace ptxrt::detail
