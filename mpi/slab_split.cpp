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

RightBand right_band(std::span<const IndexedPoint> slab, double radius) {
  RightBand band;
  if (slab.empty()) return band;
  band.empty = false;
  band.last_x = std::max_element(slab.begin(), slab.end(), [](const auto& a, const auto& b) {
                  return a.x < b.x;
                })->x;
  band.low_y = std::numeric_limits<float>::infinity();
  band.high_y = -std::numeric_limits<float>::infinity();
  for (const IndexedPoint& point : slab)
    if (in_band(point, band, radius)) {
      band.low_y = std::min(band.low_y, point.y);
      band.high_y = std::max(band.high_y, point.y);
    }
  return band;
}

bool in_band(const IndexedPoint& point, const RightBand& band, double radius) {
  return static_cast<double>(band.last_x) - point.x <= radius;
}

bool near_band(const IndexedPoint& point, const RightBand& band, double radius) {
  return !band.empty && static_cast<double>(point.x) - band.last_x <= radius &&
         static_cast<double>(band.low_y) - point.y <= radius &&
         static_cast<double>(point.y) - band.high_y <= radius;
}

double search_radius(double distance) { return distance * (1.0 + 0x1p-40); }

}  // namespace ptxrt::mpi::detail
