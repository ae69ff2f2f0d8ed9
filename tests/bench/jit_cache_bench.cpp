// The JIT's speeds: a cold NVRTC compile, a disk-cache hit in a new process, and two in-memory
// hits: the same Program again (a lookup by its identity) and a new Program of the same text (its
// cache key hashed, then looked up); with a GPU also the module fetch (CUBIN load included) in a
// new process.
// Prints times and ratios; `--check` exits non-zero unless the second process hit the disk
// cache (the CTest run), since timings are reported, never asserted.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "process.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/jit.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

ptxrt::Jit make_jit(const std::filesystem::path& directory) {
  ptxrt::JitOptions options;
  options.cache_directory = directory;
  return ptxrt::Jit(std::move(options));
}

const ptxrt::CompileOptions options{.defines = {{"TILE_WIDTH", "16"}},
                                    .target = {.arch = "sm_90"}};

// In a fresh process: one fetch from the disk cache (and, with a GPU, the module load).
int child(const std::filesystem::path& directory) {
  const ptxrt::Program program = ptxrt::apps::builtin_program("matmul_tiled");
  ptxrt::Jit jit = make_jit(directory);
  auto start = Clock::now();
  auto image = jit.image(program, options);
  const double image_ms = ms_since(start);
  double module_ms = -1;
  if (ptxrt::driver_status().usable) {
    const ptxrt::Context context = ptxrt::Context::primary(0);
    ptxrt::Jit gpu_jit = make_jit(directory);
    start = Clock::now();
    gpu_jit.module(program, {.defines = options.defines}, context).kernel("matmul_tiled");
    module_ms = ms_since(start);
  }
  std::printf("%.4f %.4f %llu\n", image_ms, module_ms,
              static_cast<unsigned long long>(jit.stats().compiles));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return child(argv[2]);
  const bool check_only = argc == 2 && std::strcmp(argv[1], "--check") == 0;
  const auto directory =
      std::filesystem::temp_directory_path() / ("ptxrt-jit-bench-" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  const ptxrt::Program program = ptxrt::apps::builtin_program("matmul_tiled");

  ptxrt::Jit jit = make_jit(directory);
  auto start = Clock::now();
  jit.image(program, options);
  const double cold_ms = ms_since(start);

  constexpr int hits = 100000;
  start = Clock::now();
  for (int i = 0; i < hits; ++i) jit.image(program, options);
  const double memory_us = ms_since(start) * 1000.0 / hits;

  // Each a new identity with the same text: each call hashes the source and its headers.
  constexpr int new_programs = 1000;
  std::vector<ptxrt::Program> same_text;
  // (apps::builtin_program hands out copies of one Program: build each from the text instead.)
  for (int i = 0; i < new_programs; ++i) {
    ptxrt::Program fresh = ptxrt::Program::from_string(program.source(), program.name());
    for (const auto& [include_name, content] : program.headers()) fresh.add_header(include_name, content);
    same_text.push_back(std::move(fresh));
  }
  start = Clock::now();
  for (const ptxrt::Program& fresh : same_text) jit.image(fresh, options);
  const double keyed_us = ms_since(start) * 1000.0 / new_programs;

  const auto result = ptxrt::testing::run_process(
      {"/proc/self/exe", "--child", directory.string()});
  double disk_ms = 0, module_ms = 0;
  unsigned long long child_compiles = 1;
  std::sscanf(result.output.c_str(), "%lf %lf %llu", &disk_ms, &module_ms, &child_compiles);
  std::filesystem::remove_all(directory);

  std::printf("jit cache (matmul_tiled TILE_WIDTH=16, sm_90 CUBIN)\n");
  std::printf("  cold NVRTC compile:           %9.3f ms\n", cold_ms);
  std::printf("  disk hit, new process:        %9.3f ms  (%.0fx faster than cold)\n", disk_ms,
              cold_ms / disk_ms);
  if (module_ms >= 0)
    std::printf("  module fetch, new process:    %9.3f ms  (disk hit + CUBIN load; %.0fx faster)\n",
                module_ms, cold_ms / module_ms);
  std::printf("  image memory hit, same Program: %7.3f us  (identity lookup)\n", memory_us);
  std::printf("  image memory hit, new Program:  %7.3f us  (cache key hashed + lookup)\n",
              keyed_us);
  if (ptxrt::driver_status().usable) {
    const ptxrt::Context context = ptxrt::Context::primary(0);
    const ptxrt::CompileOptions for_device{.defines = options.defines};
    jit.module(program, for_device, context);
    start = Clock::now();
    for (int i = 0; i < hits; ++i) jit.module(program, for_device, context);
    std::printf("  module fetch, memory hit:     %9.3f us\n", ms_since(start) * 1000.0 / hits);
  }
  if (result.exit_code != 0 || child_compiles != 0) {
    std::printf("FAIL: the second process compiled again (exit %d, %llu compiles): %s\n",
                result.exit_code, child_compiles, result.output.c_str());
    return 1;
  }
  if (check_only) std::printf("PASS: the second process hit the disk cache\n");
  return 0;
}
