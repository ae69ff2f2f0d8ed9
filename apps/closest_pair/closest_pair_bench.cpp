#include "apps/closest_pair/closest_pair_bench.hpp"

#include <algorithm>

#include "ptxrt/core/memory.hpp"

namespace ptxrt::apps {

std::vector<std::size_t> closest_pair_bench_sizes(std::size_t max_n) {
  std::vector<std::size_t> sizes;
  for (std::size_t n = 1'000'000; n <= max_n; n *= 10) sizes.push_back(n);
  if (sizes.empty()) sizes.push_back(max_n);
  return sizes;
}

std::vector<ClosestPairBenchRow> run_closest_pair_bench(const ClosestPairBenchOptions& options) {
  ClosestPairOptions gpu_options = options.closest_pair;
  if (!gpu_options.context) gpu_options.context = Context::primary(0);
  std::vector<ClosestPairBenchRow> rows;
  for (std::size_t n : closest_pair_bench_sizes(options.max_n)) {
    const std::vector<Point2> points = generate_points(n, options.distribution, options.seed);
    PinnedBuffer<Point2> pinned(*gpu_options.context, n);
    std::copy(points.begin(), points.end(), pinned.span().begin());
    std::vector<ClosestPairMethod> methods{ClosestPairMethod::grid,
                                           ClosestPairMethod::divide_conquer};
    if (n <= options.brute_force_max_n) methods.push_back(ClosestPairMethod::brute_force);
    if (n <= options.cpu_max_n) methods.push_back(ClosestPairMethod::cpu_divide_conquer);
    const std::size_t first_row = rows.size();
    for (ClosestPairMethod method : methods) {
      ClosestPair found;
      if (is_gpu_method(method)) {
        closest_pair(pinned, method, gpu_options);
        found = closest_pair(pinned, method, gpu_options);
      } else {
        found = closest_pair(points, method, options.closest_pair);
      }
      const double reference = rows.size() > first_row ? rows[first_row].distance : found.distance;
      rows.push_back({n, method, found.times, found.distance, found.distance == reference});
    }
  }
  return rows;
}

}  // namespace ptxrt::apps
