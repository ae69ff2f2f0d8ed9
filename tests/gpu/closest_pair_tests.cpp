// [closest-pair] on a real GPU: every GPU method, for every BASE, against the CPU divide & conquer
// on fresh random inputs and awkward cases; the device bitonic sort against the CPU sort.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "apps/classic/device_sort.hpp"
#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/common/reference.hpp"
#include "gpu_fixture.hpp"

using namespace ptxrt;
using namespace ptxrt::apps;
using ptxrt::testing::full_or_sanitized;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

constexpr int bases[] = {32, 64, 128, 256, 512, 1024};

ClosestPairOptions options_for(int base) {
  ClosestPairOptions options;
  options.base = base;
  options.context = test_context();
  options.jit = &test_jit();
  return options;
}

double cpu_distance(const std::vector<Point2>& points) {
  return std::sqrt(cpu_divide_conquer(points).distance_squared);
}

// A GPU answer is right when its distance is the CPU's exactly and its pair is at that distance.
void check_against_cpu(const std::vector<Point2>& points, double expected, ClosestPairMethod method,
                       int base) {
  CAPTURE(to_string(method));
  CAPTURE(base);
  CAPTURE(points.size());
  const ClosestPair found = closest_pair(points, method, options_for(base));
  CHECK(found.method == method);
  CHECK(found.i < found.j);
  REQUIRE(found.j < points.size());
  CHECK(found.distance == expected);
  CHECK(point_distance(points[found.i], points[found.j]) == expected);
}

// Every GPU method, and for the BASE-dependent ones every BASE (the grid ignores BASE).
void check_every_method(const std::vector<Point2>& points) {
  const double expected = cpu_distance(points);
  check_against_cpu(points, expected, ClosestPairMethod::grid, 128);
  for (int base : bases) {
    check_against_cpu(points, expected, ClosestPairMethod::divide_conquer, base);
    check_against_cpu(points, expected, ClosestPairMethod::brute_force, base);
  }
}

std::vector<Point2> normal_with_duplicates(std::size_t n, std::uint64_t seed) {
  std::vector<Point2> points = generate_points(n, PointDistribution::normal, seed);
  for (std::size_t k = 7; k < n; k += 1000) points[k] = points[(k * 31) % n];
  return points;
}

}  // namespace

TEST_CASE("GPU methods match the CPU on uniform points") {
  for (std::size_t n : {1000u, 4097u, full_or_sanitized(100'000u, 2'053u)})
    check_every_method(generate_points(n, PointDistribution::uniform, 100 + n));
}

TEST_CASE("GPU methods match the CPU on normal points with duplicates") {
  for (std::size_t n : {1000u, full_or_sanitized(65'537u, 2'053u)})
    check_every_method(normal_with_duplicates(n, 200 + n));
}

TEST_CASE("GPU methods match the CPU on clustered points") {
  for (std::size_t n : {1000u, full_or_sanitized(100'000u, 3'001u)})
    check_every_method(generate_points(n, PointDistribution::clustered, 300 + n));
}

TEST_CASE("GPU methods match the CPU on 2, 3 and 7 points") {
  for (std::size_t n : {2u, 3u, 7u}) {
    check_every_method(generate_points(n, PointDistribution::uniform, 400 + n));
    check_every_method(normal_with_duplicates(n, 500 + n));
  }
}

TEST_CASE("GPU methods match the CPU on 1,000,003 points") {
  const std::size_t n = full_or_sanitized(1'000'003u, 5'003u);
  const auto uniform = generate_points(n, PointDistribution::uniform, 600);
  check_every_method(uniform);
  const auto clustered = generate_points(n, PointDistribution::clustered, 601);
  const double expected = cpu_distance(clustered);
  check_against_cpu(clustered, expected, ClosestPairMethod::grid, 128);
  check_against_cpu(clustered, expected, ClosestPairMethod::divide_conquer, 128);
}

TEST_CASE("GPU methods on degenerate inputs: all equal, collinear, a lattice of ties") {
  // Under compute-sanitizer still more points than the largest BASE, so D&C recurses for each.
  check_every_method(std::vector<Point2>(full_or_sanitized(5000u, 2053u), Point2{-3.5f, 2.25f}));
  std::vector<Point2> vertical, diagonal;
  for (int k = 0; k < full_or_sanitized(3000, 2053); ++k) {
    vertical.push_back({1.0f, static_cast<float>(k) * 0.5f + static_cast<float>(k % 7) * 0.01f});
    diagonal.push_back({static_cast<float>(k), static_cast<float>(k)});
  }
  std::reverse(diagonal.begin(), diagonal.end());
  check_every_method(vertical);
  check_every_method(diagonal);
  std::vector<Point2> lattice;
  const int side = full_or_sanitized(70, 46);
  for (int row = 0; row < side; ++row)
    for (int column = 0; column < side; ++column)
      lattice.push_back({static_cast<float>(column) * 0.25f, static_cast<float>(row) * 0.25f});
  check_every_method(lattice);
}

TEST_CASE("every GPU method returns the pair of least indices among ties, as the CPU does") {
  // The distributed closest pair relies on it: its ranks' answers, each the least of its slab,
  // fold to the least of the whole set, the pair one process finds.
  std::vector<Point2> lattice;
  for (int row = 0; row < 40; ++row)
    for (int column = 0; column < 40; ++column)
      lattice.push_back({static_cast<float>(column), static_cast<float>(row)});
  std::vector<Point2> reversed(lattice.rbegin(), lattice.rend());
  // Pairs at distance 0 wherever the copies fall: (5, 1600) is the least of them.
  std::vector<Point2> copies = lattice;
  for (int k : {5, 900, 1234, 77}) copies.push_back(lattice[static_cast<std::size_t>(k)]);
  for (const std::vector<Point2>* points : {&lattice, &reversed, &copies}) {
    const PairFound expected = cpu_brute_force(*points);
    for (ClosestPairMethod method : {ClosestPairMethod::grid, ClosestPairMethod::divide_conquer,
                                     ClosestPairMethod::brute_force}) {
      CAPTURE(to_string(method));
      CAPTURE(points->size());
      const ClosestPair found = closest_pair(*points, method, options_for(128));
      CHECK(found.i == expected.i);
      CHECK(found.j == expected.j);
    }
  }
  CHECK(cpu_brute_force(copies).i == 5);
  CHECK(cpu_brute_force(copies).j == 1600);
}

TEST_CASE("a GPU method with BASE outside 32..1024 is an invalid argument") {
  const auto points = generate_points(100, PointDistribution::uniform, 1);
  CHECK_THROWS_WITH_AS(closest_pair(points, ClosestPairMethod::divide_conquer, options_for(48)),
                       "closest pair: BASE 48 is not a power of two from 32 to 1024", Error);
}

TEST_CASE("the device bitonic sort orders (key, value) pairs like the CPU's stable sort") {
  for (std::size_t n : {1u, 1000u, 4096u, full_or_sanitized(1'000'003u, 65'537u)}) {
    CAPTURE(n);
    const std::vector<float> keys =
        ptxrt::testing::random_floats(n, 700 + static_cast<unsigned>(n));
    std::vector<int> values(n);
    std::iota(values.begin(), values.end(), 0);
    const PaddedPairs padded = pad_for_sort(keys, values);
    DeviceBuffer<float> device_keys(test_context(), std::span<const float>(padded.keys));
    DeviceBuffer<int> device_values(test_context(), std::span<const int>(padded.values));
    const DeviceSort sorter(test_context(), test_jit());
    sorter.sort(device_keys, &device_values, padded.keys.size());

    std::vector<float> expected_keys = keys;
    std::vector<int> expected_values = values;
    apps::sort(expected_keys, expected_values);
    std::vector<float> got_keys = device_keys.download();
    std::vector<int> got_values = device_values.download();
    got_keys.resize(n);
    got_values.resize(n);
    CHECK(got_keys == expected_keys);
    CHECK(got_values == expected_values);
  }
}
