// The CPU closest-pair methods against each other and hand-checked answers, and the arithmetic
// the kernels share with the host (ptx_src/closest_pair_math.cuh), checked on the CPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "apps/classic/device_sort.hpp"
#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "ptx_src/closest_pair_math.cuh"
#include "ptx_src/closest_pair_morton.cuh"
#include "ptxrt/core/error.hpp"

using namespace ptxrt;
using namespace ptxrt::apps;

namespace {

// Normal points where every tenth point repeats an earlier one.
std::vector<Point2> normal_with_duplicates(std::size_t n, std::uint64_t seed) {
  std::vector<Point2> points = generate_points(n, PointDistribution::normal, seed);
  for (std::size_t k = 10; k < n; k += 10) points[k] = points[k / 3];
  return points;
}

void check_methods_agree(const std::vector<Point2>& points) {
  const PairFound brute = cpu_brute_force(points);
  const PairFound blocked = cpu_blocked(points, 16);
  const PairFound divide = cpu_divide_conquer(points);
  CHECK(blocked.i == brute.i);
  CHECK(blocked.j == brute.j);
  CHECK(blocked.distance_squared == brute.distance_squared);
  CHECK(divide.distance_squared == brute.distance_squared);
  CHECK(divide.i < divide.j);
  CHECK(pair_distance_squared_f64(points[divide.i].x, points[divide.i].y, points[divide.j].x,
                                  points[divide.j].y) == brute.distance_squared);
}

}  // namespace

TEST_CASE("the CPU methods agree on random inputs of every distribution and awkward sizes") {
  for (std::size_t n : {2u, 3u, 7u, 100u, 1000u, 2049u}) {
    CAPTURE(n);
    check_methods_agree(generate_points(n, PointDistribution::uniform, n));
    check_methods_agree(generate_points(n, PointDistribution::clustered, n + 1));
    check_methods_agree(normal_with_duplicates(n, n + 2));
  }
}

TEST_CASE("any range of a generated set is made alone, the same as in the whole set") {
  for (PointDistribution distribution :
       {PointDistribution::uniform, PointDistribution::normal, PointDistribution::clustered}) {
    CAPTURE(to_string(distribution));
    const std::vector<Point2> whole = generate_points(1000, distribution, 42);
    const std::vector<Point2> part = generate_point_range(333, 250, distribution, 42);
    CHECK(std::equal(part.begin(), part.end(), whole.begin() + 333));
    CHECK(generate_points(1000, distribution, 43) != whole);
  }
  for (const Point2& point : generate_points(10000, PointDistribution::uniform, 7)) {
    CHECK(point.x >= 0.0f);
    CHECK(point.x < 1.0f);
    CHECK(point.y >= 0.0f);
    CHECK(point.y < 1.0f);
  }
}

TEST_CASE("a 3-4-5 triangle and a far point: the pair at distance 5") {
  const std::vector<Point2> points{{10, 10}, {0, 0}, {30, 40}, {3, 4}};
  for (ClosestPairMethod method :
       {ClosestPairMethod::cpu_brute_force, ClosestPairMethod::cpu_blocked,
        ClosestPairMethod::cpu_divide_conquer}) {
    const ClosestPair found = closest_pair(points, method);
    CHECK(found.i == 1);
    CHECK(found.j == 3);
    CHECK(found.distance == 5.0);
    CHECK(found.method == method);
  }
}

TEST_CASE("two points are their own closest pair") {
  const std::vector<Point2> points{{1.5f, -2.0f}, {-1.5f, 2.0f}};
  const ClosestPair found = closest_pair(points, ClosestPairMethod::cpu_divide_conquer);
  CHECK(found.i == 0);
  CHECK(found.j == 1);
  CHECK(found.distance == 5.0);
}

TEST_CASE("collinear points with growing gaps: the first gap is the smallest") {
  std::vector<Point2> points;
  for (int k = 0; k < 50; ++k) points.push_back({0.0f, static_cast<float>(k * k)});
  std::reverse(points.begin(), points.end());
  const ClosestPair found = closest_pair(points, ClosestPairMethod::cpu_divide_conquer);
  CHECK(found.i == 48);
  CHECK(found.j == 49);
  CHECK(found.distance == 1.0);
}

TEST_CASE("all points equal: distance 0 between two distinct indices") {
  const std::vector<Point2> points(1001, Point2{0.25f, 0.75f});
  for (ClosestPairMethod method :
       {ClosestPairMethod::cpu_brute_force, ClosestPairMethod::cpu_blocked,
        ClosestPairMethod::cpu_divide_conquer}) {
    const ClosestPair found = closest_pair(points, method);
    CHECK(found.i < found.j);
    CHECK(found.j < points.size());
    CHECK(found.distance == 0.0);
  }
}

TEST_CASE("a single duplicate among distinct points is found at distance 0") {
  std::vector<Point2> points = generate_points(777, PointDistribution::uniform, 5);
  points[700] = points[13];
  const ClosestPair found = closest_pair(points, ClosestPairMethod::cpu_divide_conquer);
  CHECK(found.i == 13);
  CHECK(found.j == 700);
  CHECK(found.distance == 0.0);
}

TEST_CASE("a lattice of ties: brute force and blocked return the smallest pair (0, 1)") {
  std::vector<Point2> points;
  for (int row = 0; row < 20; ++row)
    for (int column = 0; column < 20; ++column)
      points.push_back({static_cast<float>(column), static_cast<float>(row)});
  for (ClosestPairMethod method :
       {ClosestPairMethod::cpu_brute_force, ClosestPairMethod::cpu_blocked}) {
    const ClosestPair found = closest_pair(points, method);
    CHECK(found.i == 0);
    CHECK(found.j == 1);
  }
  CHECK(closest_pair(points, ClosestPairMethod::cpu_divide_conquer).distance == 1.0);
}

TEST_CASE("fewer than 2 points, a NaN coordinate or a 0 block size are invalid arguments") {
  const std::vector<Point2> one{{1, 1}};
  CHECK_THROWS_WITH_AS(closest_pair(one, ClosestPairMethod::cpu_divide_conquer),
                       "closest pair: needs at least 2 points, got 1", Error);
  CHECK_THROWS_AS(closest_pair({}, ClosestPairMethod::cpu_brute_force), Error);
  const std::vector<Point2> with_nan{{1, 1}, {std::nanf(""), 0}, {2, 2}};
  CHECK_THROWS_WITH_AS(closest_pair(with_nan, ClosestPairMethod::cpu_divide_conquer),
                       "closest pair: point 1 has a coordinate that is not finite", Error);
  const std::vector<Point2> two{{1, 1}, {2, 2}};
  CHECK_THROWS_WITH_AS(closest_pair(two, ClosestPairMethod::cpu_blocked, {.cpu_block = 0}),
                       "cpu_blocked: block size is 0", Error);
  try {
    closest_pair(one);
  } catch (const Error& error) {
    CHECK(error.kind() == ErrorKind::invalid_argument);
  }
}

TEST_CASE("automatic picks the CPU divide & conquer below 4096 points") {
  const std::vector<Point2> points = generate_points(4095, PointDistribution::uniform, 9);
  const ClosestPair found = closest_pair(points);
  CHECK(found.method == ClosestPairMethod::cpu_divide_conquer);
  CHECK(found.distance == std::sqrt(cpu_brute_force(points).distance_squared));
}

TEST_CASE("method names round trip and an unknown one lists the valid ones") {
  for (const char* name : {"auto", "grid", "dc", "brute", "cpu-dc", "cpu-brute", "cpu-blocked"})
    CHECK(to_string(parse_closest_pair_method(name)) == name);
  CHECK_THROWS_WITH_AS(parse_closest_pair_method("kd-tree"),
                       "unknown closest-pair method 'kd-tree'; known: auto, grid, dc, brute, "
                       "cpu-dc, cpu-brute, cpu-blocked",
                       Error);
  CHECK(is_gpu_method(ClosestPairMethod::grid));
  CHECK_FALSE(is_gpu_method(ClosestPairMethod::cpu_blocked));
}

TEST_CASE("a near tie that fp32 orders wrongly is decided in fp64, whatever the visiting order") {
  // (0.6f, 0.8f) is farther from the origin than 1 in exact arithmetic (both floats round up),
  // yet its fp32 squared distance is not larger than 1's.
  const float far_x = 0.6f, far_y = 0.8f;
  REQUIRE(pair_distance_squared_f64(0, 0, far_x, far_y) > 1.0);
  REQUIRE(pair_distance_squared_f32(0, 0, far_x, far_y) <= 1.0f);
  for (bool near_first : {true, false}) {
    PairSearch search = start_search(infinite_distance());
    auto visit_near = [&] { consider_pair(search, 0, 0, 0, 1.0f, 0, 1); };
    auto visit_far = [&] { consider_pair(search, 0, 0, 0, far_x, far_y, 2); };
    if (near_first) {
      visit_near();
      visit_far();
    } else {
      visit_far();
      visit_near();
    }
    CHECK(search.minimum.first == 0);
    CHECK(search.minimum.second == 1);
    CHECK(search.minimum.distance_squared == 1.0);
  }
}

TEST_CASE("distinct points never have fp32 distance 0, even when the square underflows") {
  CHECK(pair_distance_squared_f32(1e-30f, 0, 0, 0) == 0x1p-149f);
  CHECK(pair_distance_squared_f32(0.5f, 0.5f, 0.5f, 0.5f) == 0.0f);
}

TEST_CASE("the pruning radius covers every pair under the candidate threshold") {
  for (float bound : {0.0f, 0x1p-149f, 1e-30f, 1e-12f, 0.5f, 1.0f, 3e7f}) {
    CAPTURE(bound);
    const double threshold = candidate_threshold(bound);
    CHECK(threshold >= bound);
    CHECK(static_cast<double>(pruning_radius(bound)) > std::sqrt(threshold));
  }
  CHECK(std::isinf(pruning_radius(infinite_distance())));
}

TEST_CASE("the triangle of tile pairs enumerates every a <= b exactly once, in order") {
  long long k = 0;
  for (long long b = 0; b < 300; ++b) {
    for (long long a = 0; a <= b; ++a, ++k) {
      long long got_a = -1, got_b = -1;
      triangle_tile_pair(k, got_a, got_b);
      REQUIRE(got_a == a);
      REQUIRE(got_b == b);
    }
  }
  // Around 2^40 the double square root alone would be off.
  const long long row = 1'500'000;
  for (long long offset : {0LL, 1LL, row}) {
    long long a = -1, b = -1;
    triangle_tile_pair(row * (row + 1) / 2 + offset, a, b);
    CHECK(b == row);
    CHECK(a == offset);
  }
}

TEST_CASE("Morton codes interleave column bits (even) and row bits (odd), prefix by prefix") {
  CHECK(morton_code(0b11, 0) == 0b0101);
  CHECK(morton_code(0, 0b11) == 0b1010);
  CHECK(morton_code(0xffffffffu, 0xffffffffu) == ~0ull);
  std::mt19937 generator(5);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto column = static_cast<unsigned>(generator());
    const auto row = static_cast<unsigned>(generator());
    const unsigned long long code = morton_code(column, row);
    // The top 2j bits are the node of level j; the 32-bit sort keys are the two halves.
    for (int level : {1, 7, 16, 31})
      REQUIRE((code >> (64 - 2 * level)) ==
              morton_code(static_cast<unsigned>(cell_at_level(column, level)),
                          static_cast<unsigned>(cell_at_level(row, level))));
    REQUIRE(cell_at_level(column, 0) == 0);
    REQUIRE(cell_at_level(column, 32) == column);
  }
  const GridFrame frame{-2.0, 3.0, std::ldexp(1.0, 32) / 8.0, 8.0};
  const float x = 1.25f, y = 4.5f;
  const unsigned long long code = morton_code(quantize(x, frame.origin_x, frame.scale),
                                              quantize(y, frame.origin_y, frame.scale));
  CHECK(morton_high(x, y, frame) == code >> 32);
  CHECK(morton_low(x, y, frame) == (code & 0xffffffffull));
}

TEST_CASE("quantization is monotone, clamps to 0 .. 2^32-1, and puts a point's window around it") {
  const double origin = -1000.0, extent = 2000.0, scale = std::ldexp(1.0, 32) / extent;
  CHECK(quantize(-1000.0f, origin, scale) == 0u);
  CHECK(quantize(-5000.0f, origin, scale) == 0u);
  CHECK(quantize(1000.0f, origin, scale) == 0xffffffffu);
  CHECK(quantize(7.0f, origin, 0.0) == 0u);
  std::mt19937 generator(3);
  std::uniform_real_distribution<float> coordinate(-1000.0f, 1000.0f);
  std::uniform_real_distribution<float> fraction(0.0f, 1.0f);
  for (float radius : {1e-6f, 0.37f, 5.0f}) {
    for (int trial = 0; trial < 10000; ++trial) {
      const float p = coordinate(generator);
      // A neighbour within the radius in exact arithmetic; the window's ends rounded to float,
      // as the kernel computes them.
      const float q = p + radius * (2.0f * fraction(generator) - 1.0f);
      if (std::abs(static_cast<double>(q) - p) > radius) continue;
      for (int level : {0, 9, 16, 32}) {
        const unsigned long long cell = cell_at_level(quantize(q, origin, scale), level);
        REQUIRE(cell >= cell_at_level(quantize(p - radius, origin, scale), level));
        REQUIRE(cell <= cell_at_level(quantize(p + radius, origin, scale), level));
      }
      if (p <= q) REQUIRE(quantize(p, origin, scale) <= quantize(q, origin, scale));
    }
  }
}

TEST_CASE("a search looks at the deepest level whose nodes are at least twice its radius wide") {
  CHECK(search_level(1.0, 0.25f, 16) == 1);
  CHECK(search_level(1.0, 0.2f, 16) == 1);
  CHECK(search_level(1.0, 0.125f, 16) == 2);
  CHECK(search_level(1.0, 1e-9f, 16) == 16);
  CHECK(search_level(1.0, 1e-9f, 32) == 28);
  CHECK(search_level(1.0, 0.6f, 32) == 0);
  CHECK(search_level(1.0, infinite_distance(), 32) == 0);
  // Every point the same: the one node of level 0 holds them all.
  CHECK(search_level(0.0, 1e-20f, 16) == 0);
}

TEST_CASE("ordered words order floats as numbers and give their bits back") {
  const std::vector<float> ascending{-INFINITY, -1e30f,    -1.0f, -0x1p-149f, -0.0f,
                                     0.0f,      0x1p-149f, 1.0f,  3e38f,      INFINITY};
  for (std::size_t k = 0; k < ascending.size(); ++k) {
    const unsigned word = ordered_word(std::bit_cast<unsigned>(ascending[k]));
    CHECK(float_bits_of_word(word) == std::bit_cast<unsigned>(ascending[k]));
    if (k > 0) CHECK(ordered_word(std::bit_cast<unsigned>(ascending[k - 1])) < word);
  }
}

TEST_CASE("candidates merge by distance, then first index, then second") {
  PairMinimum into = no_pair_yet(infinite_distance());
  PairMinimum other = no_pair_yet(2.0f);
  other.distance_squared = 2.0;
  other.first = 5;
  other.second = 9;
  merge_minimum(into, other);
  CHECK(into.bound == 2.0f);
  CHECK(into.first == 5);
  other.first = 4;
  other.second = 11;
  merge_minimum(into, other);
  CHECK(into.first == 4);
  CHECK(into.second == 11);
  other.first = 4;
  other.second = 12;
  merge_minimum(into, other);
  CHECK(into.second == 11);
}
