// Closest pair for large n: points sorted along a Z-order curve (closest_pair_morton.cuh) by the
// radix sort of radix_sort.cu, an upper bound from neighbours on the curve, then one search per
// point of the squares of the Z-order quadtree that cover its pruning radius.
//
// Why it stays linear on any density. Let d0 be the smallest distance between a point and its
// next 3 on the curve. A node of side s holding m points contains, for 4^t < m, a sub-node of side
// s/2^t with two of them, which are contiguous on the curve: so d0 <= sqrt(2) s / 2^t, i.e.
// m <= 8 (s/d0)^2. The search uses radius r = pruning_radius(d0) (~d0) at the deepest level whose
// nodes are at least 2r wide (s < 4r): at most 2x2 nodes (3x3 at a rounding edge) of at most
// ~128 points each, whatever the distribution, clustered or not. The argument needs nodes down to
// the search level: 16 levels of the 32-bit keys serve unless some finest cell (extent/2^16) holds
// more than RUN_LIMIT points; the host then sorts by the full 64-bit code (32 levels). What is left
// is m distinct points inside one cell of extent/2^32: only possible where fp32 is finer than that
// (coordinates within extent/2^8 of 0), and those m cost m^2/2 comparisons.
//
// Exactness (closest_pair_math.cuh): each point's search starts from bound d0 and visits every
// point within pruning_radius(d0) of it (the window quantizes monotonically) that comes after it
// on the curve, so every pair within the final pruning radius is visited once.
//
// Host sequence, all block=(BLOCK_SIZE) except the reductions of block minima, block=(1024):
//   grid_bounds (G blocks, grid-stride) → the box, checked on the host
//   grid_keys (high) → radix sort (keys, order)
//   grid_long_runs(RUN_LIMIT) → when set: grid_keys (low) → radix sort; grid_keys_of (high, by
//     that order) → radix sort carrying the order (levels = 32; else levels = 16)
//   grid_gather; grid_bound; grid_cell_starts (grid over 4^table_level + 1 cells); grid_search;
//   grid_minimum over its block minima (reduce_minima folds them into a running total instead)
// The sorted 64-bit codes may take the room of the two key arrays, which gather no longer reads.
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {128, 256, 512, 1024} default 256
// ptxrt: entry grid_bounds grid=(G) block=(BLOCK_SIZE) — folds min/max of x and y (as ordered words) and the first non-finite index into *bounds; grid-stride
// ptxrt: entry grid_keys grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — keys[i] = the high (or low) 32 bits of point i's Morton code; order[i] = i
// ptxrt: entry grid_keys_of grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — keys[k] = the high 32 bits of the code of points[order[k]]
// ptxrt: entry grid_long_runs grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — *found = 1 when some keys[k] == keys[k + run] (a run of more than `run` equal sorted keys)
// ptxrt: entry grid_gather grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — sorted[k] = points[order[k]], its index and its 64-bit code (the top 2*levels bits)
// ptxrt: entry grid_bound grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — atomicMin of the fp32 squared distance of each sorted point to its next 3 into *bound_bits
// ptxrt: entry grid_cell_starts grid=(ceil((4^table_level+1)/BLOCK_SIZE)) block=(BLOCK_SIZE) — cell_start[c] = the first sorted point in level-table_level node c or after; cell_start[4^table_level] = n
// ptxrt: entry grid_search grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — each sorted point against the later points of the nodes covering its pruning radius; block_minima[blockIdx.x]
// ptxrt: entry reduce_minima grid=(1) block=(1024) — folds count block minima into *total
// ptxrt: entry grid_minimum grid=(1) block=(1024) — *total = the best of count block minima
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256, 512 or 1024)"
#endif
#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two from 32 to 1024 (the block reduction halves it)"
#endif

#include "closest_pair_block.cuh"
#include "closest_pair_morton.cuh"

#define REDUCE_THREADS 1024
#define FULL_WARP 0xffffffffu
#define WARPS (BLOCK_SIZE / 32)
// Later points on the curve that bound the minimum (the argument above needs one).
#define CURVE_NEIGHBOURS 3

__device__ __forceinline__ long long global_thread() {
  return static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_bounds(const float2* __restrict__ points, long long n, PointBounds* __restrict__ bounds) {
  BoxWords box = empty_box();
  long long first_bad = n;
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  for (long long i = global_thread(); i < n; i += stride) {
    const float2 p = points[i];
    if (!isfinite(p.x) || !isfinite(p.y)) {
      if (i < first_bad) first_bad = i;
      continue;
    }
    box = box_with(box, p.x, p.y);
  }
  if (first_bad < n) atomicMin(&bounds->first_non_finite, first_bad);
  fold_box_into<BLOCK_SIZE>(box, bounds);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_keys(const float2* __restrict__ points, long long n, GridFrame frame, int low_half,
              unsigned* __restrict__ keys, int* __restrict__ order) {
  const long long i = global_thread();
  if (i >= n) return;
  const float2 p = points[i];
  keys[i] = low_half ? morton_low(p.x, p.y, frame) : morton_high(p.x, p.y, frame);
  order[i] = static_cast<int>(i);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_keys_of(const float2* __restrict__ points, const int* __restrict__ order, long long n,
                 GridFrame frame, unsigned* __restrict__ keys) {
  const long long k = global_thread();
  if (k >= n) return;
  const float2 p = points[order[k]];
  keys[k] = morton_high(p.x, p.y, frame);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_long_runs(const unsigned* __restrict__ keys, long long n, long long run,
                   int* __restrict__ found) {
  const long long k = global_thread();
  if (k + run < n && keys[k] == keys[k + run]) *found = 1;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_gather(const float2* __restrict__ points, const int* __restrict__ order, long long n,
                GridFrame frame, int levels, float2* __restrict__ sorted,
                int* __restrict__ sorted_index, unsigned long long* __restrict__ sorted_keys) {
  const long long k = global_thread();
  if (k >= n) return;
  const int index = order[k];
  const float2 p = points[index];
  const unsigned long long code = morton_code(quantize(p.x, frame.origin_x, frame.scale),
                                              quantize(p.y, frame.origin_y, frame.scale));
  sorted[k] = p;
  sorted_index[k] = index;
  // With 16 levels the points are in order of the top 32 bits only: the rest must not count.
  sorted_keys[k] = levels >= 32 ? code : code & 0xffffffff00000000ull;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_bound(const float2* __restrict__ sorted, long long n, unsigned* __restrict__ bound_bits) {
  __shared__ float warp_minima[WARPS];
  const long long k = global_thread();
  float best = infinite_distance();
  if (k < n) {
    const float2 p = sorted[k];
    for (int step = 1; step <= CURVE_NEIGHBOURS && k + step < n; ++step) {
      const float2 q = sorted[k + step];
      best = fminf(best, pair_distance_squared_f32(p.x, p.y, q.x, q.y));
    }
  }
  for (int offset = 16; offset > 0; offset /= 2)
    best = fminf(best, __shfl_xor_sync(FULL_WARP, best, offset));
  if (threadIdx.x % 32 == 0) warp_minima[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x < 32) {
    best = threadIdx.x < WARPS ? warp_minima[threadIdx.x] : infinite_distance();
    for (int offset = 16; offset > 0; offset /= 2)
      best = fminf(best, __shfl_xor_sync(FULL_WARP, best, offset));
    // Non-negative floats order as their bits.
    if (threadIdx.x == 0 && best < infinite_distance())
      atomicMin(bound_bits, __float_as_uint(best));
  }
}

// The first position in [begin, end) whose key is at least `key` (end when none).
__device__ __forceinline__ long long lower_bound(const unsigned long long* __restrict__ keys,
                                                 long long begin, long long end,
                                                 unsigned long long key) {
  while (begin < end) {
    const long long middle = begin + (end - begin) / 2;
    if (keys[middle] < key)
      begin = middle + 1;
    else
      end = middle;
  }
  return begin;
}

// The node of `level` bits per axis that holds the key, as a count of such nodes.
__device__ __forceinline__ unsigned long long node_of_key(unsigned long long key, int level) {
  return level == 0 ? 0ull : key >> (64 - 2 * level);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_cell_starts(const unsigned long long* __restrict__ sorted_keys, long long n,
                     int table_level, int* __restrict__ cell_start) {
  const long long cell = global_thread();
  const long long cells = 1ll << (2 * table_level);
  if (cell > cells) return;
  long long begin = 0;
  long long end = n;
  if (cell == cells) {
    begin = n;
  } else if (cell > 0) {
    // The first key whose node at table_level is `cell` or later.
    while (begin < end) {
      const long long middle = begin + (end - begin) / 2;
      if (node_of_key(sorted_keys[middle], table_level) < static_cast<unsigned long long>(cell))
        begin = middle + 1;
      else
        end = middle;
    }
  }
  cell_start[cell] = static_cast<int>(begin);
}

struct SortedRange {
  long long begin;
  long long end;
};

// The sorted points in node (column, row) of `level`: through the table alone when the node is
// a block of table cells, else by binary search inside the one table cell that holds it.
__device__ __forceinline__ SortedRange node_range(unsigned column, unsigned row, int level,
                                                  int table_level,
                                                  const int* __restrict__ cell_start,
                                                  const unsigned long long* __restrict__ keys) {
  const unsigned long long node = morton_code(column, row);
  if (level <= table_level) {
    const int finer = 2 * (table_level - level);
    const unsigned long long first = node << finer;
    return {cell_start[first], cell_start[first + (1ull << finer)]};
  }
  const int coarser = level - table_level;
  const unsigned long long cell = morton_code(column >> coarser, row >> coarser);
  SortedRange range{cell_start[cell], cell_start[cell + 1]};
  const int key_shift = 64 - 2 * level;
  range.begin = lower_bound(keys, range.begin, range.end, node << key_shift);
  // The last node of a level has no next key; its range ends with its table cell's.
  const unsigned long long last = level >= 32 ? ~0ull : (1ull << (2 * level)) - 1ull;
  if (node != last) range.end = lower_bound(keys, range.begin, range.end, (node + 1) << key_shift);
  return range;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_search(const float2* __restrict__ sorted, const int* __restrict__ sorted_index,
                const unsigned long long* __restrict__ sorted_keys, long long n, GridFrame frame,
                int levels, int table_level, const int* __restrict__ cell_start,
                const unsigned* __restrict__ bound_bits, PairMinimum* __restrict__ block_minima) {
  const long long k = global_thread();
  const float bound = __uint_as_float(*bound_bits);
  PairSearch search = start_search(bound);
  if (k < n) {
    const float radius = pruning_radius(bound);
    const int level = search_level(frame.extent, radius, levels);
    const float2 p = sorted[k];
    const int index = sorted_index[k];
    // The window [p - r, p + r], each bound rounded to float: q is monotone (see the header).
    // 64-bit cells: at 32 levels the last one is 2^32 - 1, past which a 32-bit loop would wrap.
    const unsigned long long first_column =
        cell_at_level(quantize(p.x - radius, frame.origin_x, frame.scale), level);
    const unsigned long long last_column =
        cell_at_level(quantize(p.x + radius, frame.origin_x, frame.scale), level);
    const unsigned long long first_row =
        cell_at_level(quantize(p.y - radius, frame.origin_y, frame.scale), level);
    const unsigned long long last_row =
        cell_at_level(quantize(p.y + radius, frame.origin_y, frame.scale), level);
    bool exact_duplicate = false;
    for (unsigned long long row = first_row; row <= last_row && !exact_duplicate; ++row) {
      for (unsigned long long column = first_column; column <= last_column && !exact_duplicate;
           ++column) {
        const SortedRange range =
            node_range(static_cast<unsigned>(column), static_cast<unsigned>(row), level,
                       table_level, cell_start, sorted_keys);
        for (long long q = range.begin > k + 1 ? range.begin : k + 1; q < range.end; ++q) {
          const float2 other = sorted[q];
          const float squared = pair_distance_squared_f32(p.x, p.y, other.x, other.y);
          if (squared > search.threshold) continue;
          record_candidate(search, squared, p.x, p.y, index, other.x, other.y, sorted_index[q]);
          // Distance 0 cannot be beaten: stopping keeps many copies of one point linear.
          if (search.minimum.distance_squared == 0.0) {
            exact_duplicate = true;
            break;
          }
        }
      }
    }
  }
  const PairMinimum block = block_minimum<BLOCK_SIZE>(search.minimum);
  if (threadIdx.x == 0) block_minima[blockIdx.x] = block;
}

extern "C" __global__ void __launch_bounds__(REDUCE_THREADS)
    reduce_minima(const PairMinimum* __restrict__ block_minima, long long count,
                  PairMinimum* __restrict__ total) {
  reduce_minima_into<REDUCE_THREADS>(block_minima, count, total);
}

extern "C" __global__ void __launch_bounds__(REDUCE_THREADS)
    grid_minimum(const PairMinimum* __restrict__ block_minima, long long count,
                 PairMinimum* __restrict__ total) {
  const PairMinimum best = best_of_minima<REDUCE_THREADS>(block_minima, count);
  if (threadIdx.x == 0) *total = best;
}
