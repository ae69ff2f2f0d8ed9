// The host programs' pure parts, which need no GPU: size checks, define resolution, launch
// geometry, multi-pass and bitonic schedules, error bounds, random inputs, reports and PPM files.
#include <doctest/doctest.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "apps/classic/histogram.hpp"
#include "apps/classic/ppm.hpp"
#include "apps/classic/raytrace.hpp"
#include "apps/classic/reduce.hpp"
#include "apps/classic/simpson.hpp"
#include "apps/classic/sort.hpp"
#include "apps/classic/transpose.hpp"
#include "apps/classic/vector_add.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"
#include "apps/matmul/matmul.hpp"
#include "apps/matmul/matrix_add.hpp"
#include "ptxrt/core/error.hpp"

namespace apps = ptxrt::apps;
using ptxrt::Error;

TEST_CASE("positive_size rejects zero and negative sizes, naming them") {
  CHECK(apps::positive_size("n", 5) == 5);
  CHECK_THROWS_WITH_AS(apps::positive_size("vecadd n", 0), "vecadd n must be at least 1, got 0",
                       Error);
  CHECK_THROWS_WITH_AS(apps::positive_size("vecadd n", -5), "vecadd n must be at least 1, got -5",
                       Error);
}

TEST_CASE("positive_int rejects sizes beyond the kernels' int parameters") {
  CHECK(apps::positive_int("m", INT_MAX) == INT_MAX);
  CHECK_THROWS_WITH_AS(apps::positive_int("matmul m", 2147483648ll),
                       "matmul m = 2147483648 exceeds the kernel's int limit 2147483647", Error);
}

TEST_CASE("checked_product multiplies, and reports a size_t overflow with the factors") {
  CHECK(apps::checked_product("rows*cols", {1000, 777}, 4) == 777000);
  constexpr std::size_t half = std::size_t{1} << 32;
  CHECK_THROWS_WITH_AS(apps::checked_product("m*n", {half, half}, 1),
                       "m*n = 4294967296 * 4294967296 elements of 1 bytes overflows size_t", Error);
  CHECK_THROWS_WITH_AS(apps::checked_product("n", {std::size_t{1} << 62}, 4),
                       "n = 4611686018427387904 elements of 4 bytes overflows size_t", Error);
}

TEST_CASE("next_power_of_two pads to the smallest power of two that holds the count") {
  CHECK(apps::next_power_of_two(0) == 1);
  CHECK(apps::next_power_of_two(1) == 1);
  CHECK(apps::next_power_of_two(2) == 2);
  CHECK(apps::next_power_of_two(3) == 4);
  CHECK(apps::next_power_of_two(100003) == 131072);
  CHECK(apps::next_power_of_two(1ull << 40) == 1ull << 40);
  CHECK_THROWS_AS(apps::next_power_of_two((1ull << 62) + 1), Error);
}

TEST_CASE("grid_stride_blocks covers small inputs and caps large ones at the resident blocks") {
  CHECK(apps::grid_stride_blocks(1, 256, 132) == 1);
  CHECK(apps::grid_stride_blocks(257, 256, 132) == 2);
  CHECK(apps::grid_stride_blocks(1ull << 30, 256, 132) == 132 * 32);
  CHECK(apps::grid_stride_blocks(0, 256, 0) == 1);
}

TEST_CASE("median takes the middle sample, or the mean of the middle two") {
  CHECK(apps::median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(apps::median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(apps::median({7.0}) == 7.0);
  CHECK_THROWS_AS(apps::median({}), Error);
}

TEST_CASE("resolve_defines fills defaults and rejects constants the kernel file does not declare") {
  const auto program = ptxrt::apps::builtin_program("matmul_tiled");
  const auto defaults = apps::resolve_defines(program, {});
  REQUIRE(defaults.size() == 1);
  CHECK(defaults[0] == ptxrt::Define{"TILE_WIDTH", "16"});
  CHECK_THROWS_WITH_AS(
      apps::resolve_defines(program, {{"TILE_WIDTH", "33"}}),
      "TILE_WIDTH=33 is not valid for matmul_tiled.cu: expected one of 4, 8, 16, 32", Error);
  CHECK_THROWS_WITH_AS(
      apps::resolve_defines(ptxrt::apps::builtin_program("matmul_naive"), {{"TILE_WIDTH", "16"}}),
      "-D TILE_WIDTH: matmul_naive.cu declares no such constant (it takes BLOCK_SIZE)", Error);
  CHECK_THROWS_WITH_AS(apps::resolve_defines(ptxrt::apps::builtin_program("vector_add"), {{"N", "1"}}),
                       "-D N: vector_add.cu declares no such constant (it takes none)", Error);
  CHECK(apps::define_int(defaults, "TILE_WIDTH") == 16);
}

TEST_CASE("plan_matmul rounds the grid up to whole tiles of the chosen width") {
  const auto tiled =
      apps::plan_matmul(1000, 777, 513, apps::MatmulVariant::tiled, {{"TILE_WIDTH", "32"}});
  CHECK(tiled.entry == "matmul_tiled");
  CHECK(ptxrt::to_string(tiled.grid) == "25x32x1");  // ceil(777/32) x ceil(1000/32)
  CHECK(ptxrt::to_string(tiled.block) == "32x32x1");
  const auto naive = apps::plan_matmul(1, 7, 3, apps::MatmulVariant::naive);
  CHECK(naive.entry == "matmul_naive");
  CHECK(ptxrt::to_string(naive.grid) == "1x1x1");
  CHECK(ptxrt::to_string(naive.block) == "16x16x1");
  CHECK_THROWS_WITH_AS(apps::plan_matmul(1, 0, 1, apps::MatmulVariant::tiled),
                       "matmul n must be at least 1, got 0", Error);
  CHECK_THROWS_WITH_AS(apps::parse_matmul_variant("fast"),
                       "matmul variant 'fast' is unknown: expected naive or tiled", Error);
}

TEST_CASE("plan_matrix_add and plan_vector_add check sizes before anything runs") {
  const auto plan = apps::plan_matrix_add(257, 1009, {{"BLOCK_X", "16"}, {"BLOCK_Y", "4"}});
  CHECK(ptxrt::to_string(plan.grid) == "64x65x1");
  CHECK(ptxrt::to_string(plan.block) == "16x4x1");
  CHECK(plan.elements == 257u * 1009u);
  CHECK_THROWS_WITH_AS(apps::plan_vector_add(-1), "vecadd n must be at least 1, got -1", Error);
}

TEST_CASE("plan_transpose refuses a BLOCK_ROWS that does not divide TILE_DIM") {
  const auto plan = apps::plan_transpose(7, 33, apps::TransposeVariant::shared,
                                         {{"TILE_DIM", "16"}, {"BLOCK_ROWS", "4"}});
  CHECK(plan.entry == "transpose_shared");
  CHECK(ptxrt::to_string(plan.grid) == "3x1x1");
  CHECK(ptxrt::to_string(plan.block) == "16x4x1");
  CHECK_THROWS_WITH_AS(apps::plan_transpose(7, 33, apps::TransposeVariant::padded,
                                            {{"TILE_DIM", "16"}, {"BLOCK_ROWS", "32"}}),
                       "BLOCK_ROWS=32 must divide TILE_DIM=16 (each thread moves "
                       "TILE_DIM/BLOCK_ROWS elements)",
                       Error);
}

TEST_CASE("reduction_passes shrink n to one partial, at most 1024 blocks a pass") {
  using Pass = apps::ReducePass;
  CHECK(apps::reduction_passes(1, 256) == std::vector<Pass>{{1, 1}});
  CHECK(apps::reduction_passes(256, 256) == std::vector<Pass>{{256, 1}});
  CHECK(apps::reduction_passes(257, 256) == std::vector<Pass>{{257, 2}, {2, 1}});
  CHECK(apps::reduction_passes(10'000'003, 256) ==
        std::vector<Pass>{{10'000'003, 1024}, {1024, 4}, {4, 1}});
  CHECK(apps::reduction_passes(10'000'003, 64) ==
        std::vector<Pass>{{10'000'003, 1024}, {1024, 16}, {16, 1}});
}

TEST_CASE("sum_error_bound adds each pass's slice length and tree depth, plus the final rounding") {
  // One pass of 1 block of 256 threads over 1000 elements: slice ceil(1000/256) = 4, depth 8.
  CHECK(apps::sum_error_bound({{1000, 1}}, 256) == std::ldexp(1.0 + 4.0 + 8.0, -24));
  CHECK(apps::sum_error_bound({{1 << 20, 1024}, {1024, 4}, {4, 1}}, 256) ==
        std::ldexp(1.0 + (4 + 18) + (1 + 10) + (1 + 8), -24));
}

TEST_CASE("the cooperative sum is a reduce variant, one launch with the sum's bound") {
  CHECK(apps::parse_reduce_variant("cooperative") == apps::ReduceVariant::cooperative);
  CHECK(apps::to_string(apps::ReduceVariant::cooperative) == "cooperative");
  const auto plan = apps::plan_reduce(1'000'003, apps::ReduceVariant::cooperative);
  CHECK(plan.block_size == 256);
  // One launch of G = 1056 blocks (8 per SM x 132 SMs) holds two passes: n -> G, G -> 1.
  CHECK(apps::grid_stride_blocks(plan.n, plan.block_size, 132, 8) == 1056);
  CHECK(apps::sum_error_bound({{1'000'003, 1056}, {1056, 1}}, 256) ==
        std::ldexp(1.0 + (4 + std::log2(1056.0 * 256)) + (5 + 8), -24));
}

TEST_CASE("plan_histogram sizes shared memory for all bins, or a cluster block's share") {
  const auto block = apps::plan_histogram(1000, apps::HistogramVariant::block,
                                          {{"BINS", "16384"}, {"CLUSTER_SIZE", "8"}});
  CHECK(block.bins == 16384);
  CHECK(block.block_size == 256);
  CHECK(block.shared_bytes() == 65536);
  const auto cluster = apps::plan_histogram(1000, apps::HistogramVariant::cluster,
                                            {{"BINS", "16384"}, {"CLUSTER_SIZE", "8"}});
  CHECK(cluster.cluster_size == 8);
  CHECK(cluster.shared_bytes() == 8192);
  CHECK(apps::plan_histogram(5, apps::HistogramVariant::cluster).cluster_size == 4);
  CHECK_THROWS_WITH_AS(apps::plan_histogram(0, apps::HistogramVariant::block),
                       "histogram n must be at least 1, got 0", Error);
  CHECK_THROWS_WITH_AS(apps::parse_histogram_variant("warp"),
                       "histogram variant 'warp' is unknown: expected block or cluster", Error);
}

TEST_CASE("plan_sort pads n to a power of two and rejects more elements than int positions") {
  const auto plan =
      apps::plan_sort(100003, apps::SortVariant::bitonic_pairs, {{"BLOCK_SIZE", "128"}});
  CHECK(plan.n_pow2 == 131072);
  CHECK(plan.block_size == 128);
  CHECK(plan.launches == apps::bitonic_plan(131072, 128));
  CHECK(plan.launch_count == static_cast<int>(plan.launches.size()));
  CHECK_THROWS_WITH_AS(apps::plan_sort(2147483648ll, apps::SortVariant::bitonic),
                       "sort n = 2147483648 exceeds 2147483647: the values are int positions",
                       Error);
  CHECK_THROWS_WITH_AS(
      apps::parse_sort_variant("keys"),
      "sort variant 'keys' is unknown: expected bitonic, bitonic-pairs, radix or radix-pairs",
      Error);
}

TEST_CASE("plan_sort of the radix variants: the radix kernel's defines, a histogram and 4 passes") {
  const auto plan = apps::plan_sort(1000, apps::SortVariant::radix_pairs, {{"ITEMS", "8"}});
  CHECK(plan.program.name() == "radix_sort.cu");
  CHECK(plan.block_size == 384);
  CHECK(plan.n_pow2 == 0);
  CHECK(plan.launches.empty());
  CHECK(plan.launch_count == 5);
  CHECK(apps::define_int(plan.defines, "ITEMS") == 8);
  CHECK_THROWS_WITH_AS(apps::plan_sort(1 << 30, apps::SortVariant::radix),
                       "sort n = 1073741824 exceeds 1073741823 for the radix sort (its look-back "
                       "counts in 30 bits)",
                       Error);
  CHECK_THROWS_WITH_AS(apps::plan_sort(10, apps::SortVariant::radix, {{"ITEMS", "9"}}),
                       doctest::Contains("ITEMS"), Error);
  CHECK_THROWS_WITH_AS(apps::plan_sort(10, apps::SortVariant::bitonic, {{"ITEMS", "8"}}),
                       doctest::Contains("bitonic_sort.cu declares no such constant"), Error);
  for (const char* name : {"bitonic", "bitonic-pairs", "radix", "radix-pairs"})
    CHECK(apps::to_string(apps::parse_sort_variant(name)) == name);
}

TEST_CASE("plan_simpson needs an even n of at least 2 and caps the grid at 1024 blocks") {
  CHECK_THROWS_WITH_AS(apps::plan_simpson(7, apps::Integrand::sine),
                       "simpson n must be even and at least 2 (the rule pairs intervals), got 7",
                       Error);
  CHECK_THROWS_AS(apps::plan_simpson(0, apps::Integrand::sine), Error);
  CHECK(apps::plan_simpson(2, apps::Integrand::sine).grid.x == 1);
  CHECK(apps::plan_simpson(10'000'000, apps::Integrand::sine).grid.x == 1024);
  CHECK(apps::parse_integrand("square") == apps::Integrand::x_squared);
  CHECK(apps::interval_of(apps::Integrand::sine).exact_integral == 2.0);
}

TEST_CASE("plan_raytrace refuses more spheres than MAX_SPHERES holds") {
  const auto plan = apps::plan_raytrace(100, 17, 16, {}, {{"MAX_SPHERES", "16"}});
  CHECK(ptxrt::to_string(plan.grid) == "7x2x1");
  CHECK_THROWS_WITH_AS(apps::plan_raytrace(100, 17, 17, {}, {{"MAX_SPHERES", "16"}}),
                       "raytrace spheres = 17 exceeds MAX_SPHERES=16 (-D MAX_SPHERES=16|32|64|128)",
                       Error);
}

TEST_CASE("random inputs are a function of the seed and the stream, within the range") {
  const auto a = apps::random_floats(1000, 42, 0);
  CHECK(a == apps::random_floats(1000, 42, 0));
  CHECK(a != apps::random_floats(1000, 42, 1));
  CHECK(a != apps::random_floats(1000, 43, 0));
  for (float value : a) REQUIRE((value >= -1.0f && value < 1.0f));
  const auto counts = apps::random_uints(1000, 42, 0, 10);
  CHECK(counts == apps::random_uints(1000, 42, 0, 10));
  CHECK(counts != apps::random_uints(1000, 42, 1, 10));
  for (std::uint32_t value : counts) REQUIRE(value < 10u);
  const auto spheres = apps::random_spheres(5, 640, 480, 9);
  REQUIRE(spheres.size() == 5);
  for (const auto& sphere : spheres) {
    CHECK(std::fabs(sphere.x) <= 320.0f);
    CHECK(sphere.radius >= 1.0f);
  }
}

TEST_CASE("a run passes unless its verification failed or produced NaN") {
  apps::Run run;
  CHECK(run.passed());
  run.verified = true;
  run.max_error = 2e-5;
  run.tolerance = 1e-4;
  CHECK(run.passed());
  run.max_error = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(run.passed());
  CHECK(apps::format_run(run).find("result  FAIL") != std::string::npos);
}

TEST_CASE("record_comparison is exact at tolerance 0 and names the worst element") {
  apps::Run run;
  apps::record_comparison(run, std::vector<float>{1, 2, 3}, std::vector<float>{1, 2, 3}, 0.0);
  CHECK(run.passed());
  apps::record_comparison(run, std::vector<float>{1, 2, std::nanf("")}, std::vector<float>{1, 2, 3},
                          0.0);
  CHECK_FALSE(run.passed());
  CHECK(run.note == "worst element at index 2");
}

TEST_CASE("write_ppm writes a P6 header and the RGB bytes, dropping alpha") {
  const auto path =
      std::filesystem::temp_directory_path() / ("ptxrt-ppm-" + std::to_string(getpid()) + ".ppm");
  const std::vector<unsigned char> rgba{1, 2, 3, 255, 4, 5, 6, 255};
  apps::write_ppm(path, rgba, 2, 1);
  std::ifstream file(path, std::ios::binary);
  const std::string content{std::istreambuf_iterator<char>(file), {}};
  std::filesystem::remove(path);
  CHECK(content == std::string("P6\n2 1\n255\n\x01\x02\x03\x04\x05\x06"));
  CHECK_THROWS_AS(apps::write_ppm(path, rgba, 3, 1), Error);
}
