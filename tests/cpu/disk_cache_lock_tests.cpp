// DiskCache::load_or_compile: one compile per entry across threads and processes, through the
// flock'ed <key>.lock beside the entry, and no lock file left behind.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/jit.hpp"

namespace fs = std::filesystem;
using ptxrt::CachedImage;
using ptxrt::DiskCache;
using ptxrt::Image;
using ptxrt::testing::same_image;
using ptxrt::testing::sample_image;
using ptxrt::testing::ScratchDirectory;

namespace {

fs::path lock_path(const DiskCache& cache, const std::string& key) {
  return cache.entry_path(key).parent_path() / (key + ".lock");
}

std::vector<fs::path> files_under(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

// Children block on it until open() lets them all go at once, so that they miss together.
class StartingGate {
 public:
  StartingGate() { REQUIRE(::pipe(ends_) == 0); }
  StartingGate(const StartingGate&) = delete;
  StartingGate& operator=(const StartingGate&) = delete;
  ~StartingGate() {
    for (int end : ends_)
      if (end >= 0) ::close(end);
  }
  // In a child: returns when the parent opens the gate.
  void wait() {
    ::close(ends_[1]);
    char byte = 0;
    while (::read(ends_[0], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  void open() {
    ::close(ends_[1]);
    ends_[1] = -1;
  }

 private:
  int ends_[2] = {-1, -1};
};

enum ChildExit { child_found = 0, child_compiled = 1, child_bad = 2 };

// In a forked child: asks for `image` (compiling it slowly), reports what happened by exit code.
int load_or_compile_slowly(const fs::path& directory, const Image& image, StartingGate& gate) {
  try {
    gate.wait();
    DiskCache cache(directory);
    const CachedImage cached = cache.load_or_compile(image.key, [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return image;
    });
    if (!same_image(cached.image, image)) return child_bad;
    return cached.compiled ? child_compiled : child_found;
  } catch (...) {
    return child_bad;
  }
}

std::vector<int> exit_codes(const std::vector<pid_t>& children) {
  std::vector<int> codes;
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    codes.push_back(WEXITSTATUS(status));
  }
  return codes;
}

}  // namespace

TEST_CASE("processes missing one entry at once compile it once and the others load it") {
  ScratchDirectory scratch;
  const Image image = sample_image("compiled by one process");
  StartingGate gate;
  std::vector<pid_t> children;
  for (int i = 0; i < 6; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(load_or_compile_slowly(scratch.path(), image, gate));
    children.push_back(pid);
  }
  gate.open();
  const std::vector<int> codes = exit_codes(children);
  CHECK(std::count(codes.begin(), codes.end(), child_compiled) == 1);
  CHECK(std::count(codes.begin(), codes.end(), child_found) == 5);
  DiskCache cache(scratch.path());
  CHECK(files_under(scratch.path()) == std::vector<fs::path>{cache.entry_path(image.key)});
}

TEST_CASE("threads of one process asking load_or_compile for one key compile it once") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  const Image image = sample_image("compiled by one thread");
  std::atomic<int> compiles{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      const CachedImage cached = cache.load_or_compile(image.key, [&] {
        ++compiles;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return image;
      });
      if (!same_image(cached.image, image)) ++bad;
    });
  for (std::thread& thread : threads) thread.join();
  CHECK(compiles == 1);
  CHECK(bad == 0);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 7);
  CHECK_FALSE(fs::exists(lock_path(cache, image.key)));
}

TEST_CASE(
    "a process that dies holding an entry's lock neither blocks the next compile nor leaves "
    "its lock file") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  const Image image = sample_image("its compiler died");
  const fs::path lock = lock_path(cache, image.key);
  fs::create_directories(lock.parent_path());
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int descriptor = ::open(lock.c_str(), O_RDONLY | O_CREAT, 0600);
    if (descriptor >= 0 && ::flock(descriptor, LOCK_EX) == 0) ::raise(SIGKILL);
    ::_exit(1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(fs::exists(lock));

  const auto start = std::chrono::steady_clock::now();
  const CachedImage cached = cache.load_or_compile(image.key, [&] { return image; });
  CHECK(cached.compiled);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
  CHECK_FALSE(fs::exists(lock));
  CHECK(cache.load(image.key).has_value());
}

TEST_CASE("a compile that throws stores nothing, leaves no lock, and the next caller compiles") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  const Image image = sample_image("first compile fails");
  CHECK_THROWS_WITH(
      cache.load_or_compile(image.key, []() -> Image { throw std::runtime_error("no NVRTC"); }),
      "no NVRTC");
  CHECK(files_under(scratch.path()).empty());
  const CachedImage cached = cache.load_or_compile(image.key, [&] { return image; });
  CHECK(cached.compiled);
  CHECK(same_image(cached.image, image));
}

TEST_CASE("clear removes lock files no one holds and keeps a held one") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  const std::string left = sample_image("left by a dead compile").key;
  const std::string held = sample_image("being compiled").key;
  for (const std::string& key : {left, held}) {
    fs::create_directories(lock_path(cache, key).parent_path());
    std::ofstream{lock_path(cache, key)};  // empty, as the cache makes them
  }
  // flock belongs to an open file description: this one excludes the cache's own open.
  const int holder = ::open(lock_path(cache, held).c_str(), O_RDONLY);
  REQUIRE(holder >= 0);
  REQUIRE(::flock(holder, LOCK_EX) == 0);
  cache.clear();
  CHECK_FALSE(fs::exists(lock_path(cache, left)));
  CHECK(fs::exists(lock_path(cache, held)));
  ::close(holder);
}

TEST_CASE("Jits of several processes wanting one kernel at once compile it once between them") {
  ScratchDirectory scratch;
  const ptxrt::Program program =
      ptxrt::Program::from_file(std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/scale.cu");
  ptxrt::CompileOptions options;
  options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
  StartingGate gate;
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      gate.wait();
      try {
        ptxrt::Jit jit({.cache_directory = scratch.path()});
        jit.image(program, options);
        ::_exit(static_cast<int>(jit.stats().compiles));
      } catch (...) {
        ::_exit(child_bad);
      }
    }
    children.push_back(pid);
  }
  gate.open();
  // Each child exits with its number of compiles, 0 or 1 (child_bad, 2, when it threw).
  const std::vector<int> compiles = exit_codes(children);
  CHECK(std::count(compiles.begin(), compiles.end(), 1) == 1);
  CHECK(std::count(compiles.begin(), compiles.end(), 0) == 3);
}
