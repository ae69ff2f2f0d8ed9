// [kernels] The classic kernels through the host programs of apps/ (the code `ptxrt run` and
// `ptxrt bench` run): every variant and every define value that changes the launch, sizes of 1,
// primes, non-multiples of every tile and some large ones, outputs poisoned before each run and
// compared with the CPU reference. Each case draws a fresh seed and prints it when it fails.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "apps/classic/aos_soa.hpp"
#include "apps/classic/histogram.hpp"
#include "apps/classic/raytrace.hpp"
#include "apps/classic/reduce.hpp"
#include "apps/classic/simpson.hpp"
#include "apps/classic/sort.hpp"
#include "apps/classic/transpose.hpp"
#include "apps/classic/vector_add.hpp"
#include "apps/common/benchmark.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/timing.hpp"
#include "apps/matmul/cublas.hpp"
#include "apps/matmul/matmul.hpp"
#include "apps/matmul/matrix_add.hpp"
#include "gpu_fixture.hpp"

namespace apps = ptxrt::apps;
using ptxrt::Define;
using ptxrt::testing::fresh_seed;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

apps::RunOptions checked_once(std::uint64_t seed) {
  return {.seed = seed, .repeats = 1, .verify = true};
}

void check_passed(const apps::Run& run) {
  INFO(apps::format_run(run));
  CHECK(run.verified);
  CHECK(run.passed());
  CHECK(run.median_ms > 0.0);
}

std::vector<Define> define(const char* name, int value) { return {{name, std::to_string(value)}}; }

}  // namespace

TEST_CASE("vecadd equals the CPU sum exactly for sizes 1 to 2^20+3") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (std::int64_t n : {1, 2, 3, 7, 31, 257, 1009, 4099, (1 << 20) + 3}) {
    CAPTURE(n);
    check_passed(apps::run_vector_add(test_jit(), test_context(), apps::plan_vector_add(n),
                                      checked_once(seed)));
  }
}

TEST_CASE("matadd equals the CPU sum exactly for every block shape and ragged sizes") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (int block_x : {8, 16, 32})
    for (int block_y : {4, 8, 16, 32})
      for (auto [rows, cols] : {std::pair{1, 1}, {7, 31}, {257, 1009}, {1000, 777}}) {
        CAPTURE(block_x);
        CAPTURE(block_y);
        CAPTURE(rows);
        CAPTURE(cols);
        const auto plan = apps::plan_matrix_add(
            rows, cols,
            {{"BLOCK_X", std::to_string(block_x)}, {"BLOCK_Y", std::to_string(block_y)}});
        check_passed(apps::run_matrix_add(test_jit(), test_context(), plan, checked_once(seed)));
      }
}

TEST_CASE("matmul naive and tiled match the double CPU product within 1e-4 for every tile") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const std::vector<std::array<int, 3>> shapes{
      {1, 1, 1},
      {7, 31, 1},
      {1, 1, 257},
      {31, 7, 1009},
      {257, 33, 65},
      ptxrt::testing::full_or_sanitized<std::array<int, 3>>({1000, 777, 513}, {130, 97, 67})};
  const auto check_variant = [&](apps::MatmulVariant variant, const char* name, int value) {
    for (const auto& [m, n, k] : shapes) {
      CAPTURE(name);
      CAPTURE(value);
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      const auto plan = apps::plan_matmul(m, n, k, variant, define(name, value));
      const apps::Run run = apps::run_matmul(test_jit(), test_context(), plan, checked_once(seed));
      check_passed(run);
      CHECK(run.max_error <= 1e-4);
    }
  };
  for (int block : {8, 16, 32}) check_variant(apps::MatmulVariant::naive, "BLOCK_SIZE", block);
  for (int tile : {4, 8, 16, 32}) check_variant(apps::MatmulVariant::tiled, "TILE_WIDTH", tile);
}

TEST_CASE("transpose is exact for every variant, tile and block-row count") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (auto variant : {apps::TransposeVariant::naive, apps::TransposeVariant::shared,
                       apps::TransposeVariant::padded})
    for (auto [tile, block_rows] :
         {std::pair{16, 4}, {16, 8}, {16, 16}, {32, 4}, {32, 8}, {32, 16}, {32, 32}})
      for (auto [rows, cols] : {std::pair{1, 1}, {1, 33}, {7, 31}, {257, 1009}, {1000, 777}}) {
        CAPTURE(apps::to_string(variant));
        CAPTURE(tile);
        CAPTURE(block_rows);
        CAPTURE(rows);
        CAPTURE(cols);
        const auto plan = apps::plan_transpose(
            rows, cols, variant,
            {{"TILE_DIM", std::to_string(tile)}, {"BLOCK_ROWS", std::to_string(block_rows)}});
        check_passed(apps::run_transpose(test_jit(), test_context(), plan, checked_once(seed)));
      }
}

TEST_CASE("reduce: argmin is exact and the sum within its bound for every block size") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (auto variant : {apps::ReduceVariant::sum, apps::ReduceVariant::argmin})
    for (int block : {64, 128, 256, 512, 1024})
      for (std::int64_t n : {1, 7, 31, 257, 1009, 65537, 10'000'003}) {
        CAPTURE(apps::to_string(variant));
        CAPTURE(block);
        CAPTURE(n);
        const auto plan = apps::plan_reduce(n, variant, define("BLOCK_SIZE", block));
        const apps::Run run =
            apps::run_reduce(test_jit(), test_context(), plan, checked_once(seed));
        check_passed(run);
        CHECK(run.launches == static_cast<int>(plan.passes.size()));
      }
}

TEST_CASE("reduce cooperative: one launch, within the sum's bound, for every block size") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (int block : {64, 128, 256, 512, 1024})
    for (std::int64_t n : {1, 7, 31, 257, 1009, 65537, 10'000'003}) {
      CAPTURE(block);
      CAPTURE(n);
      const auto plan =
          apps::plan_reduce(n, apps::ReduceVariant::cooperative, define("BLOCK_SIZE", block));
      const apps::Run run = apps::run_reduce(test_jit(), test_context(), plan, checked_once(seed));
      check_passed(run);
      CHECK(run.launches == 1);
    }
}

TEST_CASE("reduce cooperative equals reduce_sum's two passes at its grid, bit for bit") {
  const ptxrt::Context& context = test_context();
  const ptxrt::Program program = ptxrt::apps::builtin_program("reduce");
  const ptxrt::Kernel two_pass = test_jit().kernel(program, {}, context, "reduce_sum");
  const ptxrt::Kernel one_launch =
      test_jit().kernel(program, {}, context, "reduce_sum_cooperative");
  for (std::int64_t n : {1000, 1'000'003, 30'000'001}) {
    CAPTURE(n);
    const std::vector<float> input = apps::random_floats(static_cast<std::size_t>(n), fresh_seed());
    const ptxrt::DeviceBuffer<float> in(context, std::span<const float>(input));
    const auto grid = static_cast<unsigned>(
        std::min<long long>(one_launch.max_cooperative_blocks(256), (n + 255) / 256));
    ptxrt::DeviceBuffer<float> partial(context, grid), first(context, 1), second(context, 1);
    first.memory().fill_words(apps::poison_word);
    second.memory().fill_words(apps::poison_word);
    two_pass.launch({.grid = grid, .block = 256}, in, partial, static_cast<long long>(n));
    two_pass.launch({.grid = 1, .block = 256}, partial, first, static_cast<long long>(grid));
    one_launch.launch({.grid = grid, .block = 256, .cooperative = true}, in, partial, second,
                      static_cast<long long>(n));
    CHECK(std::bit_cast<std::uint32_t>(first.download()[0]) ==
          std::bit_cast<std::uint32_t>(second.download()[0]));
  }
}

TEST_CASE("histogram: block and cluster variants count exactly like the CPU, odd sizes") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const bool clusters = test_context().device().properties().cluster_launch;
  for (int bins : {256, 4096, 32768})
    for (std::int64_t n : {1, 7, 1009, 1'000'003}) {
      CAPTURE(bins);
      CAPTURE(n);
      const auto block =
          apps::plan_histogram(n, apps::HistogramVariant::block, define("BINS", bins));
      check_passed(apps::run_histogram(test_jit(), test_context(), block, checked_once(seed)));
      if (!clusters) continue;
      for (int cluster : {2, 4, 8}) {
        CAPTURE(cluster);
        std::vector<Define> defines = define("BINS", bins);
        defines.push_back({"CLUSTER_SIZE", std::to_string(cluster)});
        const auto plan = apps::plan_histogram(n, apps::HistogramVariant::cluster, defines);
        check_passed(apps::run_histogram(test_jit(), test_context(), plan, checked_once(seed)));
      }
    }
  if (!clusters) MESSAGE("no thread-block clusters on this device: the block variant only");
}

TEST_CASE("bitonic sort of keys and of key/position pairs equals the stable CPU sort") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (auto variant : {apps::SortVariant::bitonic, apps::SortVariant::bitonic_pairs})
    for (int block : {128, 256, 512, 1024})
      for (std::int64_t n :
           {1, 2, 7, 31, 257, 1009, 4096, ptxrt::testing::full_or_sanitized(100003, 10007)}) {
        CAPTURE(apps::to_string(variant));
        CAPTURE(block);
        CAPTURE(n);
        const auto plan = apps::plan_sort(n, variant, define("BLOCK_SIZE", block));
        check_passed(apps::run_sort(test_jit(), test_context(), plan, checked_once(seed)));
      }
}

// Sizes around the tile (BLOCK_SIZE*ITEMS: 2048 .. 10240) and the 32-key warp rows, a partial
// last tile, several tiles of look-back, and for every shape the smallest inputs.
TEST_CASE("radix sort of keys and of key/position pairs equals the stable CPU sort by float bits") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (auto variant : {apps::SortVariant::radix, apps::SortVariant::radix_pairs})
    for (const char* block : {"256", "384", "512"})
      for (const char* items : {"8", "16", "20"})
        for (std::int64_t n : {1, 2, 31, 33, 383, 2047, 6145, 10241,
                               ptxrt::testing::full_or_sanitized(1'000'003, 20'011)}) {
          CAPTURE(apps::to_string(variant));
          CAPTURE(block);
          CAPTURE(items);
          CAPTURE(n);
          const auto plan = apps::plan_sort(n, variant, {{"BLOCK_SIZE", block}, {"ITEMS", items}});
          check_passed(apps::run_sort(test_jit(), test_context(), plan, checked_once(seed)));
        }
}

TEST_CASE("raytrace renders the CPU image byte for byte and writes it as a PPM") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (int max_spheres : {16, 32, 64, 128})
    for (auto [width, height] : {std::pair{1, 1}, {7, 31}, {257, 129}, {1024, 768}}) {
      CAPTURE(max_spheres);
      CAPTURE(width);
      CAPTURE(height);
      const auto plan =
          apps::plan_raytrace(width, height, max_spheres, {}, define("MAX_SPHERES", max_spheres));
      check_passed(apps::run_raytrace(test_jit(), test_context(), plan, checked_once(seed)));
    }
  const auto image = std::filesystem::temp_directory_path() /
                     ("ptxrt-raytrace-" + std::to_string(getpid()) + ".ppm");
  const auto plan = apps::plan_raytrace(64, 48, 10, image);
  check_passed(apps::run_raytrace(test_jit(), test_context(), plan, checked_once(seed)));
  CHECK(std::filesystem::file_size(image) == std::string("P6\n64 48\n255\n").size() + 64 * 48 * 3);
  std::filesystem::remove(image);
}

TEST_CASE("simpson in fp64 agrees with the CPU rule and with the known integrals") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (auto integrand : {ptxrt::apps::Integrand::four_over_one_plus_x_squared,
                         ptxrt::apps::Integrand::x_squared, ptxrt::apps::Integrand::sine})
    for (int block : {128, 256, 512})
      for (std::int64_t n : {2, 8, 1000, 1'000'002, 10'000'000}) {
        CAPTURE(apps::to_string(integrand));
        CAPTURE(block);
        CAPTURE(n);
        const auto plan = apps::plan_simpson(n, integrand, define("BLOCK_SIZE", block));
        check_passed(apps::run_simpson(test_jit(), test_context(), plan, checked_once(seed)));
      }
}

TEST_CASE("aos and soa layouts both compute the exact squared norms") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  for (std::int64_t n : {1, 7, 1009, (1 << 20) + 1}) {
    CAPTURE(n);
    const apps::AosSoaRuns runs =
        apps::run_aos_soa(test_jit(), test_context(), apps::plan_aos_soa(n), checked_once(seed));
    check_passed(runs.aos);
    check_passed(runs.soa);
    CHECK(runs.aos.kernel == "read_aos");
    CHECK(runs.soa.kernel == "read_soa");
  }
}

TEST_CASE("median_launch_ms prepares before every run: one warm-up plus the repeats") {
  int prepared = 0;
  int launched = 0;
  const double ms = apps::median_launch_ms(
      test_context(), 5, [&] { ++prepared; }, [&] { ++launched; });
  CHECK(prepared == 6);
  CHECK(launched == 6);
  CHECK(ms >= 0.0);
}

TEST_CASE("cuBLAS SGEMM with the row-major trick matches the CPU product without TF32") {
  const apps::CublasAvailability found = apps::find_cublas();
  if (!found.library) {
    MESSAGE(found.description);
    return;
  }
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const int m = 257, n = 31, k = 129;
  const auto a = apps::random_floats(static_cast<std::size_t>(m * k), seed, 0);
  const auto b = apps::random_floats(static_cast<std::size_t>(k * n), seed, 1);
  const ptxrt::DeviceBuffer<float> device_a(test_context(), std::span<const float>(a));
  const ptxrt::DeviceBuffer<float> device_b(test_context(), std::span<const float>(b));
  ptxrt::DeviceBuffer<float> device_c(test_context(), static_cast<std::size_t>(m * n));
  device_c.memory().fill_words(apps::poison_word);
  const apps::Cublas cublas(found.library, test_context());
  cublas.sgemm_row_major(device_a, device_b, device_c, m, n, k);
  // fp32 over k = 129 stays near 1e-7; TF32's 10-bit mantissa would give about 1e-3.
  CHECK(apps::max_relative_error(device_c.download(), apps::matmul(a, b, m, n, k)) <= 1e-5);
}

TEST_CASE("every bench work runs at tiny sizes, verifies, and compares with its peer") {
  const apps::BenchSizes tiny{
      .matmul = 96, .transpose = 100, .reduce = 10'007, .vector_add = 10'007, .repeats = 1};
  for (const std::string& name : apps::bench_names()) {
    CAPTURE(name);
    const auto rows = apps::bench(test_jit(), test_context(), name, tiny, fresh_seed());
    REQUIRE_FALSE(rows.empty());
    for (const apps::BenchRow& row : rows) {
      INFO(row.work << " " << apps::format_run(row.run) << " peer " << row.peer);
      CHECK(row.run.verified);
      CHECK(row.run.passed());
      if (row.peer_rate) CHECK(row.ratio().has_value());
    }
  }
  CHECK(apps::bench(test_jit(), test_context(), "matmul", tiny, 1).size() == 5);
}
