// The block-wide sum that reduce.cu and simpson.cu share (device only): sequential addressing in
// shared memory (the active threads stay contiguous, so whole warps retire and shared reads are
// conflict-free) down to 64 values, then warp shuffles for the last 32 lanes, which need neither
// shared memory nor barriers. The order of the additions depends on THREADS alone, so a launch
// configuration gives the same bits every time.
#pragma once

// Every lane of the warp takes part in a shuffle.
#define FULL_WARP 0xffffffffu

// The sum of `value` over the block's THREADS threads, returned to thread 0 (the other threads
// get 0). Every thread of the block must call it: it has barriers.
template <int THREADS, class T>
__device__ __forceinline__ T block_sum(T value) {
  static_assert(THREADS >= 64 && (THREADS & (THREADS - 1)) == 0,
                "THREADS must be a power of two of at least 64: the shared tree halves down to 64");
  __shared__ T sums[THREADS];
  const int tid = threadIdx.x;
  sums[tid] = value;
  __syncthreads();

  for (int half = THREADS / 2; half > 32; half /= 2) {
    if (tid < half) sums[tid] += sums[tid + half];
    __syncthreads();
  }
  if (tid >= 32) return T(0);
  T sum = sums[tid] + sums[tid + 32];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(FULL_WARP, sum, offset);
  return tid == 0 ? sum : T(0);
}
