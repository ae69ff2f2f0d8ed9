#include "jit/entry_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace ptxrt::detail {
namespace {

using std::chrono::milliseconds;

// Polled rather than blocking in flock(), so that a holder that never finishes (a stopped
// process) costs the waiters `patience`, not forever; the pause stays short next to a compile.
constexpr milliseconds longest_pause{20};

// Whether `path` still names the file open as `descriptor`.
bool names_file(const std::filesystem::path& path, int descriptor) {
  struct stat opened {};
  struct stat current {};
  return ::fstat(descriptor, &opened) == 0 && ::stat(path.c_str(), &current) == 0 &&
         opened.st_ino == current.st_ino && opened.st_dev == current.st_dev;
}

FileDescriptor open_lock_file(const std::filesystem::path& path, int flags) {
  // O_NOFOLLOW: a lock file is never a symlink, and following one could create a file anywhere.
  return FileDescriptor(::open(path.c_str(), flags | O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0600));
}

}  // namespace

EntryLock::EntryLock(std::filesystem::path path, milliseconds patience) : path_(std::move(path)) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  milliseconds pause{1};
  for (;;) {
    FileDescriptor file = open_lock_file(path_, O_CREAT);
    if (!file) {
      failure_ = "cannot open '" + path_.string() + "': " + std::strerror(errno);
      return;
    }
    while (::flock(file.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        failure_ = "cannot lock '" + path_.string() + "': " + std::strerror(errno);
        return;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        failure_ = "waited " + std::to_string(patience.count() / 1000) +
                   " s for another process's compile (lock '" + path_.string() + "')";
        return;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, longest_pause);
    }
    if (names_file(path_, file.get())) {
      file_ = std::move(file);
      return;
    }
    // Its holder deleted it as we got it: the path's current file is the lock now.
  }
}

EntryLock::~EntryLock() {
  if (file_ && names_file(path_, file_.get())) ::unlink(path_.c_str());
}

bool remove_if_unlocked(const std::filesystem::path& path) {
  FileDescriptor file = open_lock_file(path, 0);
  if (!file || ::flock(file.get(), LOCK_EX | LOCK_NB) != 0 || !names_file(path, file.get()))
    return false;
  return ::unlink(path.c_str()) == 0;
}

}  // namespace ptxrt::detail
