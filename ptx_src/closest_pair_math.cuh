// Closest pair: the arithmetic the kernels and their host code share. This header is compiled by
// NVRTC (for closest_pair*.cu) and by the host compiler (host/closest_pair*.cpp and the CPU
// tests), so the exactness rules the CPU tests check are the ones the GPU runs.
//
// Exactness. Kernels compare squared distances in fp32, which may order two nearly equal pairs
// wrongly (each fp32 distance is off by a few ulps) and underflows to 0 for |d| < ~1e-22. So a
// search keeps two things: `bound`, the smallest fp32 squared distance seen, which prunes; and
// the best *candidate* in fp64, the exact order. Every pair whose fp32 distance is within
// candidate_threshold(bound) — a relative 2^-16 plus a few subnormal ulps, far more than fp32
// rounding can move a distance — has its fp64 distance computed. The pair with the true minimum
// always passes that test when visited (its fp32 distance is at most the fp32 minimum plus the
// rounding), so the smallest candidate over every visited pair is the exact fp64 minimum, as long
// as the method visits every pair within pruning_radius(bound) of each other.
#pragma once

#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif

#if defined(__CUDACC__)
#define CLOSEST_PAIR_FUNCTION __host__ __device__ __forceinline__
#else
#define CLOSEST_PAIR_FUNCTION inline
#endif

// The best pair a thread, block or whole search has found. 24 bytes, the same on host and device
// (host/closest_pair_gpu.hpp checks the layout): kernels write arrays of these.
struct PairMinimum {
  float bound;              // smallest fp32 squared distance seen (+inf: none)
  int unused;               // keeps the double 8-byte aligned in arrays
  double distance_squared;  // fp64 squared distance of the best candidate (+inf: none)
  int first;                // input indices of the best candidate, first < second; -1 when none
  int second;
};

// fp32 squared distance, never 0 for distinct points: a difference too small to square (it
// underflows) counts as the smallest subnormal, so an exact duplicate stays strictly best.
CLOSEST_PAIR_FUNCTION float pair_distance_squared_f32(float ax, float ay, float bx, float by) {
#if defined(__clang__) && !defined(__CUDA_ARCH__)
  // clang fuses a * b + c by default, and folds the fused form even for targets without FMA
  // instructions; the host's fp32 rounding must not depend on the compiler or its constants.
#pragma clang fp contract(off)
#endif
  const float dx = ax - bx;
  const float dy = ay - by;
  const float squared = dx * dx + dy * dy;
  if (squared == 0.0f && (dx != 0.0f || dy != 0.0f)) return 0x1p-149f;
  return squared;
}

// fp64 squared distance, rounded step by step (no fused multiply-add on either side), so that
// host and device agree bit for bit: the CPU reference defines "the true minimum" with it.
CLOSEST_PAIR_FUNCTION double pair_distance_squared_f64(float ax, float ay, float bx, float by) {
  const double dx = static_cast<double>(ax) - static_cast<double>(bx);
  const double dy = static_cast<double>(ay) - static_cast<double>(by);
#if defined(__CUDA_ARCH__)
  return __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy));
#else
  return dx * dx + dy * dy;
#endif
}

// Pairs whose fp32 squared distance is at most this get an fp64 distance (see the top).
CLOSEST_PAIR_FUNCTION float candidate_threshold(float bound) {
  return bound * (1.0f + 0x1p-16f) + 0x1p-140f;
}

// Every pair with fp32 squared distance <= candidate_threshold(bound) is closer than this, in
// exact arithmetic and also as fp32 computes |x - x'| and |y - y'|: the margin (2^-12 relative,
// 2^-68 absolute) dwarfs the rounding of the threshold, of sqrtf and of the differences.
CLOSEST_PAIR_FUNCTION float pruning_radius(float bound) {
  return sqrtf(bound) * (1.0f + 0x1p-12f) + 0x1p-68f;
}

// The total order on candidates: distance, then first, then second (pairs of -1 come last only
// through their infinite distance).
CLOSEST_PAIR_FUNCTION bool candidate_precedes(double distance_squared, int first, int second,
                                              const PairMinimum& other) {
  if (distance_squared != other.distance_squared) return distance_squared < other.distance_squared;
  if (first != other.first) return first < other.first;
  return second < other.second;
}

CLOSEST_PAIR_FUNCTION float infinite_distance() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7f800000);
#else
  return HUGE_VALF;
#endif
}

CLOSEST_PAIR_FUNCTION PairMinimum no_pair_yet(float bound) {
  PairMinimum minimum;
  minimum.bound = bound;
  minimum.unused = 0;
  minimum.distance_squared = static_cast<double>(infinite_distance());
  minimum.first = -1;
  minimum.second = -1;
  return minimum;
}

// Folds `other` into `into` (bounds by min, candidates by candidate_precedes).
CLOSEST_PAIR_FUNCTION void merge_minimum(PairMinimum& into, const PairMinimum& other) {
  if (other.bound < into.bound) into.bound = other.bound;
  if (candidate_precedes(other.distance_squared, other.first, other.second, into)) {
    into.distance_squared = other.distance_squared;
    into.first = other.first;
    into.second = other.second;
  }
}

// One thread's search state: the running minimum and its candidate threshold, kept together so
// the hot loop tests one float.
struct PairSearch {
  PairMinimum minimum;
  float threshold;
};

CLOSEST_PAIR_FUNCTION PairSearch start_search(float bound) {
  PairSearch search;
  search.minimum = no_pair_yet(bound);
  search.threshold = candidate_threshold(bound);
  return search;
}

// Records the pair (a, b) of input indices a_index != b_index, whose fp32 squared distance
// `squared` is within search.threshold.
CLOSEST_PAIR_FUNCTION void record_candidate(PairSearch& search, float squared, float ax, float ay,
                                            int a_index, float bx, float by, int b_index) {
  if (squared < search.minimum.bound) {
    search.minimum.bound = squared;
    search.threshold = candidate_threshold(squared);
  }
  const double exact = pair_distance_squared_f64(ax, ay, bx, by);
  const int first = a_index < b_index ? a_index : b_index;
  const int second = a_index < b_index ? b_index : a_index;
  if (candidate_precedes(exact, first, second, search.minimum)) {
    search.minimum.distance_squared = exact;
    search.minimum.first = first;
    search.minimum.second = second;
  }
}

// Visits the pair (a, b) of input indices a_index != b_index.
CLOSEST_PAIR_FUNCTION void consider_pair(PairSearch& search, float ax, float ay, int a_index,
                                         float bx, float by, int b_index) {
  const float squared = pair_distance_squared_f32(ax, ay, bx, by);
  if (squared <= search.threshold)
    record_candidate(search, squared, ax, ay, a_index, bx, by, b_index);
}

// Brute force enumerates pairs of tiles (a, b) with a <= b; block k of the triangle gets
// b = the largest with b(b+1)/2 <= k and a = k - b(b+1)/2, so that every block does one tile's
// worth of work (a diagonal block half of it).
CLOSEST_PAIR_FUNCTION void triangle_tile_pair(long long k, long long& a, long long& b) {
  long long row = static_cast<long long>((sqrt(8.0 * static_cast<double>(k) + 1.0) - 1.0) / 2.0);
  // The double square root may land one off for large k; step to the exact row.
  while (row * (row + 1) / 2 > k) --row;
  while ((row + 1) * (row + 2) / 2 <= k) ++row;
  b = row;
  a = k - row * (row + 1) / 2;
}
