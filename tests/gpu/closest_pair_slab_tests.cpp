// The slabs of the distributed closest pair on a real GPU (apps/closest_pair/device_slab.hpp):
// a generated set's slab made there holds exactly the CPU generator's points of its range, with
// their indices, for every distribution (so the two generators agree bit for bit), in any room;
// the GPU sample's splitters and their bands; a slab's closest pair by each GPU method against
// the CPU on the same points, indices included; the points near a slab's edges, noted when it was
// made or found again; an uploaded slab; memory reserved ahead; a grid solver reused; a slab of
// more than 2^31 - 1 points refused before any room is made for it.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
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
using ptxrt::testing::under_compute_sanitizer;

namespace {

constexpr std::array distributions{PointDistribution::uniform, PointDistribution::normal,
                                   PointDistribution::clustered};

ClosestPairOptions on_test_device() {
  ClosestPairOptions options;
  options.context = test_context();
  options.jit = &test_jit();
  return options;
}

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
    // The whole set, and each of three slabs (first, middle and last: each kind of range), in
    // room for them, in room counted first (0) and in room too small, which makes them again.
    check_same_points(
        DeviceSlab::generate(test_kernels(), {.generator = generator, .count = count}).download(),
        generate_slab(generator, count, SlabRange{}));
    for (std::size_t slab = 0; slab < 3; ++slab) {
      const SlabRange range = slab_range(splitters, slab);
      for (std::uint64_t capacity : {slab_capacity(count, 3), std::uint64_t{0}, count / 10}) {
        CAPTURE(slab);
        CAPTURE(capacity);
        const DeviceSlab made = DeviceSlab::generate(
            test_kernels(),
            {.generator = generator, .count = count, .range = range, .capacity = capacity});
        check_same_points(made.download(), generate_slab(generator, count, range));
      }
    }
  }
}

TEST_CASE(
    "the GPU sample's splitters are in key order, cut slabs within 2% of even, and each "
    "band holds about 2048 points on each side") {
  const std::uint64_t count = full_or_sanitized<std::uint64_t>(2'000'000, 200'000);
  for (PointDistribution distribution : distributions) {
    CAPTURE(to_string(distribution));
    const PointGenerator generator = point_generator(distribution, 21);
    const std::vector<SampledSplitter> sampled =
        test_kernels().sample_splitters(generator, count, 4);
    REQUIRE(sampled.size() == 3);
    std::vector<SlabPoint> splitters;
    for (const SampledSplitter& splitter : sampled) splitters.push_back(splitter.key);
    CHECK(std::is_sorted(splitters.begin(), splitters.end(), key_less));
    const std::vector<SlabPoint> all = generate_slab(generator, count, SlabRange{});
    for (const SampledSplitter& splitter : sampled) {
      CHECK(splitter.band_low_x <= splitter.key.x);
      CHECK(splitter.key.x <= splitter.band_high_x);
      const auto between = [&](float low, float high) {
        return std::count_if(all.begin(), all.end(), [&](const SlabPoint& point) {
          return point.x >= low && point.x <= high;
        });
      };
      CHECK(between(splitter.band_low_x, splitter.key.x) > 1024);
      CHECK(between(splitter.band_low_x, splitter.key.x) < 4096);
      CHECK(between(splitter.key.x, splitter.band_high_x) > 1024);
      CHECK(between(splitter.key.x, splitter.band_high_x) < 4096);
    }
    std::uint64_t held = 0;
    for (std::size_t slab = 0; slab < 4; ++slab) {
      const DeviceSlab made =
          DeviceSlab::generate(test_kernels(), {.generator = generator,
                                                .count = count,
                                                .range = slab_range(splitters, slab),
                                                .capacity = slab_capacity(count, 4)});
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
  const ClosestPairOptions options = on_test_device();
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
      const DeviceSlab slab = DeviceSlab::generate(
          test_kernels(), {.generator = generator, .count = count, .range = range});
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

TEST_CASE("points near a slab's edges: noted when it is made, else found again, the same") {
  const std::uint64_t count = full_or_sanitized<std::uint64_t>(1'000'003, 100'003);
  const PointGenerator generator = point_generator(PointDistribution::clustered, 5);
  const std::vector<SlabPoint> splitters = sample_splitters(generator, count, 3, 4096);
  const SlabRange range = slab_range(splitters, 1);
  const double width = static_cast<double>(splitters[1].x) - splitters[0].x;
  const DeviceSlab slab =
      DeviceSlab::generate(test_kernels(), {.generator = generator,
                                            .count = count,
                                            .range = range,
                                            .note_left_until = splitters[0].x + width / 50,
                                            .note_right_from = splitters[1].x - width / 50});
  const std::vector<SlabPoint> points = generate_slab(generator, count, range);
  // A reach within the noted bands, one beyond them, one of most of the slab (past the first
  // capacity of the kernel's output), and none at all.
  for (double reach : {1e-7, width / 20, width / 2.5, -1.0}) {
    CAPTURE(reach);
    const double left_until = reach < 0 ? -std::numeric_limits<double>::infinity()
                                        : static_cast<double>(splitters[0].x) + reach;
    const double right_from = reach < 0 ? std::numeric_limits<double>::infinity()
                                        : static_cast<double>(splitters[1].x) - reach;
    check_same_points(sorted_by_index(slab.points_near_edges(left_until, right_from)),
                      near_edges(points, left_until, right_from));
  }
}

TEST_CASE("the whole set as a slab: its points at their indices, its pair the host points'") {
  const std::uint64_t count = full_or_sanitized<std::uint64_t>(200'003, 20'011);
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const ClosestPairOptions options = on_test_device();
  for (PointDistribution distribution : distributions) {
    CAPTURE(to_string(distribution));
    const PointGenerator generator = point_generator(distribution, seed);
    const DeviceSlab slab =
        DeviceSlab::generate(test_kernels(), {.generator = generator, .count = count});
    const std::vector<Point2> points = generate_points(count, distribution, seed);
    REQUIRE(slab.size() == count);
    CHECK(slab.point(count - 1) == points.back());
    const ClosestPair expected = closest_pair(points, ClosestPairMethod::grid, options);
    const DeviceSlab::Pair found = slab.closest_pair(ClosestPairMethod::grid, options);
    CHECK(found.first.index == expected.i);
    CHECK(found.second.index == expected.j);
    CHECK(found.distance == expected.distance);
    const ClosestPair in_box = closest_pair_in_box(test_context(), slab.points(), slab.box(),
                                                   ClosestPairMethod::grid, options);
    CHECK(in_box.i == expected.i);
    CHECK(in_box.j == expected.j);
  }
}

TEST_CASE("slabs made in reserved memory, one after another or two at once, hold their points") {
  const std::uint64_t count = full_or_sanitized<std::uint64_t>(300'007, 30'011);
  const PointGenerator generator = point_generator(PointDistribution::uniform, fresh_seed());
  SlabKernels kernels(test_context(), test_jit());
  kernels.reserve(count, slab_capacity(count, 2), ClosestPairMethod::grid);
  const std::vector<SampledSplitter> sampled = kernels.sample_splitters(generator, count, 2);
  const std::vector<SlabPoint> splitters{sampled.front().key};
  const ClosestPairOptions options = on_test_device();
  for (std::size_t slab = 0; slab < 2; ++slab) {
    const GeneratedSlab made{.generator = generator,
                             .count = count,
                             .range = slab_range(splitters, slab),
                             .capacity = slab_capacity(count, 2)};
    const DeviceSlab first = DeviceSlab::generate(kernels, made);
    check_same_points(first.download(), generate_slab(generator, count, made.range));
    {
      const DeviceSlab second = DeviceSlab::generate(kernels, made);
      check_same_points(second.download(), first.download());
    }
    CHECK(first.closest_pair(ClosestPairMethod::grid, options).distance ==
          first.closest_pair(ClosestPairMethod::divide_conquer, options).distance);
  }
}

TEST_CASE("a grid solver made once finds, for sets of any size up to its room, closest_pair's") {
  const std::size_t capacity = full_or_sanitized<std::size_t>(300'007, 30'011);
  const ClosestPairOptions options = on_test_device();
  GridSolver solver(GpuSetup{test_context(), &test_jit(), 128}, capacity);
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (std::size_t n : {capacity, std::size_t{2}, std::size_t{1'001}, capacity / 3}) {
    for (PointDistribution distribution : distributions) {
      CAPTURE(n);
      CAPTURE(to_string(distribution));
      const std::vector<Point2> points = generate_points(n, distribution, seed + n);
      const DeviceBuffer<Point2> device(test_context(), std::span<const Point2>(points));
      PointBox box{points[0], points[0]};
      for (const Point2& point : points) {
        box.low = {std::min(box.low.x, point.x), std::min(box.low.y, point.y)};
        box.high = {std::max(box.high.x, point.x), std::max(box.high.y, point.y)};
      }
      solver.search(device, box);
      const GpuResult found = solver.result();
      const ClosestPair expected = closest_pair(points, ClosestPairMethod::grid, options);
      CHECK(found.pair.i == expected.i);
      CHECK(found.pair.j == expected.j);
      CHECK(std::sqrt(found.pair.distance_squared) == expected.distance);
    }
  }
  CHECK_THROWS_AS(solver.search(DevicePoints{0, capacity + 1}, PointBox{}), Error);
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
    DeviceSlab::generate(
        test_kernels(),
        {.generator = point_generator(PointDistribution::uniform, 1), .count = count});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.kind() == ErrorKind::invalid_argument);
    CHECK(std::string(error.what()) ==
          "closest pair: a slab of 2147483649 points exceeds the 2^31 - 1 a GPU method takes: use "
          "more ranks");
  }
}

TEST_CASE("a generated slab whose room exceeds 2^31 - 1 points is counted, then refused") {
  // Counting regenerates all 2^35 points: far too slow under compute-sanitizer's tools.
  if (under_compute_sanitizer()) return;
  // Room for 2^35 points (256 GiB) fits no GPU: only a slab counted before any room is made
  // comes to the refusal.
  const std::uint64_t count = std::uint64_t{1} << 35;
  const SlabPoint beyond_every_point{std::numeric_limits<float>::max(), 0.0f, 0};
  try {
    DeviceSlab::generate(test_kernels(),
                         {.generator = point_generator(PointDistribution::uniform, 1),
                          .count = count,
                          .range = {.through = beyond_every_point, .has_through = 1},
                          .capacity = count});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.kind() == ErrorKind::invalid_argument);
    CHECK(std::string(error.what()) ==
          "closest pair: a slab of 34359738368 points exceeds the 2^31 - 1 a GPU method takes: "
          "use more ranks");
  }
}
