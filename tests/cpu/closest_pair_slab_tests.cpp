// The generator and slab arithmetic that the CPU and the GPU share (ptx_src/point_generator.cuh,
// ptx_src/closest_pair_slab.cuh), checked on the CPU: the generator's own logarithm, sine and
// cosine, the distributions it makes, and the slabs of a generated set cut at sample splitters.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "apps/closest_pair/point_generator.hpp"
#include "apps/closest_pair/point_slab.hpp"
#include "ptx_src/closest_pair_slab.cuh"
#include "ptx_src/point_generator.cuh"
#include "ptxrt/core/error.hpp"

using namespace ptxrt::apps;

TEST_CASE("the generator's logarithm, cosine and sine are within 2^-21 of the math library's") {
  std::mt19937_64 words(5);
  double worst_log = 0.0;
  double worst_turn = 0.0;
  for (int draw = 0; draw < 200000; ++draw) {
    const float u = static_cast<float>((words() >> 40) + 1) * 0x1p-24f;
    const double exact_log = std::log(static_cast<double>(u));
    worst_log = std::max(
        worst_log, std::abs(generator_log(u) - exact_log) / std::max(1.0, std::abs(exact_log)));
    const float t = unit_coordinate(words());
    const GeneratedCoordinates turn = generator_cos_sin(t);
    const double angle = 2.0 * std::numbers::pi * static_cast<double>(t);
    worst_turn = std::max(
        {worst_turn, std::abs(turn.x - std::cos(angle)), std::abs(turn.y - std::sin(angle))});
  }
  CHECK(worst_log < 0x1p-21);
  CHECK(worst_turn < 0x1p-21);
  CHECK(generator_log(1.0f) == 0.0f);
  // The octants' ends: the quarter turns are exact.
  CHECK(generator_cos_sin(0.0f).x == 1.0f);
  CHECK(generator_cos_sin(0.25f).y == 1.0f);
  CHECK(generator_cos_sin(0.5f).x == -1.0f);
  CHECK(generator_cos_sin(0.75f).y == -1.0f);
}

TEST_CASE("normal points have mean 0 and deviation 1; clustered ones lie near 64 centres") {
  const std::vector<ptxrt::apps::Point2> normal =
      generate_points(200000, PointDistribution::normal, 3);
  for (float ptxrt::apps::Point2::*axis : {&ptxrt::apps::Point2::x, &ptxrt::apps::Point2::y}) {
    double sum = 0.0;
    double squares = 0.0;
    for (const ptxrt::apps::Point2& point : normal) {
      sum += point.*axis;
      squares += static_cast<double>(point.*axis) * (point.*axis);
    }
    const double mean = sum / static_cast<double>(normal.size());
    CHECK(std::abs(mean) < 0.01);
    CHECK(std::sqrt(squares / static_cast<double>(normal.size()) - mean * mean) ==
          doctest::Approx(1.0).epsilon(0.01));
  }
  // A radius of at most sqrt(2 ln 2^24) = 5.77 deviations of 0.01 from a centre in [0, 1).
  for (const ptxrt::apps::Point2& point : generate_points(20000, PointDistribution::clustered, 4)) {
    CHECK(point.x > -0.058f);
    CHECK(point.x < 1.058f);
  }
}

TEST_CASE("a slab's range decides ties in x by y, then by index") {
  SlabRange range{};
  range.after = {0.5f, 0.5f, 3};
  range.through = {0.5f, 0.7f, 9};
  range.has_after = 1;
  range.has_through = 1;
  CHECK_FALSE(key_in_range(range, 0.5f, 0.5f, 3));
  CHECK(key_in_range(range, 0.5f, 0.5f, 4));
  CHECK(key_in_range(range, 0.5f, 0.6f, 0));
  CHECK(key_in_range(range, 0.5f, 0.7f, 9));
  CHECK_FALSE(key_in_range(range, 0.5f, 0.7f, 10));
  CHECK_FALSE(key_in_range(range, 0.4f, 0.6f, 5));
  const SlabRange whole{};
  CHECK(key_in_range(whole, -1e30f, 1e30f, 77));
}

TEST_CASE("an interval of x decides a key's range where it lies off the bounds' x, else not") {
  SlabRange range{};
  range.after = {0.25f, 0.5f, 3};
  range.through = {0.75f, 0.5f, 9};
  range.has_after = 1;
  range.has_through = 1;
  CHECK(range_side(range, 0.3f, 0.7f) == 1);
  CHECK(range_side(range, 0.1f, 0.2f) == -1);
  CHECK(range_side(range, 0.8f, 0.9f) == -1);
  // Touching or straddling a bound's x: y and the index decide.
  CHECK(range_side(range, 0.25f, 0.25f) == 0);
  CHECK(range_side(range, 0.2f, 0.3f) == 0);
  CHECK(range_side(range, 0.7f, 0.75f) == 0);
  SlabRange last{};
  last.after = range.after;
  last.has_after = 1;
  CHECK(range_side(last, 0.3f, 1e30f) == 1);
  CHECK(range_side(SlabRange{}, -1e30f, 1e30f) == 1);
}

TEST_CASE("a generated point's x lies in the interval its first draws give, extremes included") {
  for (PointDistribution distribution :
       {PointDistribution::uniform, PointDistribution::normal, PointDistribution::clustered}) {
    CAPTURE(to_string(distribution));
    const PointGenerator generator = point_generator(distribution, 17);
    for (unsigned long long k = 0; k < 100000; ++k) {
      const GeneratedInterval interval = generated_x_interval(generator, k);
      const float x = generated_point(generator, k).x;
      REQUIRE(x >= interval.low);
      REQUIRE(x <= interval.high);
    }
  }
  // The largest radius: the uniform under the logarithm at its least, 2^-24, in every direction.
  for (unsigned long long turn = 0; turn < (1ull << 24); turn += 4099) {
    const GeneratedCoordinates widest = generator_normals(0, turn << 40);
    CHECK(std::abs(widest.x) < GENERATOR_NORMAL_BOUND);
    CHECK(std::abs(widest.y) < GENERATOR_NORMAL_BOUND);
    CHECK(std::abs(0.01f * widest.x) < GENERATOR_CLUSTER_REACH - 0x1p-20f);
  }
  CHECK(std::abs(generator_normals(0, 0).x) > 5.76f);
}

TEST_CASE("slabs at sample splitters hold every point once, in index order, about equally many") {
  for (PointDistribution distribution :
       {PointDistribution::uniform, PointDistribution::clustered}) {
    CAPTURE(to_string(distribution));
    const PointGenerator generator = point_generator(distribution, 11);
    const std::uint64_t count = 30011;
    const std::vector<SlabPoint> splitters = sample_splitters(generator, count, 3, 4096);
    REQUIRE(splitters.size() == 2);
    CHECK(key_less(splitters[0], splitters[1]));
    std::vector<bool> seen(count, false);
    for (std::size_t slab = 0; slab < 3; ++slab) {
      const SlabRange range = slab_range(splitters, slab);
      const std::vector<SlabPoint> points = generate_slab(generator, count, range);
      CHECK(points.size() == doctest::Approx(count / 3.0).epsilon(0.1));
      CHECK(
          std::is_sorted(points.begin(), points.end(),
                         [](const SlabPoint& a, const SlabPoint& b) { return a.index < b.index; }));
      for (const SlabPoint& point : points) {
        REQUIRE(point.index < count);
        CHECK_FALSE(seen[point.index]);
        seen[point.index] = true;
        const ptxrt::apps::Point2 made = generate_point_range(point.index, 1, distribution, 11)[0];
        CHECK(made.x == point.x);
        CHECK(made.y == point.y);
      }
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](bool each) { return each; }));
  }
}

TEST_CASE("sample splitters of few points repeat, and a sample spreads over any size") {
  const PointGenerator generator = point_generator(PointDistribution::uniform, 2);
  const std::vector<SlabPoint> splitters = sample_splitters(generator, 2, 4, 4096);
  REQUIRE(splitters.size() == 3);
  CHECK(std::is_sorted(splitters.begin(), splitters.end(), key_less));
  CHECK(sample_splitters(generator, 100, 1, 16).empty());
  CHECK_THROWS_AS(sample_splitters(generator, 100, 0, 16), ptxrt::Error);
  CHECK_THROWS_AS(sample_splitters(generator, 0, 2, 16), ptxrt::Error);
  // Positions j * n / samples, exact where j * n overflows 64 bits.
  const unsigned long long n = 1ull << 62;
  CHECK(sample_position(0, n, 1ull << 18) == 0);
  CHECK(sample_position((1ull << 18) - 1, n, 1ull << 18) == n - (1ull << 44));
  CHECK(sample_position(3, 10, 4) == 7);
}
