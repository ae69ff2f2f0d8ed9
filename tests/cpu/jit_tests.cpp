// The Jit's image caches without a GPU: single flight in memory and on disk when many threads ask
// at once. CI also runs these under ThreadSanitizer (scripts/test.sh --sanitizers).
#include <doctest/doctest.h>

#include <barrier>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/jit.hpp"

using namespace ptxrt;

namespace {

// A tiny kernel whose SCALE define makes the specializations (one image key each).
const Program scale_program = Program::from_string(R"(
extern "C" __global__ void scale(float* values, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] *= SCALE;
}
)", "scale.cu");

CompileOptions scale_options(int scale) {
  CompileOptions options{.defines = {{"SCALE", std::to_string(scale) + ".0f"}}};
  options.target = {"sm_90", ImageFormat::cubin, {}};
  return options;
}

Jit jit_with_cache(const std::filesystem::path& directory) {
  JitOptions options;
  options.cache_directory = directory;
  return Jit(options);
}

constexpr int thread_count = 8;
constexpr int key_count = 3;
constexpr int rounds = 4;

// Every thread asks for every key `rounds` times, all threads released at once, and records the
// image it got for each key.
std::vector<std::vector<const Image*>> hammer(Jit& jit) {
  std::vector<std::vector<const Image*>> seen(thread_count,
                                              std::vector<const Image*>(key_count, nullptr));
  std::barrier start(thread_count);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int round = 0; round < rounds; ++round)
        for (int key = 0; key < key_count; ++key) {
          // Threads walk the keys in different orders, so each key is contended.
          const int which = (key + t) % key_count;
          seen[t][which] = jit.image(scale_program, scale_options(which + 2)).get();
        }
    });
  for (std::thread& thread : threads) thread.join();
  return seen;
}

}  // namespace

TEST_CASE("8 threads asking for 3 specializations at once compile each exactly once") {
  JitOptions options;
  options.cache_directory.clear();
  Jit jit(options);
  const auto seen = hammer(jit);
  for (int key = 0; key < key_count; ++key)
    for (int t = 0; t < thread_count; ++t) CHECK(seen[t][key] == seen[0][key]);
  CHECK(seen[0][0] != seen[0][1]);
  const JitStats stats = jit.stats();
  CHECK(stats.compiles == key_count);
  CHECK(stats.disk_hits == 0);
  CHECK(stats.image_memory_hits == thread_count * key_count * rounds - key_count);
}

TEST_CASE("threads of a second Jit on the same directory read each image from disk once") {
  ptxrt::testing::ScratchDirectory directory;
  {
    Jit first = jit_with_cache(directory.path());
    hammer(first);
    CHECK(first.stats().compiles == key_count);
    CHECK(first.disk_cache()->stats().stores == key_count);
  }
  Jit second = jit_with_cache(directory.path());
  const auto seen = hammer(second);
  const JitStats stats = second.stats();
  CHECK(stats.compiles == 0);
  CHECK(stats.disk_hits == key_count);
  CHECK(second.disk_cache()->stats().hits == key_count);
  CHECK(seen[thread_count - 1][2]->defines == std::vector<Define>{{"SCALE", "4.0f"}});
}

TEST_CASE("Jit::library without a target arch is refused before anything is compiled") {
  JitOptions options;
  options.cache_directory.clear();
  Jit jit(options);
  CHECK_THROWS_WITH_AS(jit.library(scale_program, CompileOptions{}),
                       doctest::Contains("Jit::library needs a target arch for scale.cu"), Error);
  CHECK(jit.stats().compiles == 0);
}
