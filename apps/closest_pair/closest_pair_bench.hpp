// The closest-pair benchmark (GPU; report only): points of one distribution at sizes 1M, 10M,
// 100M (up to a limit), each GPU method where it is sensible (brute force up to 1M) and the CPU
// divide & conquer up to 10M, every method's distance checked against the others at the same
// size. GPU methods start from pinned host memory (the end-to-end path: upload, check, sort,
// search) and run once untimed first, so compilation and first-touch costs stay out of the table
// (set-up then shows what a warm call pays).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/point_generator.hpp"

namespace ptxrt::apps {

struct ClosestPairBenchRow {
  std::size_t n = 0;
  ClosestPairMethod method = ClosestPairMethod::automatic;
  ClosestPairTimes times;
  double distance = 0.0;
  bool agrees = true;  // the same distance as the first method run at this n
};

struct ClosestPairBenchOptions {
  std::size_t max_n = 100'000'000;
  std::size_t brute_force_max_n = 1'000'000;
  std::size_t cpu_max_n = 10'000'000;
  PointDistribution distribution = PointDistribution::uniform;
  std::uint64_t seed = 1;
  ClosestPairOptions closest_pair;  // BASE, context, Jit
};

// Sizes 1M, 10M, 100M that are <= max_n (max_n itself when below 1M).
std::vector<std::size_t> closest_pair_bench_sizes(std::size_t max_n);

std::vector<ClosestPairBenchRow> run_closest_pair_bench(const ClosestPairBenchOptions& options);

}  // namespace ptxrt::apps
