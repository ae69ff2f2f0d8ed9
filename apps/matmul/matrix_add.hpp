// matadd: c = a + b for rows×cols matrices (ptx_src/matrix_add.cu), block BLOCK_X×BLOCK_Y, one
// element per thread. Rate: GB/s of 12 bytes per element.
#pragma once

#include <cstdint>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

struct MatrixAddPlan {
  int rows = 0;
  int cols = 0;
  std::size_t elements = 0;
  Program program;
  std::vector<Define> defines;  // BLOCK_X, BLOCK_Y
  Dim3 grid;
  Dim3 block;
};

// Checks the sizes (each an int >= 1, rows*cols*12 bytes in size_t) and the defines; needs no GPU.
MatrixAddPlan plan_matrix_add(std::int64_t rows, std::int64_t cols,
                              std::vector<Define> defines = {});

Run run_matrix_add(Jit& jit, const Context& context, const MatrixAddPlan& plan,
                   const RunOptions& options);

}  // namespace ptxrt::apps
