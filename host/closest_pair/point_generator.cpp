#include "host/closest_pair/point_generator.hpp"

#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "ptxrt/error.hpp"

namespace ptxrt::host {

namespace {

constexpr std::uint64_t cluster_count = 64;
constexpr double cluster_sigma = 0.01;
constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15;
// Draws per point: enough for every distribution (clustered takes three).
constexpr std::uint64_t draws_per_point = 4;

// splitmix64 (Steele, Lea and Flood, 2014): its k-th word is mix(seed + k·gamma), a function of
// k alone, which is what lets a range of points be generated without the points before it.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

class Stream {
 public:
  explicit Stream(std::uint64_t seed) : base_(mix(seed)) {}
  std::uint64_t word(std::uint64_t position) const {
    return mix(base_ + (position + 1) * golden_gamma);
  }

 private:
  std::uint64_t base_;
};

// [0, 1) on the float grid of 2^-24: every value exact.
float unit(std::uint64_t word) { return static_cast<float>(word >> 40) * 0x1p-24f; }

// Two standard normals from two words (Box-Muller; the first uniform in (0, 1], never 0).
std::pair<double, double> normals(std::uint64_t first, std::uint64_t second) {
  const double radius =
      std::sqrt(-2.0 * std::log(static_cast<double>((first >> 11) + 1) * 0x1p-53));
  const double angle = 2.0 * std::numbers::pi * static_cast<double>(second >> 11) * 0x1p-53;
  return {radius * std::cos(angle), radius * std::sin(angle)};
}

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
  return generate_point_range(0, n, distribution, seed);
}

std::vector<Point2> generate_point_range(std::uint64_t first, std::size_t count,
                                         PointDistribution distribution, std::uint64_t seed) {
  const Stream stream(seed);
  // The cluster centres come from a stream of their own, shared by every range.
  const Stream centre_stream(~seed);
  std::vector<Point2> points(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint64_t position = (first + k) * draws_per_point;
    const auto word = [&](std::uint64_t draw) { return stream.word(position + draw); };
    switch (distribution) {
      case PointDistribution::uniform:
        points[k] = {unit(word(0)), unit(word(1))};
        break;
      case PointDistribution::normal: {
        const auto [x, y] = normals(word(0), word(1));
        points[k] = {static_cast<float>(x), static_cast<float>(y)};
        break;
      }
      case PointDistribution::clustered: {
        const std::uint64_t cluster = word(2) % cluster_count;
        const auto [dx, dy] = normals(word(0), word(1));
        points[k] = {
            static_cast<float>(unit(centre_stream.word(2 * cluster)) + cluster_sigma * dx),
            static_cast<float>(unit(centre_stream.word(2 * cluster + 1)) + cluster_sigma * dy)};
        break;
      }
    }
  }
  return points;
}

}  // namespace ptxrt::host
