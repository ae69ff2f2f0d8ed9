#include "apps/closest_pair/point_slab.hpp"

#include <algorithm>
#include <string>

#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

bool key_less(const SlabPoint& a, const SlabPoint& b) { return key_precedes(a.x, a.y, a.index, b); }

SlabPoint generated_key(const PointGenerator& generator, std::uint64_t k) {
  const GeneratedCoordinates point = generated_point(generator, k);
  return {point.x, point.y, k};
}

SlabRange slab_range(std::span<const SlabPoint> splitters, std::size_t slab) {
  SlabRange range{};
  if (slab > 0) {
    range.after = splitters[slab - 1];
    range.has_after = 1;
  }
  if (slab < splitters.size()) {
    range.through = splitters[slab];
    range.has_through = 1;
  }
  return range;
}

std::vector<SlabPoint> generate_slab(const PointGenerator& generator, std::uint64_t count,
                                     const SlabRange& range) {
  std::vector<SlabPoint> slab;
  for (std::uint64_t k = 0; k < count; ++k) {
    const SlabPoint point = generated_key(generator, k);
    if (key_in_range(range, point.x, point.y, point.index)) slab.push_back(point);
  }
  return slab;
}

std::vector<SlabPoint> sample_splitters(const PointGenerator& generator, std::uint64_t count,
                                        int parts, std::uint64_t samples) {
  if (parts < 1 || samples == 0 || count == 0)
    throw Error(ErrorKind::invalid_argument,
                "sample_splitters: " + std::to_string(parts) + " parts of " +
                    std::to_string(count) + " points by a sample of " + std::to_string(samples));
  samples = std::min(samples, count);
  std::vector<SlabPoint> sample;
  sample.reserve(samples);
  for (std::uint64_t j = 0; j < samples; ++j)
    sample.push_back(generated_key(generator, sample_position(j, count, samples)));
  std::sort(sample.begin(), sample.end(), key_less);
  std::vector<SlabPoint> splitters;
  for (std::uint64_t r = 1; r < static_cast<std::uint64_t>(parts); ++r)
    splitters.push_back(sample[r * samples / static_cast<std::uint64_t>(parts)]);
  return splitters;
}

}  // namespace ptxrt::apps
