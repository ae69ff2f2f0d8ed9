#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "ptxrt/core/disk_cache.hpp"

namespace fs = std::filesystem;
using ptxrt::DiskCache;
using ptxrt::Image;
using ptxrt::testing::same_image;
using ptxrt::testing::sample_image;
using ptxrt::testing::ScratchDirectory;

namespace {

enum ChildExit { child_ok = 0, child_bad_load = 1, child_discarded = 2, child_threw = 3 };

// Stores the image `rounds` times and loads it after each store; every load must be a miss or the
// exact image. Runs in a forked child, so it reports through its exit status only.
int store_and_load(const fs::path& directory, const Image& image, int rounds) {
  try {
    DiskCache cache(directory);
    for (int round = 0; round < rounds; ++round) {
      cache.store(image);
      std::optional<Image> loaded = cache.load(image.key);
      if (loaded && !same_image(*loaded, image)) return child_bad_load;
    }
    return cache.stats().discarded == 0 ? child_ok : child_discarded;
  } catch (...) {
    return child_threw;
  }
}

// Only loads, as fast as it can, while the others store.
int load_only(const fs::path& directory, const Image& image, int rounds) {
  try {
    DiskCache cache(directory);
    for (int round = 0; round < rounds; ++round) {
      std::optional<Image> loaded = cache.load(image.key);
      if (loaded && !same_image(*loaded, image)) return child_bad_load;
    }
    return cache.stats().discarded == 0 ? child_ok : child_discarded;
  } catch (...) {
    return child_threw;
  }
}

}  // namespace

TEST_CASE("processes storing and loading one key at once leave exactly one good entry") {
  ScratchDirectory scratch;
  // Large enough that a torn write or a read of a half-written file could not go unnoticed.
  const Image image = sample_image("shared between processes", 256 * 1024);
  constexpr int storing_processes = 8;
  constexpr int loading_processes = 4;

  std::vector<pid_t> children;
  for (int i = 0; i < storing_processes + loading_processes; ++i) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      bool storing = i < storing_processes;
      ::_exit(storing ? store_and_load(scratch.path(), image, 50)
                      : load_only(scratch.path(), image, 200));
    }
    children.push_back(pid);
  }
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CAPTURE(child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == child_ok);
  }

  DiskCache cache(scratch.path());
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(scratch.path())) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  REQUIRE(files.size() == 1);
  CHECK(files[0] == cache.entry_path(image.key));
  std::optional<Image> loaded = cache.load(image.key);
  REQUIRE(loaded.has_value());
  CHECK(same_image(*loaded, image));
}

TEST_CASE("threads sharing one DiskCache store and load without losing or tearing entries") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  const std::vector<Image> images = {sample_image("thread 0"), sample_image("thread 1")};
  std::atomic<int> bad_loads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Image& image = images[static_cast<std::size_t>(t % 2)];
      for (int round = 0; round < 20; ++round) {
        cache.store(image);
        std::optional<Image> loaded = cache.load(image.key);
        if (!loaded || !same_image(*loaded, image)) ++bad_loads;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(bad_loads == 0);
  CHECK(cache.stats().stores == 80);
  CHECK(cache.stats().hits == 80);
  CHECK(cache.entries().size() == 2);
}
