// vecadd: c = a + b over n floats (ptx_src/vector_add.cu), grid-stride with 256-thread blocks.
// Rate: GB/s of the minimal traffic, 12 bytes per element (two reads, one write).
#pragma once

#include <cstdint>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

struct VectorAddPlan {
  std::size_t n = 0;
  Program program;
  std::vector<Define> defines;
};

// Checks n (>= 1, bytes fit in size_t) and the defines; needs no GPU.
VectorAddPlan plan_vector_add(std::int64_t n, std::vector<Define> defines = {});

Run run_vector_add(Jit& jit, const Context& context, const VectorAddPlan& plan,
                   const RunOptions& options);

}  // namespace ptxrt::apps
