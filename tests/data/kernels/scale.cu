// Test kernel: y[i] = factor * x[i], BLOCK threads per block, one element per thread.
// ptxrt: define BLOCK in {64, 128, 256} default 128
// ptxrt: entry scale one thread per element, BLOCK threads per block, ceil(n / BLOCK) blocks
#include "scale_helpers.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) scale(const float* x, float* y, float factor,
                                                         int n) {
  const int i = global_index();
  if (i < n) y[i] = times(factor, x[i]);
}
