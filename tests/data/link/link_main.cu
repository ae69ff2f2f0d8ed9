// The entry point of a program of two files (link_math.cu defines what it calls).
// ptxrt: entry affine_clamp "y[i] = clamp(gain * x[i] + bias[i % 4], low, high), one thread per
// element; counts its threads in launched_threads"
#include "link_shared.cuh"

extern "C" __global__ void affine_clamp(const float* x, float* y, int n, float low, float high) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = clamp_to<float>(scale_value(x[i]) + bias[i % 4], low, high);
  atomicAdd(&launched_threads, 1);
}
