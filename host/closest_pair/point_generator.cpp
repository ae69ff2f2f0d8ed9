#include "host/closest_pair/point_generator.hpp"

#include <random>
#include <string>

#include "ptxrt/error.hpp"

namespace ptxrt::host {

namespace {

constexpr int cluster_count = 64;
constexpr float cluster_sigma = 0.01f;

}  // namespace

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
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<Point2> points(n);
  switch (distribution) {
    case PointDistribution::uniform:
      for (Point2& p : points) p = {unit(generator), unit(generator)};
      break;
    case PointDistribution::normal:
      for (Point2& p : points) p = {normal(generator), normal(generator)};
      break;
    case PointDistribution::clustered: {
      std::vector<Point2> centres(cluster_count);
      for (Point2& centre : centres) centre = {unit(generator), unit(generator)};
      std::uniform_int_distribution<int> pick(0, cluster_count - 1);
      for (Point2& p : points) {
        const Point2& centre = centres[static_cast<std::size_t>(pick(generator))];
        p = {centre.x + cluster_sigma * normal(generator),
             centre.y + cluster_sigma * normal(generator)};
      }
      break;
    }
  }
  return points;
}

}  // namespace ptxrt::host
