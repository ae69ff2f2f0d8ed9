#include "tune/database_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "ptxrt/core/error.hpp"
#include "support/child_process.hpp"
#include "support/regular_file.hpp"

namespace ptxrt::detail {

namespace fs = std::filesystem;

namespace {

std::string system_error_text() { return std::strerror(errno); }

PrivateFolder open_database_folder(const fs::path& path) {
  return PrivateFolder::open(path.has_parent_path() ? path.parent_path() : fs::path("."),
                             "tuning database folder");
}

std::string without_whitespace(std::string_view text) {
  std::string kept;
  for (char c : text)
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r') kept += c;
  return kept;
}

}  // namespace

LockedDatabaseFile::LockedDatabaseFile(const fs::path& path)
    : name_(path.filename().string()),
      folder_(open_database_folder(path)),
      lock_(folder_.open_own_file(name_ + ".lock", O_RDWR, "tuning database lock")) {
  while (::flock(lock_.get(), LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    throw Error(ErrorKind::io, "tuning database lock '" +
                                   folder_.path_of(name_ + ".lock").string() +
                                   "': cannot be locked: " + system_error_text());
  }
}

// One name, <database>.tmp, serves every writer, since all write under the lock: a temporary that
// a writer killed half-way left behind is removed by the next one.
void LockedDatabaseFile::replace(const std::string& text, std::string_view beginning) const {
  const std::string temporary = name_ + ".tmp";
  const auto fail = [&](const std::string& file, const std::string& problem) {
    return Error(ErrorKind::io,
                 "tuning database '" + folder_.path_of(file).string() + "': " + problem);
  };
  const std::string expected = without_whitespace(beginning);
  const auto left_by_a_writer = [&](const OpenedFile& file) {
    const std::string prefix = without_whitespace(read_opened_prefix(file, 256));
    return expected.starts_with(prefix.substr(0, expected.size()));
  };
  if (const std::optional<struct stat> found = folder_.status_of(temporary)) {
    std::string problem = unusable_file(*found, "a regular file");
    if (problem.empty() && !folder_.remove_file_if(temporary, left_by_a_writer))
      problem = "is in the way (not a temporary file ptxrt wrote; remove it)";
    if (!problem.empty()) throw fail(temporary, problem);
  }
  // Replaced only when it is a file: a link would be replaced by a file, not written through.
  if (const std::optional<struct stat> found = folder_.status_of(name_))
    if (std::string problem = unusable_file(*found, "a regular file"); !problem.empty())
      throw fail(name_, problem);
  FileDescriptor file = folder_.open_file(temporary, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!file) throw fail(temporary, "cannot create it: " + system_error_text());
  bool written = write_all(file.get(), text) && ::fsync(file.get()) == 0;
  written = file.close() && written;
  if (!written || !folder_.rename(temporary, name_)) {
    const std::string reason = system_error_text();
    folder_.remove_own_file(temporary);
    throw fail(name_, "cannot write it: " + reason);
  }
}

}  // namespace ptxrt::detail
