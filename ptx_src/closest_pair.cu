// Closest pair of 2-D points by brute force and by the bottom-up divide & conquer of the study
// (Papageorgakis, 2014): sort by x, brute-force each batch of BASE points in shared memory, then
// merge batches pairwise level by level, each level ordering the merged batches by y and comparing
// the points of the vertical strip around each dividing line with their following neighbours.
// The running minimum is broadcast to every thread through the constant `closest_pair_bound`,
// which the host sets between levels. Exactness (fp32 pruning, fp64 candidates) is explained in
// closest_pair_math.cuh. Points are float2; indices are int (n < 2^31).
//
// Host sequence, divide & conquer (all block=(BASE) except reduce_minima, block=(1024)):
//   dc_prepare_keys; bitonic sort of (x, index) pairs (bitonic_sort.cu); dc_gather
//   dc_leaves → reduce_minima → read the total, set closest_pair_bound
//   for length = 2*BASE; length/2 < n; length *= 2:
//     dc_merge; dc_strip_flags; exclusive scan of the flags (closest_pair_scan.cu, n+1 outputs);
//     dc_strip_gather; dc_strip_compare → reduce_minima → read the total, set closest_pair_bound
// Brute force: brute_force grid=(G <= tile pairs) → reduce_minima over its G block minima. The
// tile pairs [first_tile_pair, end_tile_pair) may be a part of the triangle: several GPUs split it
// into contiguous ranges (host/multi_gpu_closest_pair.cpp), one GPU takes [0, T(T+1)/2).
//
// clang-format off
// ptxrt: define BASE in {32, 64, 128, 256, 512, 1024} default 128
// ptxrt: tune BASE
// ptxrt: entry brute_force grid=(min(end_tile_pair - first_tile_pair, G)) block=(BASE) — every pair of the tile pairs (a <= b) [first_tile_pair, end_tile_pair) of the triangle of T = ceil(n/BASE) tiles once, grid-stride; block_minima[blockIdx.x] = its best pair
// ptxrt: entry dc_prepare_keys grid=(ceil(n_pow2/BASE)) block=(BASE) — keys = x, values = index; padding NaN / INT_MAX up to n_pow2
// ptxrt: entry dc_gather grid=(ceil(n/BASE)) block=(BASE) — by_x[k] = points[order[k]], index_by_x[k] = order[k]
// ptxrt: entry dc_leaves grid=(ceil(n/BASE)) block=(BASE) — brute force inside each batch of BASE x-sorted points; writes the batch ordered by y; block_minima[batch]
// ptxrt: entry dc_merge grid=(ceil(n/BASE)) block=(BASE) — merges the y-ordered halves of each batch of `length` points (ties: left half first)
// ptxrt: entry dc_strip_flags grid=(ceil(n/BASE)) block=(BASE) — flags[k] = point k of the y order lies within the pruning radius of its batch's dividing line
// ptxrt: entry dc_strip_gather grid=(ceil(n/BASE)) block=(BASE) — compacts the flagged points, still y-ordered, with their batch
// ptxrt: entry dc_strip_compare grid=(ceil(n/BASE)) block=(BASE) — each strip point against the next 7 strip points of its batch within the radius; block_minima[blockIdx.x]
// ptxrt: entry reduce_minima grid=(1) block=(1024) — folds count block minima into *total
// clang-format on

#ifndef BASE
#error "BASE must be defined (32, 64, 128, 256, 512 or 1024)"
#endif
#if BASE < 32 || BASE > 1024 || (BASE & (BASE - 1)) != 0
#error "BASE must be a power of two from 32 to 1024 (threads per block; the reduction halves it)"
#endif

#include "closest_pair_block.cuh"

#define REDUCE_THREADS 1024
#define INDEX_PADDING 2147483647
// In a y-ordered strip, at most 8 points fit in the radius-high rectangle above a point (4 per
// radius-wide square on each side of the line), so a point needs at most 7 successors.
#define STRIP_SUCCESSORS 7

// The fp32 minimum squared distance found so far, set by the host before each level.
__constant__ float closest_pair_bound;

__device__ __forceinline__ long long global_thread() {
  return static_cast<long long>(blockIdx.x) * BASE + threadIdx.x;
}

extern "C" __global__ void __launch_bounds__(BASE)
    brute_force(const float2* __restrict__ points, long long n, long long first_tile_pair,
                long long end_tile_pair, PairMinimum* __restrict__ block_minima) {
  __shared__ float2 tile[BASE];
  PairSearch search = start_search(infinite_distance());
  // The loop bound is the same for the whole block, so every thread reaches every barrier.
  for (long long k = first_tile_pair + blockIdx.x; k < end_tile_pair; k += gridDim.x) {
    long long tile_a, tile_b;
    triangle_tile_pair(k, tile_a, tile_b);
    const long long first_b = tile_b * BASE;
    const long long j_load = first_b + threadIdx.x;
    if (j_load < n) tile[threadIdx.x] = points[j_load];
    __syncthreads();
    const long long i = tile_a * BASE + threadIdx.x;
    const long long rest_of_b = n - first_b;
    const int count_b = rest_of_b < BASE ? static_cast<int>(rest_of_b) : BASE;
    if (i < n) {
      const float2 p = points[i];
      // On the diagonal only the pairs above it, so each pair is visited once.
      const int start = tile_a == tile_b ? static_cast<int>(threadIdx.x) + 1 : 0;
      for (int u = start; u < count_b; ++u) {
        consider_pair(search, p.x, p.y, static_cast<int>(i), tile[u].x, tile[u].y,
                      static_cast<int>(first_b + u));
      }
    }
    __syncthreads();
  }
  const PairMinimum block = block_minimum<BASE>(search.minimum);
  if (threadIdx.x == 0) block_minima[blockIdx.x] = block;
}

extern "C" __global__ void __launch_bounds__(BASE)
    dc_prepare_keys(const float2* __restrict__ points, long long n, long long n_pow2,
                    float* __restrict__ keys, int* __restrict__ values) {
  const long long k = global_thread();
  if (k >= n_pow2) return;
  // NaN / INT_MAX sort after every real element (bitonic_sort.cu's padding rule).
  keys[k] = k < n ? points[k].x : __int_as_float(0x7fc00000);
  values[k] = k < n ? static_cast<int>(k) : INDEX_PADDING;
}

extern "C" __global__ void __launch_bounds__(BASE)
    dc_gather(const float2* __restrict__ points, const int* __restrict__ order, long long n,
              float2* __restrict__ by_x, int* __restrict__ index_by_x) {
  const long long k = global_thread();
  if (k >= n) return;
  const int index = order[k];
  by_x[k] = points[index];
  index_by_x[k] = index;
}

extern "C" __global__ void __launch_bounds__(BASE)
    dc_leaves(const float2* __restrict__ by_x, const int* __restrict__ index_by_x, long long n,
              float2* __restrict__ by_y, int* __restrict__ index_by_y,
              PairMinimum* __restrict__ block_minima) {
  __shared__ float2 batch[BASE];
  __shared__ int batch_index[BASE];
  const long long start = static_cast<long long>(blockIdx.x) * BASE;
  const long long rest = n - start;
  const int count = rest < BASE ? static_cast<int>(rest) : BASE;
  const int t = threadIdx.x;
  if (t < count) {
    batch[t] = by_x[start + t];
    batch_index[t] = index_by_x[start + t];
  }
  __syncthreads();

  PairSearch search = start_search(infinite_distance());
  if (t < count) {
    const float2 p = batch[t];
    // The rank of (y, position) in the batch: where this point goes in y order.
    int rank = 0;
    for (int u = 0; u < count; ++u) {
      const float y = batch[u].y;
      rank += (y < p.y || (y == p.y && u < t)) ? 1 : 0;
      if (u > t) consider_pair(search, p.x, p.y, batch_index[t], batch[u].x, y, batch_index[u]);
    }
    by_y[start + rank] = p;
    index_by_y[start + rank] = batch_index[t];
  }
  const PairMinimum block = block_minimum<BASE>(search.minimum);
  if (t == 0) block_minima[blockIdx.x] = block;
}

// How many of y-ordered points[first, last) have y < value (or <= value when `inclusive`).
__device__ __forceinline__ long long count_below(const float2* points, long long first,
                                                 long long last, float value, bool inclusive) {
  while (first < last) {
    const long long middle = first + (last - first) / 2;
    const float y = points[middle].y;
    if (y < value || (inclusive && y == value)) {
      first = middle + 1;
    } else {
      last = middle;
    }
  }
  return first;
}

extern "C" __global__ void __launch_bounds__(BASE)
    dc_merge(const float2* __restrict__ in, const int* __restrict__ in_index, long long n,
             long long length, float2* __restrict__ out, int* __restrict__ out_index) {
  const long long k = global_thread();
  if (k >= n) return;
  const long long start = k / length * length;
  const long long middle = start + length / 2 < n ? start + length / 2 : n;
  const long long end = start + length < n ? start + length : n;
  const float y = in[k].y;
  // A point's place is its rank in its own half plus the points of the other half before it;
  // on equal y the left half goes first, which makes every place distinct.
  const long long position = k < middle ? k + (count_below(in, middle, end, y, false) - middle)
                                        : (k - middle) + count_below(in, start, middle, y, true);
  out[position] = in[k];
  out_index[position] = in_index[k];
}

extern "C" __global__ void __launch_bounds__(BASE)
    dc_strip_flags(const float2* __restrict__ by_y, const float2* __restrict__ by_x, long long n,
                   long long length, int* __restrict__ flags) {
  const long long k = global_thread();
  if (k >= n) return;
  const long long dividing = k / length * length + length / 2;
  // A batch without a right half has no line to cross.
  if (dividing >= n) {
    flags[k] = 0;
    return;
  }
  const float line = by_x[dividing].x;
  flags[k] = fabsf(by_y[k].x - line) <= pruning_radius(closest_pair_bound) ? 1 : 0;
}

extern "C" __global__ void __launch_bounds__(BASE)
    dc_strip_gather(const float2* __restrict__ by_y, const int* __restrict__ index_by_y,
                    const int* __restrict__ flags, const int* __restrict__ offsets, long long n,
                    long long length, float2* __restrict__ strip, int* __restrict__ strip_index,
                    int* __restrict__ strip_batch) {
  const long long k = global_thread();
  if (k >= n || flags[k] == 0) return;
  const int slot = offsets[k];
  strip[slot] = by_y[k];
  strip_index[slot] = index_by_y[k];
  strip_batch[slot] = static_cast<int>(k / length);
}

extern "C" __global__ void __launch_bounds__(BASE)
    dc_strip_compare(const float2* __restrict__ strip, const int* __restrict__ strip_index,
                     const int* __restrict__ strip_batch, const int* __restrict__ strip_count,
                     PairMinimum* __restrict__ block_minima) {
  const long long s = global_thread();
  const long long count = *strip_count;
  PairSearch search = start_search(closest_pair_bound);
  const float radius = pruning_radius(closest_pair_bound);
  if (s < count) {
    const float2 p = strip[s];
    const int batch = strip_batch[s];
    const long long last = s + STRIP_SUCCESSORS < count - 1 ? s + STRIP_SUCCESSORS : count - 1;
    for (long long t = s + 1; t <= last; ++t) {
      const float2 q = strip[t];
      if (strip_batch[t] != batch || q.y - p.y > radius) break;
      consider_pair(search, p.x, p.y, strip_index[s], q.x, q.y, strip_index[t]);
    }
  }
  const PairMinimum block = block_minimum<BASE>(search.minimum);
  if (threadIdx.x == 0) block_minima[blockIdx.x] = block;
}

extern "C" __global__ void __launch_bounds__(REDUCE_THREADS)
    reduce_minima(const PairMinimum* __restrict__ block_minima, long long count,
                  PairMinimum* __restrict__ total) {
  reduce_minima_into<REDUCE_THREADS>(block_minima, count, total);
}
