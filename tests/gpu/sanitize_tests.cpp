// The compute-sanitizer subset (scripts/gpu-check.sh --sanitize runs the cases named
// "sanitize: *" under memcheck, racecheck, synccheck and initcheck): every kernel family once, at
// small ragged sizes that still cross tile edges, with every tile or block value whose barriers or
// shared-memory layout differ. The full-size checks stay in kernels_tests, closest_pair_tests and
// sgemm_tests; under racecheck they would take hours.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "apps/classic/aos_soa.hpp"
#include "apps/classic/histogram.hpp"
#include "apps/classic/raytrace.hpp"
#include "apps/classic/reduce.hpp"
#include "apps/classic/simpson.hpp"
#include "apps/classic/sort.hpp"
#include "apps/classic/transpose.hpp"
#include "apps/classic/vector_add.hpp"
#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/common/reference.hpp"
#include "apps/matmul/matmul.hpp"
#include "apps/matmul/matrix_add.hpp"
#include "apps/matmul/sgemm.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/blas/sgemm.hpp"

namespace apps = ptxrt::apps;
using ptxrt::Define;
using ptxrt::DeviceBuffer;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

const apps::RunOptions verified{.seed = 7, .repeats = 1, .verify = true};

void check_passed(const apps::Run& run) {
  INFO(apps::format_run(run));
  CHECK(run.passed());
}

std::vector<Define> define(const char* name, int value) { return {{name, std::to_string(value)}}; }

}  // namespace

TEST_CASE("sanitize: vecadd, matadd and aos-soa at ragged sizes") {
  check_passed(
      apps::run_vector_add(test_jit(), test_context(), apps::plan_vector_add(1009), verified));
  check_passed(
      apps::run_matrix_add(test_jit(), test_context(), apps::plan_matrix_add(37, 71), verified));
  const apps::AosSoaRuns runs =
      apps::run_aos_soa(test_jit(), test_context(), apps::plan_aos_soa(1009), verified);
  check_passed(runs.aos);
  check_passed(runs.soa);
}

TEST_CASE("sanitize: matmul naive and tiled, every tile width, across tile edges") {
  for (int tile : {4, 8, 16, 32}) {
    CAPTURE(tile);
    check_passed(apps::run_matmul(test_jit(), test_context(),
                                  apps::plan_matmul(33, 37, 41, apps::parse_matmul_variant("tiled"),
                                                    define("TILE_WIDTH", tile)),
                                  verified));
  }
  check_passed(apps::run_matmul(test_jit(), test_context(),
                                apps::plan_matmul(33, 37, 41, apps::parse_matmul_variant("naive")),
                                verified));
}

TEST_CASE("sanitize: transpose, every variant, across tile edges") {
  for (const char* variant : {"naive", "shared", "padded"}) {
    CAPTURE(variant);
    check_passed(apps::run_transpose(
        test_jit(), test_context(),
        apps::plan_transpose(45, 67, apps::parse_transpose_variant(variant)), verified));
  }
}

TEST_CASE("sanitize: reduce sum and argmin over more than one pass") {
  for (const char* variant : {"sum", "argmin"}) {
    CAPTURE(variant);
    check_passed(apps::run_reduce(test_jit(), test_context(),
                                  apps::plan_reduce(300'007, apps::parse_reduce_variant(variant)),
                                  verified));
  }
}

TEST_CASE("sanitize: the cooperative sum, and both histograms with every cluster size") {
  check_passed(apps::run_reduce(test_jit(), test_context(),
                                apps::plan_reduce(300'007, apps::ReduceVariant::cooperative),
                                verified));
  check_passed(apps::run_histogram(
      test_jit(), test_context(),
      apps::plan_histogram(100'003, apps::HistogramVariant::block, define("BINS", 1024)),
      verified));
  if (!test_context().device().properties().cluster_launch) return;
  for (int cluster : {2, 4, 8}) {
    CAPTURE(cluster);
    check_passed(apps::run_histogram(
        test_jit(), test_context(),
        apps::plan_histogram(100'003, apps::HistogramVariant::cluster,
                             {{"BINS", "1024"}, {"CLUSTER_SIZE", std::to_string(cluster)}}),
        verified));
  }
}

TEST_CASE("sanitize: bitonic and radix sorts of keys and pairs, several tiles") {
  for (const char* variant : {"bitonic", "bitonic-pairs", "radix", "radix-pairs"}) {
    CAPTURE(variant);
    check_passed(apps::run_sort(test_jit(), test_context(),
                                apps::plan_sort(14'001, apps::parse_sort_variant(variant)),
                                verified));
  }
}

TEST_CASE("sanitize: raytrace and simpson") {
  check_passed(
      apps::run_raytrace(test_jit(), test_context(), apps::plan_raytrace(67, 45, 9, {}), verified));
  check_passed(apps::run_simpson(test_jit(), test_context(),
                                 apps::plan_simpson(100'002, apps::parse_integrand("pi")),
                                 verified));
}

// The divide & conquer sorts its points with the device bitonic sort (host/device_sort): this
// case covers that kernel too.
TEST_CASE("sanitize: closest pair, every GPU method and the smallest and largest BASE") {
  for (std::size_t n : {7u, 3001u}) {
    const auto points = apps::generate_points(n, apps::PointDistribution::clustered, 11 + n);
    const double expected =
        apps::closest_pair(points, apps::ClosestPairMethod::cpu_divide_conquer, {}).distance;
    for (apps::ClosestPairMethod method :
         {apps::ClosestPairMethod::grid, apps::ClosestPairMethod::divide_conquer,
          apps::ClosestPairMethod::brute_force}) {
      for (int base : {32, 1024}) {
        CAPTURE(apps::to_string(method));
        CAPTURE(base);
        CAPTURE(n);
        apps::ClosestPairOptions options;
        options.base = base;
        options.context = test_context();
        options.jit = &test_jit();
        CHECK(apps::closest_pair(points, method, options).distance == expected);
      }
    }
  }
}

TEST_CASE("sanitize: every listed sgemm config, on each entry and on a padded B") {
  for (const ptxrt::SgemmConfig& config :
       apps::sgemm_configs(test_context().device().properties())) {
    CAPTURE(config.describe());
    // K % 4 == 0 with N % 4 == 0: the vector-A path, its last tile partial. N % 4 != 0 with the
    // padding forced: sgemm_pad_rows and sgemm_pitched_b, the pad's columns read.
    for (const auto [m, n, k, padded] :
         {std::array{67, 132, 33, 0}, std::array{67, 131, 33, 0}, std::array{67, 132, 36, 0},
          std::array{67, 131, 33, 1}, std::array{67, 131, 36, 1}}) {
      const auto a = ptxrt::testing::random_floats(static_cast<std::size_t>(m * k), 3);
      const auto b = ptxrt::testing::random_floats(static_cast<std::size_t>(k * n), 4);
      DeviceBuffer<float> device_a(test_context(), std::span<const float>(a));
      DeviceBuffer<float> device_b(test_context(), std::span<const float>(b));
      DeviceBuffer<float> device_c(test_context(), static_cast<std::size_t>(m * n));
      ptxrt::sgemm(test_context(), m, n, k, device_a, device_b, device_c,
                   {.choice = ptxrt::SgemmChoice::given,
                    .config = config,
                    .padding = padded ? ptxrt::SgemmPadding::always : ptxrt::SgemmPadding::never,
                    .jit = &test_jit()});
      const auto expected = apps::matmul(a, b, static_cast<std::size_t>(m),
                                         static_cast<std::size_t>(n), static_cast<std::size_t>(k));
      CHECK(apps::max_relative_error(device_c.download(), expected) <= 1e-4);
    }
  }
}
