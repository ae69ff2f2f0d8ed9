// reduce: the sum or the argmin of n floats (ptx_src/reduce.cu), in passes: each launch reduces
// its input to one partial per block, and the next launch reduces the partials, until one is
// left. The cooperative sum does it in one cooperative launch of as many blocks as are resident
// at once (occupancy x SMs), the blocks meeting at a grid-wide barrier: its passes are the two
// that launch holds, (n -> G) and (G -> 1). Rate: GB/s of 4 bytes per input element (the
// partials are negligible).
//
// Verification: argmin exactly (value bits and index). The sum against the double sum with the
// error measured relative to sum|x| (random signs make the sum itself near zero), within the
// kernel file's worst-case bound summed over the passes, plus the final rounding to float:
//   (1 + Σ_passes (ceil(count / (grid·BLOCK_SIZE)) + log2(grid·BLOCK_SIZE))) · 2^-24.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

enum class ReduceVariant { sum, argmin, cooperative };
// "sum" | "argmin" | "cooperative"; Error(invalid_argument) listing them otherwise.
ReduceVariant parse_reduce_variant(std::string_view name);
std::string_view to_string(ReduceVariant variant);

struct ReducePass {
  std::uint64_t count = 0;  // elements read
  unsigned grid = 0;        // blocks, i.e. partials written
  bool operator==(const ReducePass&) const = default;
};

// The passes that take n elements to one: grid = min(ceil(count / block_size), max_grid).
std::vector<ReducePass> reduction_passes(std::uint64_t n, unsigned block_size,
                                         unsigned max_grid = 1024);

// The bound above for these passes, relative to sum|x|.
double sum_error_bound(const std::vector<ReducePass>& passes, unsigned block_size);

struct ReducePlan {
  std::size_t n = 0;
  ReduceVariant variant = ReduceVariant::sum;
  Program program;
  std::vector<Define> defines;  // BLOCK_SIZE
  unsigned block_size = 0;
  // The multi-pass plan of sum and argmin; the cooperative sum's two passes depend on the
  // device's occupancy and are made at run time.
  std::vector<ReducePass> passes;
};

ReducePlan plan_reduce(std::int64_t n, ReduceVariant variant, std::vector<Define> defines = {});

Run run_reduce(Jit& jit, const Context& context, const ReducePlan& plan, const RunOptions& options);

}  // namespace ptxrt::apps
