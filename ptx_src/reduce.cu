// Multi-pass reductions of n floats: each block reduces a grid-stride slice of the input to one
// partial result; the host launches again over the partials (grid=(1) for the last pass) until
// one is left. Within a block: sequential addressing in shared memory down to 64 values, then warp
// shuffles for the last 32 lanes (block_sum.cuh for the sum, the same tree here for the argmin).
//
// reduce_sum: each thread accumulates its slice in float, then the tree adds the per-thread sums.
// Its error grows with the slice length m = n / (grid·BLOCK_SIZE) plus log2(grid·BLOCK_SIZE)
// tree levels: |error| <= (m + log2(grid·BLOCK_SIZE)) · 2^-24 · sum|x_i|, and in practice about
// sqrt of that (rounding errors of random sign). The result depends on the grid size, not on
// scheduling: the same launch configuration gives the same bits every time.
//
// reduce_sum_cooperative: the whole sum in one launch. Each block sums its grid-stride slice as
// reduce_sum does, a grid-wide barrier (cooperative_groups::this_grid().sync(), which needs a
// cooperative launch: every block resident at once) waits for every partial, and block 0 folds
// them as reduce_sum with grid=(1) would. So its result is bit for bit that of the two passes
// reduce_sum(grid=G), reduce_sum(grid=1), with the same error bound, and it saves the second
// launch and the partials' round trip through the host's launch queue.
//
// reduce_argmin: the smallest value and its index. Order: any number < NaN (NaN is treated as
// larger than everything; an all-NaN input gives its first NaN), ties (including -0 == +0 and
// NaN against NaN) go to the smallest index. That is a total order on (value, index) pairs, so
// the result is exact and independent of the launch shape: it equals the CPU reference bit for
// bit. A block with no elements yields (NaN, LLONG_MAX), which loses to every real element; so
// n == 0 gives (NaN, 9223372036854775807). Pass 1, which carries no indices, reads 16 bytes per
// load (two loads in flight per thread) and compares one unsigned word per element (argmin_word)
// instead of the (value, index) pair: a thread meets its elements in index order, so "less"
// alone keeps the first of equal ones. With the pair comparison and 4-byte loads it read at 0.965x
// the copy bandwidth against the sum's 1.00x (docs/perf-notes.md).
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {64, 128, 256, 512, 1024} default 256
// ptxrt: entry reduce_sum grid=(G) block=(BLOCK_SIZE) — partial[blockIdx.x] = sum of a grid-stride slice of in[0..n); any G >= 1 (e.g. min(ceil(n/BLOCK_SIZE), 1024)); call again on the G partials with grid=(1)
// ptxrt: entry reduce_sum_cooperative grid=(G) block=(BLOCK_SIZE) cooperative — *out = sum of in[0..n) in one launch; G at most the co-resident blocks (occupancy x SMs); partial holds G floats
// ptxrt: entry reduce_argmin grid=(G) block=(BLOCK_SIZE) — (out_value, out_index)[blockIdx.x] = min of a grid-stride slice, NaN last, ties to the smallest index; any G >= 1; pass 2 (grid=(1)) reads pass 1's values and indices
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (64, 128, 256, 512 or 1024)"
#endif
#if BLOCK_SIZE < 64 || BLOCK_SIZE > 1024 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two from 64 to 1024 (the shared tree halves down to 64)"
#endif

#include <cooperative_groups.h>

#include "block_sum.cuh"

#define NO_INDEX 9223372036854775807ll

// This thread's share of the grid-stride slices of in[0..n): the order both sums add in.
__device__ __forceinline__ float thread_sum(const float* __restrict__ in, long long n) {
  float sum = 0.0f;
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  for (long long i = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x; i < n;
       i += stride) {
    sum += in[i];
  }
  return sum;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    reduce_sum(const float* __restrict__ in, float* __restrict__ partial, long long n) {
  const float total = block_sum<BLOCK_SIZE>(thread_sum(in, n));
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// `partial` is written and then, after the grid barrier, read by block 0: not __restrict__, so
// that the compiler never reads it through the read-only cache.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    reduce_sum_cooperative(const float* __restrict__ in, float* partial, float* __restrict__ out,
                           long long n) {
  const float total = block_sum<BLOCK_SIZE>(thread_sum(in, n));
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
  cooperative_groups::this_grid().sync();
  if (blockIdx.x != 0) return;
  // reduce_sum's loop with one block over the G partials.
  float folded = 0.0f;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += BLOCK_SIZE) folded += partial[i];
  const float sum = block_sum<BLOCK_SIZE>(folded);
  if (threadIdx.x == 0) *out = sum;
}

// True when (value, index) comes before (other_value, other_index) in the argmin order above.
__device__ __forceinline__ bool precedes(float value, long long index, float other_value,
                                         long long other_index) {
  const bool is_nan = value != value;
  const bool other_is_nan = other_value != other_value;
  if (is_nan != other_is_nan) return other_is_nan;
  if (!is_nan && value != other_value) return value < other_value;
  return index < other_index;
}

// The argmin order as one unsigned word per value: floats as numbers (-0 as +0), every NaN after
// them, and the identity after every NaN.
#define NO_WORD 0xffffffffu
#define NAN_WORD 0xfffffffeu

__device__ __forceinline__ unsigned argmin_word(float value) {
  if (value != value) return NAN_WORD;
  unsigned bits = __float_as_uint(value);
  if (bits == 0x80000000u) bits = 0u;
  return bits ^ ((bits >> 31) != 0 ? 0xffffffffu : 0x80000000u);
}

__device__ __forceinline__ void fold_element(float value, long long index, float& best,
                                             long long& best_index, unsigned& best_word) {
  const unsigned word = argmin_word(value);
  if (word < best_word) {
    best_word = word;
    best = value;
    best_index = index;
  }
}

__device__ __forceinline__ void fold_quad(float4 values, long long index, float& best,
                                          long long& best_index, unsigned& best_word) {
  fold_element(values.x, index, best, best_index, best_word);
  fold_element(values.y, index + 1, best, best_index, best_word);
  fold_element(values.z, index + 2, best, best_index, best_word);
  fold_element(values.w, index + 3, best, best_index, best_word);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    reduce_argmin(const float* __restrict__ in, const long long* __restrict__ in_index_or_null,
                  float* __restrict__ out_value, long long* __restrict__ out_index, long long n) {
  __shared__ float values[BLOCK_SIZE];
  __shared__ long long indices[BLOCK_SIZE];
  const int tid = threadIdx.x;

  // Start from the identity of the order: a NaN at an index no real element can have.
  float best = __int_as_float(0x7fc00000);
  long long best_index = NO_INDEX;
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  const long long first = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + tid;
  if (in_index_or_null == nullptr) {
    // Pass 1: a thread meets its elements in increasing index order, so a strict "less" on the
    // order's words keeps the first of equal elements; 16-byte loads when `in` allows them.
    unsigned best_word = NO_WORD;
    const bool aligned = (reinterpret_cast<unsigned long long>(in) & 15) == 0;
    const long long quad_count = aligned ? n / 4 : 0;
    const float4* quads = reinterpret_cast<const float4*>(in);
    long long q = first;
    // Two loads in flight per thread before either is compared.
    for (; q + stride < quad_count; q += 2 * stride) {
      const float4 a = quads[q];
      const float4 b = quads[q + stride];
      fold_quad(a, 4 * q, best, best_index, best_word);
      fold_quad(b, 4 * (q + stride), best, best_index, best_word);
    }
    if (q < quad_count) fold_quad(quads[q], 4 * q, best, best_index, best_word);
    for (long long i = quad_count * 4 + first; i < n; i += stride)
      fold_element(in[i], i, best, best_index, best_word);
  } else {
    // Later passes carry the indices pass 1 found, in no particular order: the full comparison.
    for (long long i = first; i < n; i += stride) {
      const long long index = in_index_or_null[i];
      const float value = in[i];
      if (precedes(value, index, best, best_index)) {
        best = value;
        best_index = index;
      }
    }
  }
  values[tid] = best;
  indices[tid] = best_index;
  __syncthreads();

  for (int half = BLOCK_SIZE / 2; half > 32; half /= 2) {
    if (tid < half &&
        precedes(values[tid + half], indices[tid + half], values[tid], indices[tid])) {
      values[tid] = values[tid + half];
      indices[tid] = indices[tid + half];
    }
    __syncthreads();
  }
  if (tid < 32) {
    best = values[tid];
    best_index = indices[tid];
    if (precedes(values[tid + 32], indices[tid + 32], best, best_index)) {
      best = values[tid + 32];
      best_index = indices[tid + 32];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other = __shfl_down_sync(FULL_WARP, best, offset);
      const long long other_index = __shfl_down_sync(FULL_WARP, best_index, offset);
      if (precedes(other, other_index, best, best_index)) {
        best = other;
        best_index = other_index;
      }
    }
    if (tid == 0) {
      out_value[blockIdx.x] = best;
      out_index[blockIdx.x] = best_index;
    }
  }
}
