// Closest pair for large n: a uniform grid of square cells hashed into a power-of-two table of
// buckets. Points are counting-sorted by bucket, then each point is compared with the points of
// its own and the 8 neighbouring cells' buckets that come after it in bucket order, so each pair
// within one cell width is visited exactly once (a pair whose cells share a bucket may be visited
// twice, which a minimum does not mind). The answer is exact when the cell width is at least
// pruning_radius(bound) of the bound found (closest_pair_math.cuh); the host checks that and
// rebuilds the grid wider otherwise.
//
// Host sequence, all block=(BLOCK_SIZE) except reduce_minima, block=(1024):
//   zero bucket_count; grid_assign; exclusive scan of bucket_count into bucket_start
//   (closest_pair_scan.cu, buckets+1 outputs); grid_scatter (counts return to zero);
//   grid_search; reduce_minima over its block minima.
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {128, 256, 512, 1024} default 256
// ptxrt: entry grid_assign grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — bucket_of_point[i] = the bucket of point i's cell; bucket_count[b] += 1
// ptxrt: entry grid_scatter grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — sorted[bucket_start[b] + ...] = point, counting bucket_count back down to zero
// ptxrt: entry grid_search grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — each sorted point against the later points of the 9 buckets around its cell; block_minima[blockIdx.x]
// ptxrt: entry reduce_minima grid=(1) block=(1024) — folds count block minima into *total
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256, 512 or 1024)"
#endif
#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two from 32 to 1024 (the block reduction halves it)"
#endif

#include "closest_pair_block.cuh"

#define REDUCE_THREADS 1024

// The grid's placement and resolution, the same for every kernel of one build.
struct GridGeometry {
  double origin_x;
  double origin_y;
  double inverse_cell;
  unsigned long long bucket_mask;
};

__device__ __forceinline__ long long global_thread() {
  return static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_assign(const float2* __restrict__ points, long long n, GridGeometry grid,
                int* __restrict__ bucket_of_point, int* __restrict__ bucket_count) {
  const long long i = global_thread();
  if (i >= n) return;
  const float2 p = points[i];
  const long long cell_x = cell_coordinate(p.x, grid.origin_x, grid.inverse_cell);
  const long long cell_y = cell_coordinate(p.y, grid.origin_y, grid.inverse_cell);
  const int bucket = static_cast<int>(cell_bucket(cell_x, cell_y, grid.bucket_mask));
  bucket_of_point[i] = bucket;
  atomicAdd(&bucket_count[bucket], 1);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_scatter(const float2* __restrict__ points, const int* __restrict__ bucket_of_point,
                 long long n, const int* __restrict__ bucket_start, int* __restrict__ bucket_count,
                 float2* __restrict__ sorted, int* __restrict__ sorted_index) {
  const long long i = global_thread();
  if (i >= n) return;
  const int bucket = bucket_of_point[i];
  // The order inside a bucket depends on scheduling; results do not (ties are ordered by index).
  const int slot = bucket_start[bucket] + atomicSub(&bucket_count[bucket], 1) - 1;
  sorted[slot] = points[i];
  sorted_index[slot] = static_cast<int>(i);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    grid_search(const float2* __restrict__ sorted, const int* __restrict__ sorted_index,
                const int* __restrict__ bucket_start, long long n, GridGeometry grid, float bound,
                PairMinimum* __restrict__ block_minima) {
  const long long p = global_thread();
  PairSearch search = start_search(bound);
  if (p < n) {
    const float2 point = sorted[p];
    const int index = sorted_index[p];
    const long long cell_x = cell_coordinate(point.x, grid.origin_x, grid.inverse_cell);
    const long long cell_y = cell_coordinate(point.y, grid.origin_y, grid.inverse_cell);
    // An exact duplicate (distance 0) cannot be beaten: stop there, which keeps inputs made of
    // many copies of a few points linear instead of quadratic per cell.
    for (int neighbour = 0; neighbour < 9 && search.minimum.distance_squared != 0.0; ++neighbour) {
      const unsigned long long bucket =
          cell_bucket(cell_x + neighbour % 3 - 1, cell_y + neighbour / 3 - 1, grid.bucket_mask);
      const long long begin = bucket_start[bucket];
      const long long end = bucket_start[bucket + 1];
      for (long long q = begin > p + 1 ? begin : p + 1; q < end; ++q) {
        const float2 other = sorted[q];
        consider_pair(search, point.x, point.y, index, other.x, other.y, sorted_index[q]);
        if (search.minimum.distance_squared == 0.0) break;
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
