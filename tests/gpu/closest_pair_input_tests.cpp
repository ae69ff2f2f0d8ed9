// [perf2] on a real GPU: the closest pair from pinned host memory and from the device against the
// CPU divide & conquer, the grid's 64-bit keys for clusters finer than its 32-bit cells, the checks
// of device points, the split of a call's times, `ptxrt closest-pair` of a set generated on the
// GPU against the same set generated on the CPU; the radix sort of unsigned keys the grid sorts
// with, against std::stable_sort on poisoned outputs; argmin's vector loads on ties, signed zeros,
// NaNs and an input off 16-byte alignment. Fresh seeds each run.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "apps/classic/radix_sort.hpp"
#include "apps/classic/reduce.hpp"
#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/reference.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/core/program.hpp"
#include "tune_cli.hpp"

using namespace ptxrt;
using namespace ptxrt::apps;
using ptxrt::testing::fresh_seed;
using ptxrt::testing::full_or_sanitized;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

constexpr std::array gpu_methods{ClosestPairMethod::grid, ClosestPairMethod::divide_conquer,
                                 ClosestPairMethod::brute_force};

ClosestPairOptions test_options() {
  ClosestPairOptions options;
  options.context = test_context();
  options.jit = &test_jit();
  return options;
}

double cpu_distance(const std::vector<Point2>& points) {
  return std::sqrt(cpu_divide_conquer(points).distance_squared);
}

void check_found(const ClosestPair& found, const std::vector<Point2>& points, double expected) {
  CHECK(found.i < found.j);
  REQUIRE(found.j < points.size());
  CHECK(found.distance == expected);
  CHECK(point_distance(points[found.i], points[found.j]) == expected);
}

PinnedBuffer<Point2> pinned_copy(const std::vector<Point2>& points) {
  PinnedBuffer<Point2> pinned(test_context(), points.size());
  std::copy(points.begin(), points.end(), pinned.span().begin());
  return pinned;
}

// Half the points spread over 20000 x 20000, half in a square of side 1e-3 around the origin: far
// more than 32 of them share a cell of the 32-bit keys (side 0.3), none are equal (fp32 is fine
// near 0), so the grid sorts by the full 64-bit codes.
std::vector<Point2> dense_cluster_in_wide_box(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<float> wide(-1e4f, 1e4f);
  std::uniform_real_distribution<float> narrow(-5e-4f, 5e-4f);
  std::vector<Point2> points(n);
  for (std::size_t k = 0; k < n; ++k)
    points[k] = k % 2 == 0 ? Point2{wide(generator), wide(generator)}
                           : Point2{narrow(generator), narrow(generator)};
  return points;
}

// reduce_argmin's passes over in[0, n), as run_reduce launches them, partials poisoned.
ArgMin device_argmin(CUdeviceptr in, std::size_t n) {
  constexpr unsigned block = 256;
  const Kernel kernel = test_jit().kernel(apps::builtin_program("reduce"),
                                          compile_options({{"BLOCK_SIZE", std::to_string(block)}}),
                                          test_context(), "reduce_argmin");
  const std::vector<ReducePass> passes = reduction_passes(n, block);
  std::vector<DeviceBuffer<float>> values;
  std::vector<DeviceBuffer<long long>> indices;
  for (const ReducePass& pass : passes) {
    values.emplace_back(test_context(), pass.grid);
    indices.emplace_back(test_context(), pass.grid);
    values.back().memory().fill_words(poison_word);
    indices.back().fill_bytes(0xff);
  }
  for (std::size_t p = 0; p < passes.size(); ++p) {
    const LaunchConfig config{.grid = passes[p].grid, .block = block};
    const auto count = static_cast<long long>(passes[p].count);
    if (p == 0)
      kernel.launch(config, in, CUdeviceptr{0}, values[p], indices[p], count);
    else
      kernel.launch(config, values[p - 1], indices[p - 1], values[p], indices[p], count);
  }
  const std::vector<float> value = values.back().download();
  const std::vector<long long> index = indices.back().download();
  return {value.front(), index.front()};
}

}  // namespace

TEST_CASE("points in pinned memory and on the device give the CPU's distance by every GPU method") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (PointDistribution distribution :
       {PointDistribution::uniform, PointDistribution::normal, PointDistribution::clustered})
    for (std::size_t n : {2u, 4099u, full_or_sanitized(200'003u, 5'003u)}) {
      CAPTURE(to_string(distribution));
      CAPTURE(n);
      const std::vector<Point2> points = generate_points(n, distribution, seed + n);
      const double expected = cpu_distance(points);
      const PinnedBuffer<Point2> pinned = pinned_copy(points);
      const DeviceBuffer<Point2> device(test_context(), std::span<const Point2>(points));
      for (ClosestPairMethod method : gpu_methods) {
        CAPTURE(to_string(method));
        const ClosestPair from_pinned = closest_pair(pinned, method, test_options());
        CHECK(from_pinned.method == method);
        check_found(from_pinned, points, expected);
        const ClosestPair from_device = closest_pair(device, method, test_options());
        CHECK(from_device.method == method);
        check_found(from_device, points, expected);
      }
      CHECK(closest_pair(device, ClosestPairMethod::automatic, test_options()).method ==
            ClosestPairMethod::grid);
    }
}

TEST_CASE("grid: a cluster finer than the 32-bit cells, and copies of one point, match the CPU") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const std::size_t n = full_or_sanitized(300'007u, 20'011u);
  std::vector<Point2> points = dense_cluster_in_wide_box(n, seed);
  check_found(closest_pair(points, ClosestPairMethod::grid, test_options()), points,
              cpu_distance(points));
  // A third of the set one point: distance 0, found without comparing every copy with every other.
  for (std::size_t k = 0; k < n; k += 3) points[k] = points[1];
  check_found(closest_pair(points, ClosestPairMethod::grid, test_options()), points, 0.0);
}

TEST_CASE("device points that are not finite are refused naming the first, as host points are") {
  std::vector<Point2> points = generate_points(10'007, PointDistribution::uniform, fresh_seed());
  points[7777].x = std::numeric_limits<float>::infinity();
  points[777].y = std::numeric_limits<float>::quiet_NaN();
  const DeviceBuffer<Point2> device(test_context(), std::span<const Point2>(points));
  const char* const message = "closest pair: point 777 has a coordinate that is not finite";
  for (ClosestPairMethod method : gpu_methods) {
    CAPTURE(to_string(method));
    CHECK_THROWS_WITH_AS(closest_pair(device, method, test_options()), message, Error);
    CHECK_THROWS_WITH_AS(closest_pair(points, method, test_options()), message, Error);
  }
  CHECK_THROWS_WITH_AS(
      closest_pair(device, ClosestPairMethod::cpu_divide_conquer, test_options()),
      "closest pair: method 'cpu-dc' runs on the CPU; points on the GPU need grid, dc or brute",
      Error);
}

TEST_CASE("a call's set-up, upload and GPU times are apart and within its total") {
  const std::vector<Point2> points = generate_points(full_or_sanitized(1'000'003u, 20'011u),
                                                     PointDistribution::uniform, fresh_seed());
  const PinnedBuffer<Point2> pinned = pinned_copy(points);
  const DeviceBuffer<Point2> device(test_context(), std::span<const Point2>(points));
  for (const ClosestPair& found : {closest_pair(points, ClosestPairMethod::grid, test_options()),
                                   closest_pair(pinned, ClosestPairMethod::grid, test_options()),
                                   closest_pair(device, ClosestPairMethod::grid, test_options())}) {
    const ClosestPairTimes& times = found.times;
    CHECK(times.setup_ms >= 0.0);
    CHECK(times.sort_ms > 0.0);
    CHECK(times.rest_ms > 0.0);
    CHECK(times.gpu_ms() == times.sort_ms + times.rest_ms);
    CHECK(times.setup_ms + times.upload_ms + times.gpu_ms() <= times.total_ms);
  }
  CHECK(closest_pair(device, ClosestPairMethod::grid, test_options()).times.upload_ms == 0.0);
  CHECK(closest_pair(pinned, ClosestPairMethod::grid, test_options()).times.upload_ms > 0.0);
}

TEST_CASE("closest-pair makes a generated set on the GPU by default: the CPU-made set's pair") {
  ptxrt::testing::Scratch scratch;
  const std::string n = std::to_string(full_or_sanitized(300'007u, 20'011u));
  const std::string seed = std::to_string(fresh_seed() % 1'000'000);
  CAPTURE(seed);
  for (const char* distribution : {"uniform", "normal", "clustered"}) {
    CAPTURE(distribution);
    const std::vector<std::string> command{"closest-pair", "--n",    n,         "--dist",
                                           distribution,   "--seed", seed,      "--method",
                                           "grid",         "--json", "--verify"};
    const nlohmann::json made_there = ptxrt::testing::cli_json(scratch, command);
    std::vector<std::string> from_host = command;
    from_host.insert(from_host.end(), {"--from", "host"});
    const nlohmann::json made_here = ptxrt::testing::cli_json(scratch, from_host);
    CHECK(made_there["from"] == "device");
    CHECK(made_there["input_setup_ms"].get<double>() > 0.0);
    CHECK(made_there["verify"]["agrees"] == true);
    CHECK(made_here["from"] == "host");
    CHECK(made_here["input_setup_ms"].get<double>() == 0.0);
    for (const char* key : {"i", "j", "point_i", "point_j", "distance"}) {
      CAPTURE(key);
      CHECK(made_there[key] == made_here[key]);
    }
  }
}

// Keys below 2^bits, so that the passes' whole bytes order them as the CPU does; every size
// leaves a partial tile, and the outputs of both buffers are poisoned before the sort.
TEST_CASE(
    "radix sort of unsigned keys by 8, 20 and 32 bits, with values, equals std::stable_sort") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 generator(seed);
  for (const char* items : {"8", "20"}) {
    for (std::size_t n : {1u, 2u, 385u, 6'145u, full_or_sanitized(1'000'003u, 20'011u)}) {
      RadixSort sorter(test_context(), test_jit(), n, {{"ITEMS", items}});
      for (int bits : {8, 20, 32}) {
        CAPTURE(items);
        CAPTURE(n);
        CAPTURE(bits);
        const std::uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1u;
        std::vector<std::uint32_t> keys(n);
        for (std::uint32_t& key : keys) key = static_cast<std::uint32_t>(generator()) & mask;
        std::vector<std::uint32_t> values(n);
        std::iota(values.begin(), values.end(), 0u);
        std::array<DeviceBuffer<std::uint32_t>, 4> device{
            DeviceBuffer<std::uint32_t>(test_context(), n),
            DeviceBuffer<std::uint32_t>(test_context(), n),
            DeviceBuffer<std::uint32_t>(test_context(), n),
            DeviceBuffer<std::uint32_t>(test_context(), n)};
        for (auto& buffer : device) buffer.memory().fill_words(poison_word);
        device[0].upload(std::span<const std::uint32_t>(keys));
        device[2].upload(std::span<const std::uint32_t>(values));
        const RadixBuffers buffers{{device[0].address(), device[1].address()},
                                   {device[2].address(), device[3].address()}};
        const int result = sorter.sort(buffers, n, RadixKeys::unsigned_int, bits);
        CHECK(result == RadixSort::passes_for(bits) % 2);

        std::vector<std::uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
        std::vector<std::uint32_t> expected_keys(n);
        for (std::size_t k = 0; k < n; ++k) expected_keys[k] = keys[order[k]];
        CHECK(device[result].download() == expected_keys);
        CHECK(device[2 + result].download() == order);
      }
    }
  }
}

TEST_CASE("argmin keeps the first of equal minima through its vector loads, aligned or not") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<float> above_one(1.0f, 2.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t n : {1u, 5u, 4'099u, full_or_sanitized(1'000'003u, 20'011u)}) {
    std::vector<float> values(n);
    for (float& value : values) value = above_one(generator);
    std::uniform_int_distribution<std::size_t> position(0, n - 1);
    const std::size_t first = position(generator);
    const std::size_t second = position(generator);
    std::vector<std::vector<float>> cases;
    // Signed zeros tie: the smaller index wins, whichever zero it holds.
    cases.push_back(values);
    cases.back()[std::max(first, second)] = 0.0f;
    cases.back()[std::min(first, second)] = -0.0f;
    // The minimum in the last element, which the scalar tail reads when n % 4 != 0.
    cases.push_back(values);
    cases.back()[n - 1] = -1.0f;
    // Only NaNs: they order after every number and among themselves by index.
    cases.push_back(std::vector<float>(n, nan));
    for (const std::vector<float>& in : cases) {
      CAPTURE(n);
      const ArgMin expected = argmin(in);
      const DeviceBuffer<float> aligned(test_context(), std::span<const float>(in));
      // One float of padding in front: the input starts 4 bytes past a 16-byte boundary.
      DeviceBuffer<float> padded(test_context(), n + 1);
      padded.memory().fill_words(poison_word);
      padded.upload(std::span<const float>(in), 1);
      for (const CUdeviceptr start : {aligned.address(), padded.address() + sizeof(float)}) {
        const ArgMin found = device_argmin(start, n);
        CHECK(found.index == expected.index);
        CHECK(std::bit_cast<std::uint32_t>(found.value) ==
              std::bit_cast<std::uint32_t>(expected.value));
      }
    }
  }
}
