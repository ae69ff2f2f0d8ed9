// Random 2-D point sets for the closest-pair programs and tests. Counter-based: point k is a
// function of (distribution, seed, k) alone, so that any range of a set can be made by itself,
// as each rank of a distributed run makes its own part of one set, whatever the number of ranks.
// The arithmetic is ptx_src/point_generator.cuh's, which the GPU runs too (closest_pair_slab.cu):
// both make the same points. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"
#include "ptx_src/point_generator.cuh"

namespace ptxrt::apps {

enum class PointDistribution {
  uniform,    // the unit square
  normal,     // standard normal in x and y
  clustered,  // 64 centres in the unit square, each point normal around one (sigma 0.01)
};

std::string_view to_string(PointDistribution distribution);  // "uniform", "normal", "clustered"
// Unknown names are Error(invalid_argument) listing the valid ones.
PointDistribution parse_point_distribution(std::string_view name);

// What a kernel takes to make the points of (distribution, seed).
PointGenerator point_generator(PointDistribution distribution, std::uint64_t seed);

std::vector<Point2> generate_points(std::size_t n, PointDistribution distribution,
                                    std::uint64_t seed);
// Points [first, first + count) of generate_points(first + count, distribution, seed).
std::vector<Point2> generate_point_range(std::uint64_t first, std::size_t count,
                                         PointDistribution distribution, std::uint64_t seed);

}  // namespace ptxrt::apps
