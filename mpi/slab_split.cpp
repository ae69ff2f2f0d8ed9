#include "mpi/slab_split.hpp"

#include <algorithm>
#include <tuple>

namespace ptxrt::mpi::detail {

bool key_less(const IndexedPoint& a, const IndexedPoint& b) {
  return std::tie(a.x, a.y, a.index) < std::tie(b.x, b.y, b.index);
}

std::vector<IndexedPoint> regular_sample(std::span<const IndexedPoint> sorted, std::size_t count) {
  if (sorted.size() <= count) return {sorted.begin(), sorted.end()};
  std::vector<IndexedPoint> sample;
  sample.reserve(count);
  // The middle of each of `count` equal runs.
  for (std::size_t k = 0; k < count; ++k)
    sample.push_back(sorted[(2 * k + 1) * sorted.size() / (2 * count)]);
  return sample;
}

std::vector<IndexedPoint> choose_splitters(std::span<const IndexedPoint> samples, int parts) {
  std::vector<IndexedPoint> splitters;
  if (samples.empty()) return splitters;
  const auto count = static_cast<std::size_t>(parts);
  for (std::size_t r = 1; r < count; ++r) splitters.push_back(samples[r * samples.size() / count]);
  return splitters;
}

std::vector<std::size_t> slab_counts(std::span<const IndexedPoint> sorted,
                                     std::span<const IndexedPoint> splitters) {
  std::vector<std::size_t> counts;
  auto begin = sorted.begin();
  for (const IndexedPoint& splitter : splitters) {
    const auto end = std::upper_bound(begin, sorted.end(), splitter, key_less);
    counts.push_back(static_cast<std::size_t>(end - begin));
    begin = end;
  }
  counts.push_back(static_cast<std::size_t>(sorted.end() - begin));
  return counts;
}

RightBand right_band(std::span<const IndexedPoint> slab, double radius) {
  RightBand band;
  if (slab.empty()) return band;
  band.empty = false;
  band.last_x = slab.back().x;
  band.low_y = band.high_y = slab.back().y;
  for (auto point = slab.rbegin(); point != slab.rend() && in_band(*point, band, radius); ++point) {
    band.low_y = std::min(band.low_y, point->y);
    band.high_y = std::max(band.high_y, point->y);
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
