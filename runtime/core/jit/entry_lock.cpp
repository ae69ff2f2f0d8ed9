#include "jit/entry_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {
namespace {

using std::chrono::milliseconds;

// Polled rather than blocking in flock(), so that a holder that never finishes (a stopped
// process) costs the waiters `patience`, not forever; the pause stays short next to a compile.
constexpr milliseconds longest_pause{20};

// Whether `name` in `shard` still names the file open as `descriptor`.
bool names_file(const PrivateFolder& shard, std::string_view name, int descriptor) {
  struct stat opened {};
  const std::optional<struct stat> current = shard.status_of(name);
  return ::fstat(descriptor, &opened) == 0 && current && opened.st_ino == current->st_ino &&
         opened.st_dev == current->st_dev;
}

}  // namespace

EntryLock::EntryLock(const PrivateFolder& shard, std::string name, milliseconds patience)
    : shard_(shard), name_(std::move(name)) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  milliseconds pause{1};
  for (;;) {
    FileDescriptor file;
    try {
      file = shard_.open_own_file(name_, O_RDONLY, "disk cache lock");
    } catch (const Error& error) {
      failure_ = error.what();
      return;
    }
    // Deleted when released: only an empty file, as ptxrt makes them, is taken for a lock.
    struct stat status {};
    if (::fstat(file.get(), &status) != 0 || status.st_size != 0) {
      fail("is not empty, as the cache's lock files are");
      return;
    }
    while (::flock(file.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        fail(std::string("cannot lock it: ") + std::strerror(errno));
        return;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        fail("waited " + std::to_string(patience.count() / 1000) +
             " s for another process's compile");
        return;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, longest_pause);
    }
    if (names_file(shard_, name_, file.get())) {
      file_ = std::move(file);
      return;
    }
    // Its holder deleted it as we got it: the name's current file is the lock now.
  }
}

void EntryLock::fail(std::string_view problem) {
  failure_ = "disk cache lock '" + shard_.path_of(name_).string() + "': " + std::string(problem);
}

EntryLock::~EntryLock() {
  if (file_ && names_file(shard_, name_, file_.get())) shard_.remove_own_file(name_);
}

bool remove_if_unlocked(const PrivateFolder& shard, std::string_view name) {
  return shard.remove_file_if(name, [](const OpenedFile& file) {
    // Held until the file is deleted: a lock held elsewhere is a compile in progress.
    return file.status.st_size == 0 && ::flock(file.descriptor.get(), LOCK_EX | LOCK_NB) == 0;
  });
}

}  // namespace ptxrt::detail
