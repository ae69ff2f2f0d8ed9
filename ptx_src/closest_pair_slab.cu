// The slabs of a distributed closest pair on a rank's GPU (host/closest_pair/device_slab.cpp):
// the sample that places a generated set's splitters, the rank's slab of a generated set made by
// regenerating the set and keeping the keys of its range in index order, the pair a search found
// with its points' indices, the points near a slab's edges, and a slab that arrived from other
// ranks split into points and indices.
//
// A generated slab is made in one pass over runs of RUN = 32*ITEMS consecutive indices, one warp
// per run. Warps claim runs in index order (an atomic ticket); a warp decides which points of its
// run the slab keeps, learns where they go from the runs before it by a decoupled look-back
// (Merrill & Garland's single-pass scan: a run publishes its own count, then the count of every run
// through it; a run waits only for runs claimed before it, by warps that are running), and writes
// them there in index order, coalesced. The whole set (no bound) needs neither: run r starts at
// r*RUN.
//
// Deciding a run: an interval of each point's x (one draw for a uniform point, two for a clustered
// one) decides most points; the whole point is made only for those it leaves open (where it reaches
// a bound's x), which the warp gathers first so that its 32 lanes make 32 of them at a time, not
// one lane of 32. The kept points are made the same way, 32 at a time. The slab stores points only:
// where each run's kept points start (run_offsets) finds a point's index again, by deciding its run
// once more (slab_pair, slab_indices); in the whole set a point's index is its position.
//
// The pass also writes the slab's box and appends the points near its edges (few: the host sets
// the edges so), so that the distributed border step reads none of the slab again. Its census
// counts every kept point, also those past the room it was given (`capacity`, which it does not
// write past): the host then makes the slab again in room of that size.
//
// Host sequence:
//   splitters: sample_keys grid=(ceil(samples/BLOCK_SIZE)) → radix sort (radix_sort.cu) of the
//     keys carrying the sample numbers → sample_pick grid=(1)
//   generated slab: zero the census and run_status (runs words); slab_make grid=(G) (points null:
//     the points near the edges only, nothing placed)
//   a slab's pair: slab_pair grid=(1) on the minimum a search left on the device
//   a generated slab's indices: slab_indices grid=(G)
//   edges of a slab that holds its points (uploaded, the whole set): slab_edges grid=(G), again
//     with the count as the capacity when it exceeded the first
//   received points: slab_unpack grid=(G)
// A grid=(G) kernel loops over its work (slab_make's warps claim runs from a ticket), launched with
// at most as many blocks as the GPU holds at once; bounds start as an empty box, counts at zero.
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {128, 256, 512} default 256
// ptxrt: define ITEMS in {8, 16, 32} default 32
// ptxrt: entry sample_keys grid=(ceil(samples/BLOCK_SIZE)) block=(BLOCK_SIZE) — keys[j] = the ordered word of the x of point sample_position(j, n, samples), values[j] = j
// ptxrt: entry sample_pick grid=(1) block=(BLOCK_SIZE) — picks[r - 1] = {sorted_values[q], sorted_keys[q - band], sorted_keys[q + band]} (clamped), q = r * samples / parts, for 0 < r < parts
// ptxrt: entry slab_make grid=(G) block=(BLOCK_SIZE) — the kept points in index order from each run's start (run_offsets[r]), those below capacity written; the census; those near the edges appended; runs claimed in order
// ptxrt: entry slab_pair grid=(1) block=(BLOCK_SIZE) — pair = the points at minimum's positions with their indices (indices[p]; else found from run_offsets; else p)
// ptxrt: entry slab_indices grid=(G) block=(BLOCK_SIZE) — indices[p] = the index of the slab's point p, from run_offsets; grid-stride over runs
// ptxrt: entry slab_edges grid=(G) block=(BLOCK_SIZE) — appends the slab's points near the edges, up to capacity, counting all; grid-stride
// ptxrt: entry slab_unpack grid=(G) block=(BLOCK_SIZE) — points and indices from (x, y, index) records, their box into bounds; grid-stride
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256 or 512)"
#endif
#ifndef ITEMS
#error "ITEMS must be defined (8, 16 or 32)"
#endif
#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32 up to 1024 (a warp makes a run)"
#endif
#if BLOCK_SIZE * ITEMS > 16384
#error \
    "BLOCK_SIZE * ITEMS must be at most 16384 (each warp lists a run's positions in shared memory)"
#endif

#include "closest_pair_block.cuh"
#include "closest_pair_slab.cuh"
#include "point_generator.cuh"

#define FULL_WARP 0xffffffffu
#define WARPS (BLOCK_SIZE / 32)
#define RUN (32u * ITEMS)
// A run's status word: a flag in the top two bits, a count of kept points below.
#define RUN_COUNTED (1ull << 62)  // the count is the run's own
#define RUN_PLACED (2ull << 62)   // the count is every run's through this one
#define RUN_FLAGS (3ull << 62)

__device__ __forceinline__ unsigned long long global_thread() {
  return static_cast<unsigned long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
}

__device__ __forceinline__ unsigned long long global_warp() { return global_thread() / 32; }

__device__ __forceinline__ unsigned long long warps_in_grid() {
  return static_cast<unsigned long long>(gridDim.x) * WARPS;
}

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x % 32; }

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(FULL_WARP, value, offset);
  return value;
}

// What one warp keeps of a run while it decides, makes and places it: a bit per point (bit `lane`
// of word `item`: point run*RUN + item*32 + lane), and positions in the run (the open points, then
// the kept ones), in shared memory.
struct RunScratch {
  unsigned kept[ITEMS];
  unsigned short positions[RUN];
};

// Which points of run `run` the slab keeps, into scratch.kept, and how many (every lane gets it).
// Most points are decided by an interval of their x; the warp makes the whole point of the others,
// 32 at a time.
__device__ __forceinline__ unsigned decide_run(const PointGenerator& generator,
                                               unsigned long long n, const SlabRange& range,
                                               unsigned long long run, RunScratch& scratch) {
  const unsigned lane = lane_id();
  const unsigned lanes_below = (1u << lane) - 1u;
  const unsigned long long first = run * RUN;
  unsigned open = 0;
  for (int item = 0; item < ITEMS; ++item) {
    const unsigned long long k = first + static_cast<unsigned long long>(item) * 32 + lane;
    int side = -1;
    if (k < n) {
      const GeneratedInterval x = generated_x_interval(generator, k);
      side = range_side(range, x.low, x.high);
    }
    const unsigned inside = __ballot_sync(FULL_WARP, side > 0);
    const unsigned undecided = __ballot_sync(FULL_WARP, side == 0);
    if (lane == 0) scratch.kept[item] = inside;
    if (side == 0)
      scratch.positions[open + __popc(undecided & lanes_below)] =
          static_cast<unsigned short>(item * 32 + lane);
    open += __popc(undecided);
  }
  __syncwarp();
  for (unsigned t = lane; t < open; t += 32) {
    const unsigned position = scratch.positions[t];
    const unsigned long long k = first + position;
    const GeneratedCoordinates point = generated_point(generator, k);
    if (key_in_range(range, point.x, point.y, k))
      atomicOr(&scratch.kept[position / 32], 1u << (position % 32));
  }
  __syncwarp();
  unsigned long long count = 0;
  for (unsigned item = lane; item < ITEMS; item += 32) count += __popc(scratch.kept[item]);
  return static_cast<unsigned>(warp_sum(count));
}

// The positions of the run's kept points, in index order, into scratch.positions.
__device__ __forceinline__ void list_kept(RunScratch& scratch) {
  const unsigned lane = lane_id();
  const unsigned lanes_below = (1u << lane) - 1u;
  unsigned listed = 0;
  for (int item = 0; item < ITEMS; ++item) {
    const unsigned kept = scratch.kept[item];
    if ((kept >> lane & 1u) != 0)
      scratch.positions[listed + __popc(kept & lanes_below)] =
          static_cast<unsigned short>(item * 32 + lane);
    listed += __popc(kept);
  }
  __syncwarp();
}

__device__ __forceinline__ unsigned long long load_run_status(const unsigned long long* status) {
  return *static_cast<const volatile unsigned long long*>(status);
}

__device__ __forceinline__ void store_run_status(unsigned long long* status,
                                                 unsigned long long word) {
  *static_cast<volatile unsigned long long*>(status) = word;
}

// Where run `run`'s `count` kept points start: the kept points of every run before it, from their
// status words, read 32 at a time, nearest first, until one holds the count through it; then the
// count through this run is published for the runs after it. Every lane gets the answer.
__device__ __forceinline__ unsigned long long run_start(unsigned long long* run_status,
                                                        unsigned long long run,
                                                        unsigned long long count) {
  const unsigned lane = lane_id();
  if (run == 0) {
    if (lane == 0) store_run_status(&run_status[0], RUN_PLACED | count);
    return 0;
  }
  if (lane == 0) store_run_status(&run_status[run], RUN_COUNTED | count);
  unsigned long long before = 0;
  long long window_end = static_cast<long long>(run);  // this round reads the 32 runs before it
  for (;;) {
    const long long other = window_end - 1 - static_cast<long long>(lane);
    unsigned long long word = other >= 0 ? load_run_status(&run_status[other]) : RUN_PLACED;
    while (__any_sync(FULL_WARP, (word & RUN_FLAGS) == 0))
      if ((word & RUN_FLAGS) == 0) word = load_run_status(&run_status[other]);
    const unsigned placed = __ballot_sync(FULL_WARP, (word & RUN_FLAGS) == RUN_PLACED);
    // The nearest run that holds the count through it ends the look-back: runs before it are in it.
    const unsigned nearest = placed != 0 ? static_cast<unsigned>(__ffs(placed) - 1) : 31u;
    before += warp_sum(lane <= nearest ? word & ~RUN_FLAGS : 0ull);
    if (placed != 0) break;
    window_end -= 32;
  }
  if (lane == 0) store_run_status(&run_status[run], RUN_PLACED | (before + count));
  return before;
}

// The index of the bounded slab's point at `position`: the last run starting at or before it
// holds it, and deciding that run again tells which of its points it is. Every lane of the warp
// must call it.
__device__ __forceinline__ unsigned long long index_of_position(
    const PointGenerator& generator, unsigned long long n, const SlabRange& range,
    const unsigned long long* __restrict__ run_offsets, unsigned long long runs,
    unsigned long long position, RunScratch& scratch) {
  unsigned long long low = 0;
  unsigned long long high = runs;
  while (low < high) {
    const unsigned long long middle = low + (high - low) / 2;
    if (run_offsets[middle] <= position)
      low = middle + 1;
    else
      high = middle;
  }
  const unsigned long long run = low - 1;
  decide_run(generator, n, range, run, scratch);
  list_kept(scratch);
  return run * RUN + scratch.positions[position - run_offsets[run]];
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
    sample_pick(const int* __restrict__ sorted_values, const unsigned* __restrict__ sorted_keys,
                unsigned long long samples, int parts, unsigned long long band,
                SamplePick* __restrict__ picks) {
  for (int r = 1 + static_cast<int>(threadIdx.x); r < parts; r += BLOCK_SIZE) {
    const unsigned long long q =
        static_cast<unsigned long long>(r) * samples / static_cast<unsigned long long>(parts);
    picks[r - 1] = SamplePick{sorted_values[q], sorted_keys[q > band ? q - band : 0],
                              sorted_keys[q + band < samples ? q + band : samples - 1]};
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    slab_make(PointGenerator generator, unsigned long long n, SlabRange range,
              unsigned long long runs, unsigned long long capacity, SlabEdges edges,
              unsigned long long* run_status, unsigned long long* __restrict__ run_offsets,
              SlabCensus* census, float2* __restrict__ points,
              SlabPoint* __restrict__ edge_points) {
  __shared__ RunScratch scratches[WARPS];
  __shared__ unsigned long long warp_kept[WARPS];
  RunScratch& scratch = scratches[threadIdx.x / 32];
  const unsigned lane = lane_id();
  const bool whole_set = range.has_after == 0 && range.has_through == 0;
  BoxWords box = empty_box();
  unsigned long long kept_by_warp = 0;
  for (;;) {
    unsigned long long run = 0;
    if (lane == 0) run = atomicAdd(&census->next_run, 1ull);
    run = __shfl_sync(FULL_WARP, run, 0);
    if (run >= runs) break;
    const unsigned long long first = run * RUN;
    unsigned count = 0;
    unsigned long long start = first;
    if (whole_set) {
      count = static_cast<unsigned>(min(static_cast<unsigned long long>(RUN), n - first));
    } else {
      count = decide_run(generator, n, range, run, scratch);
      if (points != nullptr) {
        start = run_start(run_status, run, count);
        if (lane == 0) run_offsets[run] = start;
      }
      list_kept(scratch);
    }
    for (unsigned t = lane; t < count; t += 32) {
      const unsigned long long k = first + (whole_set ? t : scratch.positions[t]);
      const GeneratedCoordinates point = generated_point(generator, k);
      const unsigned long long slot = start + t;
      if (points != nullptr && slot < capacity) points[slot] = make_float2(point.x, point.y);
      box = box_with(box, point.x, point.y);
      if (near_slab_edge(edges, point.x))
        append_edge_point(edges, point.x, point.y, k, edge_points, &census->edge_count);
    }
    kept_by_warp += count;
    __syncwarp();  // the next run lists its positions over these
  }
  if (lane == 0) warp_kept[threadIdx.x / 32] = kept_by_warp;
  box = block_box<BLOCK_SIZE>(box);  // its barrier also orders warp_kept
  if (threadIdx.x == 0) {
    unsigned long long kept_by_block = 0;
    for (int warp = 0; warp < WARPS; ++warp) kept_by_block += warp_kept[warp];
    if (kept_by_block > 0) {
      atomicAdd(&census->kept, kept_by_block);
      atomicMax(&census->low_x_complement, ~box.low_x);
      atomicMax(&census->low_y_complement, ~box.low_y);
      atomicMax(&census->high_x, box.high_x);
      atomicMax(&census->high_y, box.high_y);
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    slab_pair(const PairMinimum* __restrict__ minimum, const float2* __restrict__ points,
              const unsigned long long* __restrict__ indices,
              const unsigned long long* __restrict__ run_offsets, unsigned long long runs,
              PointGenerator generator, unsigned long long n, SlabRange range,
              SlabPair* __restrict__ pair) {
  __shared__ RunScratch scratches[2];
  const unsigned warp = threadIdx.x / 32;
  if (warp >= 2) return;
  const int position = warp == 0 ? minimum->first : minimum->second;
  if (position < 0) return;  // no pair: fewer than 2 points, which the host refuses first
  const float2 point = points[position];
  const auto at = static_cast<unsigned long long>(position);
  unsigned long long index = at;
  if (indices != nullptr)
    index = indices[at];
  else if (run_offsets != nullptr)
    index = index_of_position(generator, n, range, run_offsets, runs, at, scratches[warp]);
  if (lane_id() == 0) {
    (warp == 0 ? pair->first : pair->second) = SlabPoint{point.x, point.y, index};
    if (warp == 0) pair->distance_squared = minimum->distance_squared;
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    slab_indices(PointGenerator generator, unsigned long long n, SlabRange range,
                 unsigned long long runs, const unsigned long long* __restrict__ run_offsets,
                 unsigned long long* __restrict__ indices) {
  __shared__ RunScratch scratches[WARPS];
  RunScratch& scratch = scratches[threadIdx.x / 32];
  for (unsigned long long run = global_warp(); run < runs; run += warps_in_grid()) {
    const unsigned count = decide_run(generator, n, range, run, scratch);
    list_kept(scratch);
    for (unsigned t = lane_id(); t < count; t += 32)
      indices[run_offsets[run] + t] = run * RUN + scratch.positions[t];
    __syncwarp();
  }
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
      append_edge_point(edges, point.x, point.y, indices != nullptr ? indices[k] : k, out, count);
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
