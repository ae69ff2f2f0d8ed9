// The slabs of the distributed closest pair on a real GPU (host/closest_pair/device_slab.hpp):
// a generated set's slab made there holds exactly the CPU generator's points of its range, for
// every distribution (so the two generators agree bit for bit); the GPU sample's splitters; a
// slab's closest pair by each GPU method against the CPU on the same points, indices included;
// the points near a slab's edges, noted when it was made or read again; an uploaded slab.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "apps/closest_pair/device_slab.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/closest_pair/point_slab.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/core/error.hpp"

using namespace ptxrt;
using namespace ptxrt::apps;
using ptxrt::testing::fresh_seed;
using ptxrt::testing::full_or_sanitized;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

constexpr std::array distributions{PointDistribution::uniform, PointDistribution::normal,
                                   PointDistribution::clustered};

SlabKernels& test_kernels() {
  static SlabKernels kernels(test_context(), test_jit());
  return kernels;
}

void check_same_points(const std::vector<SlabPoint>& found,
                       const std::vector<SlabPoint>& expected) {
  REQUIRE(found.size() == expected.size());
  for (std::size_t k = 0; k < found.size(); ++k) {
    CAPTURE(k);
    CHECK(found[k].index == expected[k].index);
    CHECK(found[k].x == expected[k].x);
    CHECK(found[k].y == expected[k].y);
  }
}

std::vector<SlabPoint> sorted_by_index(std::vector<SlabPoint> points) {
  std::sort(points.begin(), points.end(),
            [](const SlabPoint& a, const SlabPoint& b) { return a.index < b.index; });
  return points;
}

std::vector<SlabPoint> near_edges(const std::vector<SlabPoint>& points, double left_until,
                                  double right_from) {
  std::vector<SlabPoint> near;
  for (const SlabPoint& point : points)
    if (point.x <= left_until || point.x >= right_from) near.push_back(point);
  return near;
}

}  // namespace

TEST_CASE("a generated slab made on the GPU holds the CPU generator's points of its range") {
  const std::uint64_t count = full_or_sanitized<std::uint64_t>(100'003, 10'007);
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (PointDistribution distribution : distributions) {
    CAPTURE(to_string(distribution));
    const PointGenerator generator = point_generator(distribution, seed);
    const std::vector<SlabPoint> splitters = sample_splitters(generator, count, 3, 4096);
    // The whole set, and each of three slabs (first, middle and last: each kind of range).
    check_same_points(
        DeviceSlab::generate(test_kernels(), generator, count, SlabRange{}).download(),
        generate_slab(generator, count, SlabRange{}));
    for (std::size_t slab = 0; slab < 3; ++slab) {
      CAPTURE(slab);
      const SlabRange range = slab_range(splitters, slab);
      check_same_points(DeviceSlab::generate(test_kernels(), generator, count, range).download(),
                        generate_slab(generator, count, range));
    }
  }
}

TEST_CASE("the GPU sample's splitters are in key order and cut slabs within 2% of even") {
  const std::uint64_t count = full_or_sanitized<std::uint64_t>(2'000'000, 200'000);
  for (PointDistribution distribution : distributions) {
    CAPTURE(to_string(distribution));
    const PointGenerator generator = point_generator(distribution, 21);
    const std::vector<SlabPoint> splitters = test_kernels().sample_splitters(generator, count, 4);
    REQUIRE(splitters.size() == 3);
    CHECK(std::is_sorted(splitters.begin(), splitters.end(), key_less));
    std::uint64_t held = 0;
    for (std::size_t slab = 0; slab < 4; ++slab) {
      const DeviceSlab made =
          DeviceSlab::generate(test_kernels(), generator, count, slab_range(splitters, slab));
      CHECK(static_cast<double>(made.size()) ==
            doctest::Approx(static_cast<double>(count) / 4).epsilon(0.02));
      held += made.size();
    }
    CHECK(held == count);
  }
  CHECK(test_kernels()
            .sample_splitters(point_generator(PointDistribution::uniform, 1), 5, 1)
            .empty());
}

TEST_CASE("a slab's closest pair on the GPU is the CPU's on its points, indices included") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  ClosestPairOptions options;
  options.context = test_context();
  options.jit = &test_jit();
  for (PointDistribution distribution : distributions) {
    CAPTURE(to_string(distribution));
    const PointGenerator generator = point_generator(distribution, seed);
    for (auto [method, count] :
         {std::pair{ClosestPairMethod::grid, full_or_sanitized<std::uint64_t>(300'007, 20'011)},
          std::pair{ClosestPairMethod::divide_conquer,
                    full_or_sanitized<std::uint64_t>(100'003, 10'007)},
          std::pair{ClosestPairMethod::brute_force,
                    full_or_sanitized<std::uint64_t>(20'011, 4'099)}}) {
      CAPTURE(to_string(method));
      const std::vector<SlabPoint> splitters = sample_splitters(generator, count, 2, 4096);
      const SlabRange range = slab_range(splitters, 1);
      const DeviceSlab slab = DeviceSlab::generate(test_kernels(), generator, count, range);
      const DeviceSlab::Pair found = slab.closest_pair(method, options);
      // Of pairs at the least distance, both return the one of least positions, which are in
      // index order in a slab.
      const std::vector<SlabPoint> points = generate_slab(generator, count, range);
      std::vector<Point2> coordinates;
      for (const SlabPoint& point : points) coordinates.push_back({point.x, point.y});
      const PairFound expected = cpu_divide_conquer(coordinates);
      CHECK(found.distance == std::sqrt(expected.distance_squared));
      CHECK(found.first.index == points[expected.i].index);
      CHECK(found.second.index == points[expected.j].index);
      CHECK(found.first.x == points[expected.i].x);
      CHECK(found.second.y == points[expected.j].y);
    }
  }
}

TEST_CASE("points near a slab's edges: noted when it is made, else read again, the same") {
  const std::uint64_t count = full_or_sanitized<std::uint64_t>(1'000'003, 100'003);
  const PointGenerator generator = point_generator(PointDistribution::clustered, 5);
  const std::vector<SlabPoint> splitters = sample_splitters(generator, count, 3, 4096);
  const SlabRange range = slab_range(splitters, 1);
  const DeviceSlab slab = DeviceSlab::generate(test_kernels(), generator, count, range);
  const std::vector<SlabPoint> points = generate_slab(generator, count, range);
  // A reach within the noted width, one beyond it, one of most of the slab (past the first
  // capacity of the kernel's output), and none at all.
  const double width = static_cast<double>(splitters[1].x) - splitters[0].x;
  for (double reach : {1e-7, width / 100, width / 2.5, -1.0}) {
    CAPTURE(reach);
    const double left_until = reach < 0 ? -std::numeric_limits<double>::infinity()
                                        : static_cast<double>(splitters[0].x) + reach;
    const double right_from = reach < 0 ? std::numeric_limits<double>::infinity()
                                        : static_cast<double>(splitters[1].x) - reach;
    check_same_points(sorted_by_index(slab.points_near_edges(left_until, right_from)),
                      near_edges(points, left_until, right_from));
  }
}

TEST_CASE("an uploaded slab holds its records as points and indices, and their box") {
  std::mt19937_64 random(fresh_seed());
  std::uniform_real_distribution<float> coordinate(-3.0f, 5.0f);
  std::vector<SlabPoint> records(full_or_sanitized<std::size_t>(50'021, 5'003));
  for (SlabPoint& record : records) record = {coordinate(random), coordinate(random), random()};
  const DeviceSlab slab = DeviceSlab::upload(test_kernels(), records);
  check_same_points(slab.download(), records);
  const auto [low_x, high_x] = std::minmax_element(
      records.begin(), records.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
  const auto [low_y, high_y] = std::minmax_element(
      records.begin(), records.end(), [](const auto& a, const auto& b) { return a.y < b.y; });
  CHECK(slab.box().low.x == low_x->x);
  CHECK(slab.box().high.x == high_x->x);
  CHECK(slab.box().low.y == low_y->y);
  CHECK(slab.box().high.y == high_y->y);
  CHECK(DeviceSlab::upload(test_kernels(), {}).size() == 0);
}

TEST_CASE("a generated slab of 2^31 points or more is refused before any is made") {
  const std::uint64_t count = std::uint64_t{INT_MAX} + 2;
  try {
    DeviceSlab::generate(test_kernels(), point_generator(PointDistribution::uniform, 1), count,
                         SlabRange{});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.kind() == ErrorKind::invalid_argument);
    CHECK(std::string(error.what()) ==
          "closest pair: a slab of 2147483649 points exceeds the 2^31 - 1 a GPU method takes: use "
          "more ranks");
  }
}
