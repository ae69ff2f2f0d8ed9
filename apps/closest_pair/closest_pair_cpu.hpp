// The CPU closest-pair methods, in fp64 throughout: the references the GPU methods are checked
// against. Pure functions of their input; thread-safe. Callers (closest_pair) validate the input:
// at least 2 points, finite coordinates.
#pragma once

#include <cstddef>
#include <span>

#include "apps/closest_pair/closest_pair.hpp"

namespace ptxrt::apps {

struct PairFound {
  std::size_t i = 0;  // i < j
  std::size_t j = 0;
  double distance_squared = 0.0;
};

// Every pair; on ties the smallest (i, j).
PairFound cpu_brute_force(std::span<const Point2> points);
// Every pair, block by block (`block` points of i against `block` points of j, so both stay in
// cache); the same result as cpu_brute_force, ties included. Throws Error(invalid_argument) for
// block == 0.
PairFound cpu_blocked(std::span<const Point2> points, std::size_t block);
// O(n log n): sort by x, split at the median, merge the halves by y and compare the points of
// the strip around the dividing line with their next 7 neighbours in y. `sort_ms` (optional)
// receives the time of the x sort.
PairFound cpu_divide_conquer(std::span<const Point2> points, double* sort_ms = nullptr);

}  // namespace ptxrt::apps
