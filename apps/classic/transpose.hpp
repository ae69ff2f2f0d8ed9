// transpose: out = in^T, in rows×cols row-major (ptx_src/transpose.cu: naive, shared or padded;
// TILE_DIM×BLOCK_ROWS threads per TILE_DIM² tile). Rate: GB/s of 8 bytes per element (read once,
// written once). Exact.
#pragma once

#include <cstdint>
#include <string_view>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

enum class TransposeVariant { naive, shared, padded };
// "naive" | "shared" | "padded"; Error(invalid_argument) listing them otherwise.
TransposeVariant parse_transpose_variant(std::string_view name);
std::string_view to_string(TransposeVariant variant);

struct TransposePlan {
  int rows = 0;
  int cols = 0;
  std::size_t elements = 0;
  TransposeVariant variant = TransposeVariant::padded;
  Program program;
  std::string entry;            // transpose_naive | transpose_shared | transpose_padded
  std::vector<Define> defines;  // TILE_DIM, BLOCK_ROWS (BLOCK_ROWS must divide TILE_DIM)
  Dim3 grid;
  Dim3 block;
};

// Checks the sizes and the defines, including that BLOCK_ROWS divides TILE_DIM (which the kernel
// file requires with #error); needs no GPU.
TransposePlan plan_transpose(std::int64_t rows, std::int64_t cols, TransposeVariant variant,
                             std::vector<Define> defines = {});

Run run_transpose(Jit& jit, const Context& context, const TransposePlan& plan,
                  const RunOptions& options);

}  // namespace ptxrt::apps
