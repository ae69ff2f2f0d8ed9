#include "apps/closest_pair/point_generator.hpp"

#include <string>

#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

static_assert(static_cast<int>(PointDistribution::uniform) == GENERATED_UNIFORM &&
                  static_cast<int>(PointDistribution::normal) == GENERATED_NORMAL &&
                  static_cast<int>(PointDistribution::clustered) == GENERATED_CLUSTERED,
              "the kernels take a distribution by its value");

std::string_view to_string(PointDistribution distribution) {
  switch (distribution) {
    case PointDistribution::uniform:
      return "uniform";
    case PointDistribution::normal:
      return "normal";
    case PointDistribution::clustered:
      return "clustered";
  }
  return "unknown";
}

PointDistribution parse_point_distribution(std::string_view name) {
  for (PointDistribution distribution :
       {PointDistribution::uniform, PointDistribution::normal, PointDistribution::clustered})
    if (to_string(distribution) == name) return distribution;
  throw Error(ErrorKind::invalid_argument, "unknown point distribution '" + std::string(name) +
                                               "'; known: uniform, normal, clustered");
}

std::vector<Point2> generate_points(std::size_t n, PointDistribution distribution,
                                    std::uint64_t seed) {
  return generate_point_range(0, n, distribution, seed);
}

PointGenerator point_generator(PointDistribution distribution, std::uint64_t seed) {
  return make_point_generator(static_cast<int>(distribution), seed);
}

std::vector<Point2> generate_point_range(std::uint64_t first, std::size_t count,
                                         PointDistribution distribution, std::uint64_t seed) {
  const PointGenerator generator = point_generator(distribution, seed);
  std::vector<Point2> points(count);
  for (std::size_t k = 0; k < count; ++k) {
    const GeneratedCoordinates point = generated_point(generator, first + k);
    points[k] = {point.x, point.y};
  }
  return points;
}

}  // namespace ptxrt::apps
