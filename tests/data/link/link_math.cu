// Definitions link_main.cu uses across the file boundary. `gain` and `bias` are set by name after
// loading; `launched_threads` is read back.
#include "link_shared.cuh"

__device__ float gain = 1.0f;
__device__ int launched_threads = 0;
__constant__ float bias[4];

__device__ float scale_value(float value) { return gain * value; }

template <typename T>
__device__ T clamp_to(T value, T low, T high) {
  return value < low ? low : (value > high ? high : value);
}
template __device__ float clamp_to<float>(float, float, float);
