// Cold compiles with and without NVRTC's precompiled headers, and, with a GPU, the run time of
// the two-file program (tests/data/link) linked with and without LTO.
//
//   ptxrt_compile_bench [--rounds N] [--check]
//
// "Cold" is NVRTC from scratch (no ptxrt cache, CUDA_CACHE_DISABLE=1); "warm PCH" compiles the
// same source again once NVRTC has saved the parse of its headers. Prints medians and ratios
// against the plain compile measured in the same run; --check (the CTest run) times one round
// and exits non-zero only when a path does not work, never on a timing.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/ptxrt.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char* const cooperative_groups_source = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void warp_sums(const float* in, float* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float sum = cg::reduce(warp, i < n ? in[i] : 0.0f, cg::plus<float>());
  if (warp.thread_rank() == 0) out[i / 32] = sum;
}
)";

const char* const block_reduce_source = R"(#include <cub/block/block_reduce.cuh>
extern "C" __global__ void block_sums(const float* in, float* out, int n) {
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage storage;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float sum = Reduce(storage).Sum(i < n ? in[i] : 0.0f);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
)";

double compile_ms(const ptxrt::Program& program, const ptxrt::CompileOptions& options) {
  const auto start = Clock::now();
  ptxrt::compile(program, options);
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median_compile_ms(const ptxrt::Program& program, const ptxrt::CompileOptions& options,
                         int rounds) {
  std::vector<double> samples;
  for (int round = 0; round < rounds; ++round) samples.push_back(compile_ms(program, options));
  return ptxrt::apps::median(samples);
}

// Plain and warm-PCH medians of one kernel; false when the PCH folder stayed empty.
bool bench_precompiled_headers(const char* label, const ptxrt::Program& program, int rounds,
                               const fs::path& folder) {
  ptxrt::CompileOptions plain;
  plain.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
  if (program.manifest().find_define("TILE_WIDTH")) plain.defines = {{"TILE_WIDTH", "16"}};
  ptxrt::CompileOptions pch = plain;
  pch.precompiled_header_directory = folder;
  // The first compiles may size NVRTC's PCH heap and create the PCH.
  const double first = compile_ms(program, pch);
  compile_ms(program, pch);
  const double plain_ms = median_compile_ms(program, plain, rounds);
  const double pch_ms = median_compile_ms(program, pch, rounds);
  std::printf("%-28s %10.1f %14.1f %12.1f %8.2fx\n", label, plain_ms, first, pch_ms,
              plain_ms / pch_ms);
  return !fs::is_empty(folder);
}

// The two-file program, LTO against not, on the GPU: median kernel time over `rounds`.
void bench_lto(int rounds) {
  const ptxrt::Context& context = ptxrt::Context::primary(0);
  const fs::path data = fs::path(PTXRT_SOURCE_DIR) / "tests/data/link";
  const ptxrt::Program program =
      ptxrt::Program::from_files({data / "link_main.cu", data / "link_math.cu"});
  const int n = 1 << 24;
  ptxrt::DeviceBuffer<float> x(context, static_cast<std::size_t>(n));
  ptxrt::DeviceBuffer<float> y(context, static_cast<std::size_t>(n));
  x.memory().fill_words(0x3f800000u);  // 1.0f
  double plain_ms = 0;
  for (const bool lto : {false, true}) {
    ptxrt::CompileOptions options;
    options.lto = lto;
    const ptxrt::Kernel kernel = ptxrt::Jit::shared().kernel(
        program, ptxrt::Jit::target_for(options, context), context, "affine_clamp");
    const double ms = ptxrt::apps::median_launch_ms(
        context, rounds, [] {},
        [&] {
          kernel.launch({.grid = ptxrt::blocks_for(n, 256), .block = 256}, x, y, n, -2.0f, 3.0f);
        });
    if (!lto) plain_ms = ms;
    std::printf("two-file program, %-8s %8.3f ms  %6.2fx\n", lto ? "LTO" : "no LTO", ms,
                plain_ms / ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
      rounds = 1;
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: ptxrt_compile_bench [--rounds N] [--check]\n");
      return 2;
    }
  }
  setenv("CUDA_CACHE_DISABLE", "1", 1);  // every compile runs ptxas, as a cold one does
  char pattern[] = "/tmp/ptxrt-compile-bench-XXXXXX";
  if (!::mkdtemp(pattern)) return 1;
  const fs::path scratch = pattern;
  std::printf("cold compile for sm_90, median of %d (ms)\n", rounds);
  std::printf("%-28s %10s %14s %12s %9s\n", "kernel", "plain", "creating PCH", "warm PCH",
              "speed-up");
  bool created = true;
  created &= bench_precompiled_headers("matmul_tiled", ptxrt::apps::builtin_program("matmul_tiled"),
                                       rounds, scratch / "pch-matmul");
  created &= bench_precompiled_headers(
      "cooperative_groups reduce",
      ptxrt::Program::from_string(cooperative_groups_source, "warp_sums.cu"), rounds,
      scratch / "pch-cg");
  // The check takes one heavy header through the PCH path; CUB goes the same way, seconds more.
  if (!check)
    created &= bench_precompiled_headers(
        "CUB BlockReduce", ptxrt::Program::from_string(block_reduce_source, "block_sums.cu"),
        rounds, scratch / "pch-cub");
  fs::remove_all(scratch);
  if (ptxrt::driver_status().usable)
    bench_lto(check ? 3 : 50);
  else
    std::printf("no usable GPU: the LTO run-time comparison needs one\n");
  if (check && !created) {
    std::fprintf(stderr, "a precompiled-header folder stayed empty\n");
    return 1;
  }
  return 0;
}
