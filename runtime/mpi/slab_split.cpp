#include "mpi/slab_split.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>

namespace ptxrt::mpi::detail {

bool key_less(const IndexedPoint& a, const IndexedPoint& b) {
  return std::tie(a.x, a.y, a.index) < std::tie(b.x, b.y, b.index);
}

std::vector<IndexedPoint> random_sample(std::span<const IndexedPoint> points, std::size_t count,
                                        std::uint64_t seed) {
  std::vector<IndexedPoint> sample;
  if (points.size() <= count) {
    sample.assign(points.begin(), points.end());
  } else {
    // Random positions rather than every k-th: an input that repeats with period k (a file
    // written row by row) would otherwise yield a sample of one row.
    std::mt19937_64 generator(seed);
    std::uniform_int_distribution<std::size_t> position(0, points.size() - 1);
    sample.reserve(count);
    for (std::size_t k = 0; k < count; ++k) sample.push_back(points[position(generator)]);
  }
  std::sort(sample.begin(), sample.end(), key_less);
  return sample;
}

std::vector<IndexedPoint> choose_splitters(std::span<const IndexedPoint> samples, int parts) {
  std::vector<IndexedPoint> splitters;
  if (samples.empty()) return splitters;
  const auto count = static_cast<std::size_t>(parts);
  for (std::size_t r = 1; r < count; ++r) splitters.push_back(samples[r * samples.size() / count]);
  return splitters;
}

std::size_t slab_of(const IndexedPoint& point, std::span<const IndexedPoint> splitters) {
  return static_cast<std::size_t>(
      std::lower_bound(splitters.begin(), splitters.end(), point, key_less) - splitters.begin());
}

SlabPartition partition_into_slabs(std::span<const IndexedPoint> points,
                                   std::span<const IndexedPoint> splitters) {
  SlabPartition partition;
  partition.counts.assign(splitters.size() + 1, 0);
  // 4 bytes a point: a slab count is far below 2^32.
  std::vector<std::uint32_t> slabs(points.size());
  for (std::size_t k = 0; k < points.size(); ++k) {
    const std::size_t slab = slab_of(points[k], splitters);
    slabs[k] = static_cast<std::uint32_t>(slab);
    ++partition.counts[slab];
  }
  std::vector<std::size_t> next(partition.counts.size());
  std::exclusive_scan(partition.counts.begin(), partition.counts.end(), next.begin(),
                      std::size_t{0});
  partition.points.resize(points.size());
  for (std::size_t k = 0; k < points.size(); ++k) partition.points[next[slabs[k]]++] = points[k];
  return partition;
}

SlabRange slab_range(std::span<const IndexedPoint> splitters, int rank) {
  const auto slab = static_cast<std::size_t>(rank);
  SlabRange range;
  if (slab > 0) range.after = splitters[slab - 1];
  if (slab < splitters.size()) range.through = splitters[slab];
  return range;
}

EdgeReach edge_reach(const SlabRange& range, double radius) {
  const double infinity = std::numeric_limits<double>::infinity();
  return {range.after ? static_cast<double>(range.after->x) + radius : -infinity,
          range.through ? static_cast<double>(range.through->x) - radius : infinity};
}

BorderBox bounding_box(std::span<const IndexedPoint> points) {
  BorderBox box;
  for (const IndexedPoint& point : points) {
    if (box.empty) {
      box = {false, point.x, point.y, point.x, point.y};
      continue;
    }
    box.low_x = std::min(box.low_x, point.x);
    box.low_y = std::min(box.low_y, point.y);
    box.high_x = std::max(box.high_x, point.x);
    box.high_y = std::max(box.high_y, point.y);
  }
  return box;
}

bool near_box(const IndexedPoint& point, const BorderBox& box, double radius) {
  const auto beyond = [radius](double low, double high, double value) {
    return value < low - radius || value > high + radius;
  };
  return !box.empty && !beyond(box.low_x, box.high_x, point.x) &&
         !beyond(box.low_y, box.high_y, point.y);
}

double search_radius(double distance) { return distance * (1.0 + 0x1p-40); }

}  // namespace ptxrt::mpi::detail
