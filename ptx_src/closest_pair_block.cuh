// Closest pair: block-wide steps shared by closest_pair.cu and closest_pair_grid.cu (device only).
#pragma once

#include "closest_pair_math.cuh"

// The block's best pair. Every thread of the block must call it (it has barriers); every thread
// gets the result. THREADS is the block size, a power of two.
template <int THREADS>
__device__ __forceinline__ PairMinimum block_minimum(const PairMinimum& mine) {
  __shared__ PairMinimum minima[THREADS];
  minima[threadIdx.x] = mine;
  __syncthreads();
  // Sequential addressing: the active threads stay contiguous, as in the study's mindistreduction.
  for (int half = THREADS / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      merge_minimum(minima[threadIdx.x], minima[threadIdx.x + half]);
    __syncthreads();
  }
  const PairMinimum result = minima[0];
  // A second call reuses the array; nobody may overwrite minima[0] before all have read it.
  __syncthreads();
  return result;
}

// One block folds `count` per-block minima into *total, which accumulates across launches.
template <int THREADS>
__device__ __forceinline__ void reduce_minima_into(const PairMinimum* partial, long long count,
                                                   PairMinimum* total) {
  PairMinimum mine = no_pair_yet(infinite_distance());
  for (long long k = threadIdx.x; k < count; k += THREADS) merge_minimum(mine, partial[k]);
  const PairMinimum block = block_minimum<THREADS>(mine);
  if (threadIdx.x == 0) merge_minimum(*total, block);
}
