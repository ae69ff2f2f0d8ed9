// matmul: C = A·B, fp32, row-major, A m×k, B k×n (ptx_src/matmul_naive.cu with BLOCK_SIZE, or
// ptx_src/matmul_tiled.cu with TILE_WIDTH). Rate: GFLOP/s of 2·m·n·k. Verified against the
// double-accumulating CPU reference with a relative error (to max|C|) of at most 1e-4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

enum class MatmulVariant { naive, tiled };
// "naive" | "tiled"; Error(invalid_argument) listing them otherwise.
MatmulVariant parse_matmul_variant(std::string_view name);
std::string_view to_string(MatmulVariant variant);

inline constexpr double matmul_tolerance = 1e-4;

// The sizes of an m×k by k×n product as a kernel's ints: each >= 1, and m*k, k*n and m*n floats
// fitting in size_t; otherwise Error(invalid_argument) naming "<program> m" (or the product).
struct ProductSizes {
  int m = 0, n = 0, k = 0;
};
ProductSizes checked_product_sizes(std::string_view program, std::int64_t m, std::int64_t n,
                                   std::int64_t k);

struct MatmulPlan {
  int m = 0, n = 0, k = 0;
  MatmulVariant variant = MatmulVariant::tiled;
  Program program;
  std::string entry;            // matmul_naive | matmul_tiled
  std::vector<Define> defines;  // BLOCK_SIZE | TILE_WIDTH
  Dim3 grid;
  Dim3 block;
};

// Checks the sizes (ints >= 1; m*k, k*n and m*n floats fit in size_t) and the defines; needs no
// GPU.
MatmulPlan plan_matmul(std::int64_t m, std::int64_t n, std::int64_t k, MatmulVariant variant,
                       std::vector<Define> defines = {});

// The timed part alone, on buffers the caller owns (the benchmark shares them with cuBLAS); c is
// poisoned before every run and holds the last run's output. Not verified.
Run time_matmul(Jit& jit, const Context& context, const MatmulPlan& plan,
                const DeviceBuffer<float>& a, const DeviceBuffer<float>& b, DeviceBuffer<float>& c,
                int repeats);

// A m×k and B k×n random from the seed, on the host and the device, and C m×n on the device.
struct MatmulOperands {
  std::size_t m = 0, n = 0, k = 0;
  std::vector<float> a, b;
  DeviceBuffer<float> device_a, device_b, device_c;
};
MatmulOperands make_matmul_operands(const Context& context, int m, int n, int k,
                                    std::uint64_t seed);

// Random inputs from the seed, timed, and verified against apps::matmul when asked.
Run run_matmul(Jit& jit, const Context& context, const MatmulPlan& plan, const RunOptions& options);

}  // namespace ptxrt::apps
