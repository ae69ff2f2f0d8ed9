// What the SGEMM family's files share inside the library: its program, and the shallowest slice
// of K a split may leave (below it the fill of each block and the reduction dominate).
#pragma once

#include "ptxrt/core/program.hpp"

namespace ptxrt {

// ptx_src/sgemm.cu, embedded in ptxrt::blas, as one Program (one identity).
const Program& sgemm_program();

inline constexpr int sgemm_min_slice_depth = 256;

}  // namespace ptxrt
