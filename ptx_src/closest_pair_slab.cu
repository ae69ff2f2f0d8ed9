// The slabs of a distributed closest pair on a rank's GPU (host/closest_pair/device_slab.cpp):
// the sample that places a generated set's splitters, the rank's slab of a generated set made by
// regenerating the set and keeping the keys of its range in index order, the points near a slab's
// edges, and a slab that arrived from other ranks split into points and indices.
//
// A generated slab is made in runs of RUN = 32*ITEMS consecutive indices, one warp per run at a
// time (grid-stride over runs): a warp's ballot over 32 consecutive points ranks the kept ones,
// so each run writes its points in index order, coalesced, from where the runs before it end.
// For a bounded range a first kernel counts each run's kept points (an interval of x, one draw
// for uniform points and two for clustered ones, decides most: the whole point is made only for
// those it does not); for the whole set, run r starts at r*RUN. The fill also
// writes the slab's bounding box and appends the points near its edges (few: the host sets the
// edges so), so that the distributed border step reads none of the slab again.
//
// Host sequence:
//   splitters: sample_keys grid=(ceil(samples/BLOCK_SIZE)) → radix sort (radix_sort.cu) of the
//     keys carrying the sample numbers → sample_pick grid=(1)
//   generated slab, a bounded range: zero the census; slab_count grid=(G) → exclusive scan of the
//     runs' counts (closest_pair_scan.cu) → slab_fill grid=(G) with the offsets
//   generated slab, the whole set: slab_fill grid=(G) without offsets (run_offsets null)
//   edges (when the fill did not append them): slab_edges grid=(G), again with the count as the
//     capacity when it exceeded the first
//   received points: slab_unpack grid=(G)
// bounds, census and edge counts start as an empty box, zero counts.
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {128, 256, 512} default 256
// ptxrt: define ITEMS in {8, 16, 32, 64} default 32
// ptxrt: entry sample_keys grid=(ceil(samples/BLOCK_SIZE)) block=(BLOCK_SIZE) — keys[j] = the ordered word of the x of point sample_position(j, n, samples), values[j] = j
// ptxrt: entry sample_pick grid=(1) block=(BLOCK_SIZE) — picked[r - 1] = sorted_values[r * samples / parts] for 0 < r < parts
// ptxrt: entry slab_count grid=(G) block=(BLOCK_SIZE) — run_counts[r] = the kept points of run r; the census gets their count and x range; grid-stride over runs
// ptxrt: entry slab_fill grid=(G) block=(BLOCK_SIZE) — the kept points and their indices in index order from run_offsets[r] (r*RUN when null); their box into bounds; those near the edges appended; grid-stride over runs
// ptxrt: entry slab_edges grid=(G) block=(BLOCK_SIZE) — appends the slab's points near the edges, up to capacity, counting all; grid-stride
// ptxrt: entry slab_unpack grid=(G) block=(BLOCK_SIZE) — points and indices from (x, y, index) records, their box into bounds; grid-stride
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256 or 512)"
#endif
#ifndef ITEMS
#error "ITEMS must be defined (8, 16, 32 or 64)"
#endif
#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32 up to 1024 (a warp makes a run)"
#endif

#include "closest_pair_block.cuh"
#include "closest_pair_slab.cuh"
#include "point_generator.cuh"

#define FULL_WARP 0xffffffffu
#define WARPS (BLOCK_SIZE / 32)
#define RUN (32ull * ITEMS)

__device__ __forceinline__ unsigned long long global_thread() {
  return static_cast<unsigned long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
}

__device__ __forceinline__ unsigned long long global_warp() { return global_thread() / 32; }

__device__ __forceinline__ unsigned long long warps_in_grid() {
  return static_cast<unsigned long long>(gridDim.x) * WARPS;
}

// Whether point k's key lies in the range, from the fewest draws that tell: an interval of its
// x first, and the whole point (then in `point`, `made` set) only where that does not decide.
__device__ __forceinline__ bool in_range(const PointGenerator& generator, const SlabRange& range,
                                         unsigned long long k, const GeneratedInterval& x,
                                         GeneratedCoordinates& point, bool& made) {
  const int side = range_side(range, x.low, x.high);
  made = side == 0;
  if (!made) return side > 0;
  point = generated_point(generator, k);
  return key_in_range(range, point.x, point.y, k);
}

__device__ __forceinline__ void append_edge_point(const SlabEdges& edges, float x, float y,
                                                  unsigned long long index,
                                                  SlabPoint* __restrict__ out,
                                                  unsigned long long* __restrict__ count) {
  const unsigned long long slot = atomicAdd(count, 1ull);
  if (slot < edges.capacity) out[slot] = SlabPoint{x, y, index};
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    sample_keys(PointGenerator generator, unsigned long long n, unsigned long long samples,
                unsigned* __restrict__ keys, int* __restrict__ values) {
  const unsigned long long j = global_thread();
  if (j >= samples) return;
  const float x = generated_x(generator, sample_position(j, n, samples));
  keys[j] = ordered_word(__float_as_uint(x));
  values[j] = static_cast<int>(j);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    sample_pick(const int* __restrict__ sorted_values, unsigned long long samples, int parts,
                int* __restrict__ picked) {
  for (int r = 1 + static_cast<int>(threadIdx.x); r < parts; r += BLOCK_SIZE)
    picked[r - 1] =
        sorted_values[static_cast<unsigned long long>(r) * samples / static_cast<unsigned>(parts)];
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    slab_count(PointGenerator generator, unsigned long long n, SlabRange range,
               unsigned long long runs, int* __restrict__ run_counts,
               SlabCensus* __restrict__ census) {
  __shared__ unsigned long long warp_kept[WARPS];
  const unsigned lane = threadIdx.x % 32;
  unsigned long long kept_by_warp = 0;
  unsigned low_x = 0xffffffffu;
  unsigned high_x = 0u;
  for (unsigned long long run = global_warp(); run < runs; run += warps_in_grid()) {
    int kept = 0;
    for (int item = 0; item < ITEMS; ++item) {
      const unsigned long long k = run * RUN + static_cast<unsigned long long>(item) * 32 + lane;
      if (k >= n) continue;
      const GeneratedInterval x = generated_x_interval(generator, k);
      GeneratedCoordinates point;
      bool made = false;
      if (in_range(generator, range, k, x, point, made)) {
        ++kept;
        // The census's x range only sizes the edges a slab notes: an interval's will do.
        low_x = min(low_x, ordered_word(__float_as_uint(made ? point.x : x.low)));
        high_x = max(high_x, ordered_word(__float_as_uint(made ? point.x : x.high)));
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) kept += __shfl_xor_sync(FULL_WARP, kept, offset);
    if (lane == 0) run_counts[run] = kept;
    kept_by_warp += static_cast<unsigned long long>(kept);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    low_x = min(low_x, __shfl_xor_sync(FULL_WARP, low_x, offset));
    high_x = max(high_x, __shfl_xor_sync(FULL_WARP, high_x, offset));
  }
  if (lane == 0) {
    warp_kept[threadIdx.x / 32] = kept_by_warp;
    if (low_x <= high_x) {
      atomicMin(&census->low_x, low_x);
      atomicMax(&census->high_x, high_x);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long kept_by_block = 0;
    for (int warp = 0; warp < WARPS; ++warp) kept_by_block += warp_kept[warp];
    if (kept_by_block > 0) atomicAdd(&census->kept, kept_by_block);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    slab_fill(PointGenerator generator, unsigned long long n, SlabRange range,
              unsigned long long runs, const int* __restrict__ run_offsets, SlabEdges edges,
              float2* __restrict__ points, unsigned long long* __restrict__ indices,
              PointBounds* __restrict__ bounds, SlabPoint* __restrict__ edge_points,
              unsigned long long* __restrict__ edge_count) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned lanes_below = (1u << lane) - 1u;
  BoxWords box = empty_box();
  for (unsigned long long run = global_warp(); run < runs; run += warps_in_grid()) {
    unsigned long long next =
        run_offsets != nullptr ? static_cast<unsigned long long>(run_offsets[run]) : run * RUN;
    for (int item = 0; item < ITEMS; ++item) {
      const unsigned long long k = run * RUN + static_cast<unsigned long long>(item) * 32 + lane;
      GeneratedCoordinates point;
      bool made = true;
      bool keep = false;
      if (k < n) {
        if (run_offsets == nullptr) {
          point = generated_point(generator, k);
          keep = true;
        } else {
          keep = in_range(generator, range, k, generated_x_interval(generator, k), point, made);
        }
      }
      const unsigned kept_lanes = __ballot_sync(FULL_WARP, keep);
      if (keep) {
        if (!made) point = generated_point(generator, k);
        const unsigned long long slot = next + __popc(kept_lanes & lanes_below);
        points[slot] = make_float2(point.x, point.y);
        indices[slot] = k;
        box = box_with(box, point.x, point.y);
        if (near_slab_edge(edges, point.x))
          append_edge_point(edges, point.x, point.y, k, edge_points, edge_count);
      }
      next += __popc(kept_lanes);
    }
  }
  fold_box_into<BLOCK_SIZE>(box, bounds);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    slab_edges(const float2* __restrict__ points, const unsigned long long* __restrict__ indices,
               long long n, SlabEdges edges, SlabPoint* __restrict__ out,
               unsigned long long* __restrict__ count) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * BLOCK_SIZE;
  for (unsigned long long k = global_thread(); k < static_cast<unsigned long long>(n);
       k += stride) {
    const float2 point = points[k];
    if (near_slab_edge(edges, point.x))
      append_edge_point(edges, point.x, point.y, indices[k], out, count);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    slab_unpack(const SlabPoint* __restrict__ records, long long n, float2* __restrict__ points,
                unsigned long long* __restrict__ indices, PointBounds* __restrict__ bounds) {
  BoxWords box = empty_box();
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * BLOCK_SIZE;
  for (unsigned long long k = global_thread(); k < static_cast<unsigned long long>(n);
       k += stride) {
    const SlabPoint record = records[k];
    points[k] = make_float2(record.x, record.y);
    indices[k] = record.index;
    box = box_with(box, record.x, record.y);
  }
  fold_box_into<BLOCK_SIZE>(box, bounds);
}
