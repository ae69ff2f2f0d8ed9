// The Jit's image caches without a GPU: single flight in memory and on disk when many threads ask
// at once. CI also runs these under ThreadSanitizer (scripts/test.sh --sanitizers).
#include <doctest/doctest.h>

#include <barrier>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"

using namespace ptxrt;

namespace {

// A tiny kernel whose SCALE define makes the specializations (one image key each).
const std::string scale_source = R"(
extern "C" __global__ void scale(float* values, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] *= SCALE;
}
)";
const Program scale_program = Program::from_string(scale_source, "scale.cu");

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

Jit memory_only_jit() { return jit_with_cache({}); }

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
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

TEST_CASE("precompile stores under the key a later run looks up, and says whether it compiled") {
  ptxrt::testing::ScratchDirectory directory;
  const CompileOptions options = scale_options(2);
  {
    Jit warming = jit_with_cache(directory.path());
    const PrecompiledImage first = warming.precompile(scale_program, options);
    CHECK(first.compiled);
    CHECK(first.key == cache_key(scale_program, options));
    REQUIRE(first.image != nullptr);
    CHECK(first.image->key == first.key);
    const PrecompiledImage again = warming.precompile(scale_program, options);
    CHECK_FALSE(again.compiled);  // from memory
    CHECK(again.image == first.image);
  }
  Jit later = jit_with_cache(directory.path());
  const PrecompiledImage from_disk = later.precompile(scale_program, options);
  CHECK_FALSE(from_disk.compiled);
  CHECK(from_disk.key == cache_key(scale_program, options));
  CHECK(later.stats().compiles == 0);
  CHECK(later.stats().disk_hits == 1);
}

TEST_CASE("Jit::library without a target arch is refused before anything is compiled") {
  JitOptions options;
  options.cache_directory.clear();
  Jit jit(options);
  CHECK_THROWS_WITH_AS(jit.library(scale_program, CompileOptions{}),
                       doctest::Contains("Jit::library needs a target arch for scale.cu"), Error);
  CHECK(jit.stats().compiles == 0);
}

TEST_CASE(
    "image() asked again with the same Program or a copy returns its image without compiling") {
  Jit jit = memory_only_jit();
  const auto first = jit.image(scale_program, scale_options(2));
  const Program copy = scale_program;
  CHECK(jit.image(scale_program, scale_options(2)) == first);
  CHECK(jit.image(copy, scale_options(2)) == first);
  // A new Program of the same text is found by its cache key: the same image, no compile.
  CHECK(jit.image(Program::from_string(scale_source, "scale.cu"), scale_options(2)) == first);
  const JitStats stats = jit.stats();
  CHECK(stats.compiles == 1);
  CHECK(stats.image_memory_hits == 3);
}

TEST_CASE("image() never answers a changed source, define, option or driver version from memory") {
  Jit jit = memory_only_jit();
  const auto base = jit.image(scale_program, scale_options(2));
  const auto keys_differ = [&](const std::shared_ptr<const Image>& other) {
    return other != base && other->key != base->key;
  };
  CHECK(keys_differ(
      jit.image(Program::from_string(scale_source + "// edited\n", "scale.cu"), scale_options(2))));
  CHECK(keys_differ(jit.image(scale_program, scale_options(3))));
  CompileOptions line_info = scale_options(2);
  line_info.extra_options = {"-lineinfo"};
  CHECK(keys_differ(jit.image(scale_program, line_info)));
  CompileOptions ptx = scale_options(2);
  ptx.target = {"compute_90", ImageFormat::ptx, {}};
  const auto ptx_for_13000 = jit.image(scale_program, ptx, 13000);
  CHECK(keys_differ(ptx_for_13000));
  CHECK(jit.image(scale_program, ptx, 13010)->key != ptx_for_13000->key);
  CHECK(jit.stats().compiles == 6);
}

TEST_CASE("image() compiles a Program again once add_header has changed what it includes") {
  Jit jit = memory_only_jit();
  Program program = Program::from_string("#include \"factor.cuh\"\n" + scale_source, "scale.cu");
  program.add_header("factor.cuh", "#define SCALE 2.0f\n");
  const auto before = jit.image(program, CompileOptions{.target = {"sm_90"}});
  const Program unedited = program;
  program.add_header("factor.cuh", "#define SCALE 3.0f\n");
  CHECK(program.identity() != unedited.identity());
  const auto after = jit.image(program, CompileOptions{.target = {"sm_90"}});
  CHECK(after != before);
  CHECK(after->key != before->key);
  CHECK(jit.image(unedited, CompileOptions{.target = {"sm_90"}}) == before);
  CHECK(jit.stats().compiles == 2);
}

// The price of the lookup by identity, as Program::identity() documents: a header file edited on
// disk reaches the Jit through a new Program.
TEST_CASE("image() reads a Program's included files once, a new Program sees an edited header") {
  ptxrt::testing::ScratchDirectory directory;
  write_file(directory.path() / "factor.cuh", "#define SCALE 2.0f\n");
  write_file(directory.path() / "scale.cu", "#include \"factor.cuh\"\n" + scale_source);
  const Program program = Program::from_file(directory.path() / "scale.cu");
  const CompileOptions options{.target = {"sm_90"}};
  Jit jit = memory_only_jit();
  const auto before = jit.image(program, options);
  write_file(directory.path() / "factor.cuh", "#define SCALE 3.0f\n");
  CHECK(jit.image(program, options) == before);
  const auto after = jit.image(Program::from_file(directory.path() / "scale.cu"), options);
  CHECK(after->key != before->key);
  CHECK(jit.stats().compiles == 2);
}
