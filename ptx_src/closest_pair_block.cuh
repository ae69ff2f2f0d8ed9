// Closest pair: block-wide steps shared by closest_pair.cu, closest_pair_grid.cu and
// closest_pair_slab.cu (device only).
#pragma once

#include "closest_pair_math.cuh"
#include "closest_pair_morton.cuh"

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

// The best of `count` per-block minima, which one block folds; every thread gets it (and must
// call it: it has barriers).
template <int THREADS>
__device__ __forceinline__ PairMinimum best_of_minima(const PairMinimum* partial, long long count) {
  PairMinimum mine = no_pair_yet(infinite_distance());
  for (long long k = threadIdx.x; k < count; k += THREADS) merge_minimum(mine, partial[k]);
  return block_minimum<THREADS>(mine);
}

// One block folds `count` per-block minima into *total, which accumulates across launches.
template <int THREADS>
__device__ __forceinline__ void reduce_minima_into(const PairMinimum* partial, long long count,
                                                   PairMinimum* total) {
  const PairMinimum block = best_of_minima<THREADS>(partial, count);
  if (threadIdx.x == 0) merge_minimum(*total, block);
}

// A box of points as order-preserving words (ordered_word); empty while low > high.
struct BoxWords {
  unsigned low_x, low_y, high_x, high_y;
};

__device__ __forceinline__ BoxWords empty_box() {
  return BoxWords{0xffffffffu, 0xffffffffu, 0u, 0u};
}

__device__ __forceinline__ BoxWords box_with(const BoxWords& box, float x, float y) {
  const unsigned x_word = ordered_word(__float_as_uint(x));
  const unsigned y_word = ordered_word(__float_as_uint(y));
  return BoxWords{min(box.low_x, x_word), min(box.low_y, y_word), max(box.high_x, x_word),
                  max(box.high_y, y_word)};
}

__device__ __forceinline__ BoxWords warp_box(BoxWords box) {
  for (int offset = 16; offset > 0; offset /= 2) {
    box.low_x = min(box.low_x, __shfl_xor_sync(0xffffffffu, box.low_x, offset));
    box.low_y = min(box.low_y, __shfl_xor_sync(0xffffffffu, box.low_y, offset));
    box.high_x = max(box.high_x, __shfl_xor_sync(0xffffffffu, box.high_x, offset));
    box.high_y = max(box.high_y, __shfl_xor_sync(0xffffffffu, box.high_y, offset));
  }
  return box;
}

// The block's box, in thread 0 (the others get their warp's or less). Every thread of the block
// must call it (it has a barrier). THREADS is the block size, a multiple of 32.
template <int THREADS>
__device__ __forceinline__ BoxWords block_box(BoxWords box) {
  __shared__ BoxWords warp_boxes[THREADS / 32];
  box = warp_box(box);
  if (threadIdx.x % 32 == 0) warp_boxes[threadIdx.x / 32] = box;
  __syncthreads();
  if (threadIdx.x < 32) {
    box = threadIdx.x < THREADS / 32 ? warp_boxes[threadIdx.x] : empty_box();
    box = warp_box(box);
  }
  return box;
}

// Folds every thread's box into *bounds: one set of atomics per block. Every thread of the block
// must call it (it has a barrier). THREADS is the block size, a multiple of 32.
template <int THREADS>
__device__ __forceinline__ void fold_box_into(BoxWords box, PointBounds* bounds) {
  box = block_box<THREADS>(box);
  if (threadIdx.x == 0) {
    atomicMin(&bounds->low_x, box.low_x);
    atomicMin(&bounds->low_y, box.low_y);
    atomicMax(&bounds->high_x, box.high_x);
    atomicMax(&bounds->high_y, box.high_y);
  }
}
