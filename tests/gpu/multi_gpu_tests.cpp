// The split matmul and the split brute-force closest pair on every visible GPU (one is enough):
// the matmul bitwise equal to one device's result and to the CPU within the reference's bound;
// the closest pair, ties included, the single-GPU brute force's and the CPU's.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <random>

#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "apps/closest_pair/multi_gpu_closest_pair.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/staged_copy.hpp"
#include "apps/matmul/multi_gpu.hpp"
#include "gpu_fixture.hpp"

using namespace ptxrt;
using ptxrt::testing::random_floats;

TEST_CASE("a matmul split over every device equals one device's result bit for bit") {
  const std::size_t m = 301, n = 203, k = 157;  // no multiple of any tile
  const auto a = random_floats(m * k, 71), b = random_floats(k * n, 72);
  Jit& jit = ptxrt::testing::test_jit();
  const std::vector<int> devices = ptxrt::all_devices();
  MESSAGE("splitting over " << devices.size() << " device(s)");

  const apps::MultiGpuMatmul one = apps::split_matmul(jit, a, b, m, n, k, {{0}, 16});
  const apps::MultiGpuMatmul all = apps::split_matmul(jit, a, b, m, n, k, {devices, 16});
  REQUIRE(one.c.size() == m * n);
  REQUIRE(all.c.size() == m * n);
  CHECK(std::memcmp(one.c.data(), all.c.data(), m * n * sizeof(float)) == 0);
  // k·2^-24 relative to max|C| is the bound for a float dot product of length k.
  CHECK(apps::max_relative_error(all.c, apps::matmul(a, b, m, n, k)) <= 1e-5);

  REQUIRE(all.shares.size() == devices.size());
  std::size_t covered = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    CHECK(all.shares[i].device == devices[i]);
    CHECK(all.shares[i].rows.first == covered);
    covered += all.shares[i].rows.count;
    if (all.shares[i].rows.count > 0) CHECK(all.shares[i].kernel_ms > 0);
  }
  CHECK(covered == m);
  CHECK(all.wall_ms > 0);
}

TEST_CASE("the split matmul's transfers agree bit for bit: pinned, staged, synchronous") {
  const std::size_t m = 301, n = 203, k = 157;
  const auto a = random_floats(m * k, 73), b = random_floats(k * n, 74);
  Jit& jit = ptxrt::testing::test_jit();
  const std::vector<int> devices = ptxrt::all_devices();
  const apps::MultiGpuMatmul synchronous =
      apps::split_matmul(jit, a, b, m, n, k, {devices, 16, apps::HostTransfers::synchronous});
  // Pageable inputs and result: through the pinned staging buffers.
  const apps::MultiGpuMatmul staged =
      apps::split_matmul(jit, a, b, m, n, k, {devices, 16, apps::HostTransfers::overlapped});
  CHECK(std::memcmp(synchronous.c.data(), staged.c.data(), m * n * sizeof(float)) == 0);
  // Page-locked inputs and result: straight to and from the copy engine.
  const Context context = Context::primary(devices.front());
  PinnedBuffer<float> pinned_a(context, a.size()), pinned_b(context, b.size()), c(context, m * n);
  std::copy(a.begin(), a.end(), pinned_a.span().begin());
  std::copy(b.begin(), b.end(), pinned_b.span().begin());
  const apps::MultiGpuMatmul direct = apps::split_matmul_into(
      jit, pinned_a.span(), pinned_b.span(), c.span(), m, n, k, {devices, 16});
  CHECK(direct.c.empty());
  CHECK(std::memcmp(synchronous.c.data(), c.data(), m * n * sizeof(float)) == 0);
  for (const apps::DeviceShare& share : direct.shares) {
    if (share.rows.count == 0) continue;
    CHECK(share.upload_bytes == (share.rows.count * k + k * n) * sizeof(float));
    CHECK(share.upload_gb_per_s() > 0);
    CHECK(share.kernel_ms > 0);
  }
}

TEST_CASE("staged copies of pageable memory round trip in chunks that do not divide the size") {
  const Context& context = ptxrt::testing::test_context();
  const std::vector<float> values = random_floats(100'003, 75);
  DeviceBuffer<float> device(context, values.size() + 7);
  apps::StagedCopier copier(context, 4096);
  const Stream stream(context);
  device.memory().fill_words(ptxrt::testing::poison_word, stream.handle());
  copier.upload(device.memory(), 7 * sizeof(float), std::as_bytes(std::span(values)), stream);
  std::vector<float> back(values.size(), -1.0f);
  copier.download(std::as_writable_bytes(std::span(back)), device.memory(), 7 * sizeof(float),
                  stream);
  stream.synchronize();
  CHECK(back == values);
  CHECK(std::bit_cast<std::uint32_t>(device.download()[0]) == ptxrt::testing::poison_word);
}

TEST_CASE("split_matmul refuses a device listed twice and inputs of the wrong size") {
  const std::vector<float> square(16, 1.0f);
  Jit& jit = ptxrt::testing::test_jit();
  CHECK_THROWS_WITH_AS(apps::split_matmul(jit, square, square, 4, 4, 4, {{0, 0}, 16}),
                       doctest::Contains("device 0 is listed twice"), Error);
  CHECK_THROWS_WITH_AS(apps::split_matmul(jit, square, square, 4, 5, 4, {{0}, 16}),
                       doctest::Contains("B holds 16 floats, but its dimensions make 20"), Error);
}

namespace {

// A shuffled lattice of spacing 0.5: thousands of pairs tie at the minimum, so only the tie rule
// (the smallest (i, j)) decides. With `duplicates`, a few planted copies tie at 0 instead.
std::vector<apps::Point2> shuffled_lattice(int side, unsigned seed, bool duplicates) {
  std::vector<apps::Point2> points;
  for (int row = 0; row < side; ++row)
    for (int column = 0; column < side; ++column)
      points.push_back({static_cast<float>(column) * 0.5f, static_cast<float>(row) * 0.5f});
  std::mt19937 generator(seed);
  std::shuffle(points.begin(), points.end(), generator);
  if (duplicates)
    for (std::size_t k = 11; k < points.size(); k += 997)
      points[k] = points[(k * 7) % points.size()];
  return points;
}

std::vector<std::vector<apps::Point2>> closest_pair_inputs() {
  using ptxrt::testing::full_or_sanitized;
  return {
      apps::generate_points(full_or_sanitized(10'007, 2'053), apps::PointDistribution::uniform, 81),
      apps::generate_points(full_or_sanitized(4'099, 1'031), apps::PointDistribution::clustered,
                            82),
      shuffled_lattice(full_or_sanitized(70, 33), 83, false),
      shuffled_lattice(full_or_sanitized(70, 33), 84, true),
      std::vector<apps::Point2>(300, apps::Point2{1.5f, -2.0f}),  // every pair at 0
      apps::generate_points(2, apps::PointDistribution::uniform, 85),
      apps::generate_points(3, apps::PointDistribution::normal, 86)};
}

apps::ClosestPair single_gpu_brute_force(const std::vector<apps::Point2>& points, int base) {
  apps::ClosestPairOptions options;
  options.base = base;
  options.context = ptxrt::testing::test_context();
  options.jit = &ptxrt::testing::test_jit();
  return apps::closest_pair(points, apps::ClosestPairMethod::brute_force, options);
}

}  // namespace

TEST_CASE("the brute force split over every device finds one GPU's and the CPU's pair, ties too") {
  Jit& jit = ptxrt::testing::test_jit();
  const std::vector<int> devices = ptxrt::all_devices();
  for (const std::vector<apps::Point2>& points : closest_pair_inputs()) {
    CAPTURE(points.size());
    const apps::PairFound cpu = apps::cpu_brute_force(points);  // the smallest (i, j) of ties
    for (int base : {32, 128}) {
      CAPTURE(base);
      const apps::ClosestPair one = single_gpu_brute_force(points, base);
      const apps::MultiGpuClosestPair all = apps::split_closest_pair(jit, points, {devices, base});
      CHECK(all.i == one.i);
      CHECK(all.j == one.j);
      CHECK(all.distance == one.distance);
      CHECK(all.i == cpu.i);
      CHECK(all.j == cpu.j);
      CHECK(all.distance == std::sqrt(cpu.distance_squared));

      REQUIRE(all.shares.size() == devices.size());
      std::size_t covered = 0;
      for (std::size_t d = 0; d < devices.size(); ++d) {
        const apps::ClosestPairShare& share = all.shares[d];
        CHECK(share.device == devices[d]);
        CHECK(share.tile_pairs.first == covered);
        covered += share.tile_pairs.count;
        if (share.tile_pairs.count > 0) CHECK(share.kernel_ms > 0);
      }
      CHECK(covered == apps::brute_force_tile_pairs(points.size(), base));
      const apps::MultiGpuClosestPair synchronous = apps::split_closest_pair(
          jit, points, {devices, base, apps::HostTransfers::synchronous});
      CHECK(synchronous.i == all.i);
      CHECK(synchronous.j == all.j);
      CHECK(synchronous.distance == all.distance);
    }
  }
}

TEST_CASE("brute-force ranges of tile pairs folded on the host equal the whole brute force") {
  // One device standing in for several: each range searched on its own, as a device would.
  const Context& context = ptxrt::testing::test_context();
  for (const std::vector<apps::Point2>& points : closest_pair_inputs()) {
    const int base = 32;
    CAPTURE(points.size());
    const Module module = ptxrt::testing::test_jit().module(
        apps::builtin_program("closest_pair"), {.defines = {{"BASE", std::to_string(base)}}}, context);
    const DeviceBuffer<apps::Point2> device_points(context, std::span(points));
    const apps::ClosestPair whole = single_gpu_brute_force(points, base);
    for (std::size_t parts : {2u, 3u, 7u}) {
      CAPTURE(parts);
      PairMinimum best = no_pair_yet(infinite_distance());
      for (const apps::RowBlock& range : apps::split_tile_pairs(points.size(), base, parts)) {
        apps::BruteForceRange search(context,
                                     {module.kernel("brute_force"), module.kernel("reduce_minima")},
                                     base, points.size(), range.first, range.first + range.count);
        merge_minimum(best, search.search(device_points).minimum);
      }
      CHECK(static_cast<std::size_t>(best.first) == whole.i);
      CHECK(static_cast<std::size_t>(best.second) == whole.j);
      CHECK(std::sqrt(best.distance_squared) == whole.distance);
    }
  }
}

TEST_CASE("split_closest_pair refuses a device listed twice, a lone point and a bad BASE") {
  Jit& jit = ptxrt::testing::test_jit();
  const std::vector<apps::Point2> points =
      apps::generate_points(100, apps::PointDistribution::uniform, 87);
  CHECK_THROWS_WITH_AS(apps::split_closest_pair(jit, points, {{0, 0}, 128}),
                       "split_closest_pair: device 0 is listed twice", Error);
  CHECK_THROWS_WITH_AS(apps::split_closest_pair(jit, std::span(points).first(1), {{0}, 128}),
                       "closest pair: needs at least 2 points, got 1", Error);
  CHECK_THROWS_WITH_AS(apps::split_closest_pair(jit, points, {{0}, 48}),
                       "closest pair: BASE 48 is not a power of two from 32 to 1024", Error);
}
