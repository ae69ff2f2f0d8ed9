#pragma once

__device__ inline int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline float times(float factor, float value) { return factor * value; }
