// The slabs of a distributed closest pair: a point with its index in the whole set, the range of
// keys a slab holds, and what the slab kernels (closest_pair_slab.cu) report. Compiled by NVRTC
// and by the host compiler (host/closest_pair/point_slab.cpp, device_slab.cpp), so that the CPU
// and the GPU keep the same points in a slab.
#pragma once

#include "closest_pair_math.cuh"

// A point and its index in the whole set: 16 bytes, the layout of ptxrt::mpi::IndexedPoint.
struct SlabPoint {
  float x;
  float y;
  unsigned long long index;
};

// The keys a slab holds, in the order of x, then y, then index: above `after` when has_after, up
// to and including `through` when has_through. Neither: the whole set.
struct SlabRange {
  SlabPoint after;
  SlabPoint through;
  int has_after;
  int has_through;
};

// A splitter a sample placed (sample_pick): its number in the sample, and the ordered words of the
// x of the sample points `band` places before and after it in x order.
struct SamplePick {
  int number;
  unsigned band_low_word;
  unsigned band_high_word;
};

// What slab_make reports, all zero before it runs: the runs claimed so far (each by the warp that
// makes it, in index order), the points kept (all of them, also past the room it was given), the
// points near the edges (all counted; up to their capacity written), and the kept points' box as
// ordered words, the low corner complemented so that zero is the empty box.
struct SlabCensus {
  unsigned long long next_run;
  unsigned long long kept;
  unsigned long long edge_count;
  unsigned low_x_complement;
  unsigned low_y_complement;
  unsigned high_x;
  unsigned high_y;
};

// The pair a search found in a slab, as points with their indices in the whole set (slab_pair).
struct SlabPair {
  SlabPoint first;
  SlabPoint second;
  double distance_squared;
};

// Which points of a slab lie near its edges: x at most left_until or at least right_from (either
// may be infinite). Up to `capacity` of them are written; all are counted.
struct SlabEdges {
  double left_until;
  double right_from;
  unsigned long long capacity;
};

CLOSEST_PAIR_FUNCTION bool key_precedes(float ax, float ay, unsigned long long a_index,
                                        const SlabPoint& b) {
  if (ax != b.x) return ax < b.x;
  if (ay != b.y) return ay < b.y;
  return a_index < b.index;
}

CLOSEST_PAIR_FUNCTION bool key_follows(float ax, float ay, unsigned long long a_index,
                                       const SlabPoint& b) {
  if (ax != b.x) return ax > b.x;
  if (ay != b.y) return ay > b.y;
  return a_index > b.index;
}

CLOSEST_PAIR_FUNCTION bool key_in_range(const SlabRange& range, float x, float y,
                                        unsigned long long index) {
  if (range.has_after != 0 && !key_follows(x, y, index, range.after)) return false;
  return range.has_through == 0 || !key_follows(x, y, index, range.through);
}

// Whether every key with x in [low, high] lies in the range (1), none does (-1), or x does not
// tell (0: the interval reaches a bound's x, where y and the index decide).
CLOSEST_PAIR_FUNCTION int range_side(const SlabRange& range, float low, float high) {
  const bool above_after = range.has_after == 0 || low > range.after.x;
  const bool below_through = range.has_through == 0 || high < range.through.x;
  if (above_after && below_through) return 1;
  const bool below_after = range.has_after != 0 && high < range.after.x;
  const bool above_through = range.has_through != 0 && low > range.through.x;
  return below_after || above_through ? -1 : 0;
}

CLOSEST_PAIR_FUNCTION bool near_slab_edge(const SlabEdges& edges, float x) {
  return static_cast<double>(x) <= edges.left_until || static_cast<double>(x) >= edges.right_from;
}
