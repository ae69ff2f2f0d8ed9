// The SGEMM family's shape-aware default, without a GPU: the heuristic's choice for the shape
// classes of docs/perf-notes.md on an H100 (an H200 where a test cites the H200's benches: the two
// differ in memory bandwidth, which prices a split), the model behind it, the splits of K and
// their reduction, and the fit script that mirrors the model (tests/cpu/sgemm_tuning_tests.cpp:
// the tuning space and the tuned choice).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "apps/matmul/sgemm_bench.hpp"
#include "apps/matmul/sgemm_shapes.hpp"
#include "process.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/core/error.hpp"
#include "sgemm_test_shapes.hpp"

using ptxrt::SgemmConfig;
using ptxrt::testing::chosen;
using ptxrt::testing::h100;
using ptxrt::testing::h200;
using ptxrt::testing::Shape;
using ptxrt::testing::turing;

namespace {

// Blocks of the chosen config's launch: tiles of C times slices of K.
long long blocks_of(const SgemmConfig& config, const Shape& shape) {
  return ptxrt::sgemm_tiles(config, shape.m, shape.n) * config.split_k;
}

// 90 % of an H100's SMs get a block at least.
bool fills_the_sms(const SgemmConfig& config, const Shape& shape) {
  return static_cast<double>(blocks_of(config, shape)) >= 0.9 * h100().sm_count;
}

}  // namespace

TEST_CASE(
    "large squares get the 128x256 tile, flat products no split and smaller tiles as K "
    "shortens") {
  // All load A by vectors. The large squares run 128x256 tiles on the tensor cores at fp32
  // accuracy (docs/perf-data/sgemm-3xtf32-h200.txt: 1.006x cuBLAS at 2048³ and 4096³, 1.020x at
  // 8192³, where the FFMAs' best reached 0.93-0.95x).
  for (const Shape shape :
       {Shape{2048, 2048, 2048}, Shape{4096, 4096, 4096}, Shape{8192, 8192, 8192}}) {
    CAPTURE(shape.m);
    const SgemmConfig config = chosen(shape);
    CAPTURE(config.describe());
    CHECK(config.tf32x3);
    CHECK(config.block_m() * config.block_n() == 128 * 256);
    CHECK(config.split_k == 1);
    CHECK(config.vector_a);
  }
  // Mid-size products take the tensor cores' smaller tiles, whether B's rows are 16-byte aligned
  // (docs/perf-data/sgemm-menu-tf32-aligned-h200.json.xz: 128x64 at 1.25x cuBLAS at 5000x800x2000
  // and 1.22x at 3000x2048x1500, where the FFMAs' best reached 0.98x and 1.07x) or not, since the
  // any-alignment entry loads A and B by 16-byte chunks (at 682³ split 4 0.98x, the FFMAs' best
  // 0.83x: docs/perf-data/sgemm-tf32-chunks-shapes-h200.json).
  for (const Shape shape :
       {Shape{5000, 800, 2000}, Shape{3000, 2048, 1500}, Shape{682, 682, 682}}) {
    CAPTURE(shape.m);
    const SgemmConfig config = chosen(shape);
    CAPTURE(config.describe());
    CHECK(config.tf32x3);
    CHECK(config.block_m() * config.block_n() <= 128 * 128);
  }
  // Before compute capability 8.0 there is no TF32: an H100's resources at 7.0 take the FFMAs'
  // 128x256 with K steps of 32, the 4096³ tune's winner
  // (docs/perf-data/sgemm-menu-shapes-h200.json.xz: 47.76 TFLOP/s at 4096³).
  ptxrt::DeviceProperties before_tf32 = h100();
  before_tf32.cc_major = 7;
  before_tf32.cc_minor = 0;
  const SgemmConfig ffma = ptxrt::sgemm_heuristic_config(before_tf32, 4096, 4096, 4096);
  CAPTURE(ffma.describe());
  CHECK_FALSE(ffma.tf32x3);
  CHECK(ffma.block_m() * ffma.block_n() == 128 * 256);
  CHECK(ffma.block_k == 32);
  // A flat product is its prologue and its stores: one block's tile of C stored per round is
  // what the other resident blocks cannot hide, so the tile shrinks as K does. At K of a few
  // dozen the 64x64 tile, 4 blocks per SM, reached 0.97-1.00x cuBLAS where 128x256 reached
  // 0.36-0.49x (docs/perf-data/sgemm-train-11-h100.json.xz, -12); since the FFMAs' last tile at
  // BK 16 stops at K, 64x128 at 4 blocks an SM runs fastest of the configs timed at K of 20 to 37
  // (docs/perf-data/sgemm-ffma-tail-short-k-h200.txt, sgemm-ffma-tail-bk16-ab-h200.txt).
  int previous_tile = 1 << 30;
  for (const Shape shape : {Shape{8192, 8192, 256}, Shape{8192, 8192, 128}, Shape{8192, 8192, 64},
                            Shape{8192, 8192, 17}}) {
    CAPTURE(shape.k);
    const SgemmConfig config = chosen(shape);
    CAPTURE(config.describe());
    CHECK(config.split_k == 1);
    CHECK(config.block_m() * config.block_n() <= previous_tile);
    previous_tile = config.block_m() * config.block_n();
  }
  CHECK(previous_tile <= 64 * 128);
  // Tiles of 128 threads at 3 or 4 blocks an SM: at 3665x4198x17 on the H200 the pick before the
  // FFMAs' last tile at BK 16 stopped at K, 128x64x8 at 3, ran 0.88x cuBLAS, 64x128 at 4 blocks
  // (the pick now) 0.98x, where 128x256x32 tiles reached 0.73x
  // (docs/perf-data/sgemm-menu-short-k-h200.json.xz).
  const SgemmConfig short_k = chosen({3665, 4198, 17});
  CAPTURE(short_k.describe());
  CHECK(short_k.warps_m * short_k.warps_n == 4);
  CHECK(short_k.min_blocks >= 3);
}

TEST_CASE("an odd size gets no vector A: the any-alignment entry runs there") {
  for (const Shape shape :
       {Shape{4097, 4097, 4097}, Shape{1000, 1001, 1002}, Shape{4096, 4096, 4097}}) {
    CAPTURE(shape.n);
    CAPTURE(shape.k);
    CHECK_FALSE(chosen(shape).vector_a);
  }
}

// Staging A through registers costs the FFMA configs more than it saves at shallow slices
// (docs/perf-notes.md, "Vector A at shallow slices"); the tensor cores' configs keep it.
TEST_CASE("the FFMA configs load A by vectors only where their slices are deeper than 256") {
  SgemmConfig ffma = ptxrt::sgemm_heuristic_menu()[1].config;  // 64x256, vector A
  REQUIRE(ffma.vector_a);
  REQUIRE_FALSE(ffma.tf32x3);
  const auto keeps = [](SgemmConfig config, int split, int m, int n, int k) {
    config.split_k = split;
    return ptxrt::sgemm_pick_vector_a(h100(), config, m, n, k).vector_a;
  };
  CHECK(keeps(ffma, 1, 4096, 4096, 1024));
  CHECK(keeps(ffma, 2, 4096, 4096, 1024));        // slices 512 deep
  CHECK_FALSE(keeps(ffma, 4, 4096, 4096, 1024));  // 256
  CHECK(keeps(ffma, 1, 4096, 4096, 260));
  CHECK_FALSE(keeps(ffma, 1, 4096, 4096, 256));
  CHECK_FALSE(keeps(ffma, 1, 8192, 8192, 56));
  CHECK_FALSE(keeps(ffma, 1, 4096, 4096, 4097));  // K % 4 != 0: the any-alignment entry
  CHECK(keeps(ffma, 1, 4096, 4097, 4096));        // B padded
  SgemmConfig tensor_cores = ffma;
  tensor_cores.tf32x3 = true;
  CHECK(keeps(tensor_cores, 1, 4096, 4096, 64));
  // Flat products: 13-14 % faster without it where B is padded, level at 2308x13788x56 (H200).
  for (const Shape shape : {Shape{2308, 13786, 56}, Shape{2308, 13788, 56}, Shape{8436, 6607, 48},
                            Shape{12664, 16161, 28}}) {
    CAPTURE(shape.n);
    const SgemmConfig config = chosen(shape);
    CAPTURE(config.describe());
    CHECK_FALSE(config.tf32x3);
    CHECK_FALSE(config.vector_a);
  }
}

TEST_CASE("deep K is split into slices of at least 128 that fill every SM") {
  for (const Shape shape : {Shape{1536, 1536, 12288}, Shape{512, 512, 16384},
                            Shape{1000, 1000, 9001}, Shape{777, 555, 9001}}) {
    CAPTURE(shape.m);
    CAPTURE(shape.k);
    const SgemmConfig config = chosen(shape);
    CAPTURE(config.describe());
    CHECK(config.split_k > 1);
    CHECK(ptxrt::sgemm_slice_depth(config, shape.k) >= 128);
    CHECK(fills_the_sms(config, shape));
  }
  // A 512x512 C is 16 of the tensor cores' 128x128 tiles, one block an SM: split 8 gives 128 of
  // the 132 SMs a block (the FFMAs, measured before the tensor cores, took 64x256 at split 16:
  // 43.80 TFLOP/s against 40.85 at split 8, docs/perf-data/sgemm-bench-h100.txt).
  const SgemmConfig deep = chosen({512, 512, 16384});
  CAPTURE(deep.describe());
  CHECK(deep.tf32x3);
  CHECK(deep.block_m() * deep.block_n() >= 128 * 128);
  CHECK(fills_the_sms(deep, {512, 512, 16384}));
  // Two tiles of C: the deepest split there is, on the smallest tile; 256 blocks of 512 deep
  // measured 0.0400 ms on the H100 against split 64's 0.0423 and split 16's 0.146 (cuBLAS:
  // 0.0463).
  const SgemmConfig thin = chosen({64, 64, 65536});
  CAPTURE(thin.describe());
  CHECK(thin.split_k == 128);
  CHECK(thin.block_m() * thin.block_n() < 128 * 128);
}

TEST_CASE("a split between the powers of two is taken where it spreads K more evenly") {
  // 41x150x12486 in tiles 64 rows tall: split 96 cuts slices of 144 and 288 blocks (128 would cut
  // slices under 128 deep, 64 gives 192 blocks of 64x64). The H200's menu bench, B loaded by
  // 16-byte chunks, timed 64x64 at 8.74 TFLOP/s at split 96, the best of every config and split
  // there, against 8.30 at 128, 6.80 at 64 and 5.61 at 48
  // (docs/perf-data/sgemm-menu-ragged-realigned-small-short-k-h200.json.xz). The model took the
  // tensor cores' 64x128 at split 96 there (1.02x cuBLAS, 64x64 1.12x in the same run:
  // docs/perf-data/sgemm-tf32-chunks-shapes-h200.json), and now their 32x128, whose 4 tiles split
  // 96 ways also cut slices of 144 (128 ways would cut 112).
  const SgemmConfig config = chosen({41, 150, 12486}, h200());
  CAPTURE(config.describe());
  CHECK(config.split_k == 96);
  CHECK(ptxrt::sgemm_slice_depth(config, 12486) == 144);
}

TEST_CASE("the tensor cores are rated only where K is 224 or deeper") {
  // At K under 224 the FFMAs' best beat the tensor cores' best at 22 of 23 shapes of seeds 4141,
  // 5151 and eight chosen ones (docs/perf-notes.md, "A and B by chunks on the tensor cores"):
  // 3381x2350x209 0.87x cuBLAS against 0.74x, 12761x5913x21 0.97x against 0.53x.
  for (const Shape shape : {Shape{3381, 2350, 209}, Shape{12761, 5913, 21}, Shape{4096, 4096, 223},
                            Shape{1208, 13747, 26}}) {
    CAPTURE(shape.k);
    for (const ptxrt::SgemmEstimate& estimate :
         ptxrt::sgemm_estimates(h100(), shape.m, shape.n, shape.k))
      CHECK_FALSE(estimate.config.tf32x3);
  }
  bool rated = false;
  for (const ptxrt::SgemmEstimate& estimate : ptxrt::sgemm_estimates(h100(), 4096, 4096, 224))
    rated = rated || estimate.config.tf32x3;
  CHECK(rated);
  CHECK(chosen({4096, 4096, 4096}).tf32x3);
}

TEST_CASE("small and skinny products get tiles or splits that give every SM a block") {
  // 128x128 tiles would leave most SMs idle: 64, 64, 64 and 16 tiles for 132 SMs.
  for (const Shape shape : {Shape{1024, 1024, 1024}, Shape{8192, 64, 8192}, Shape{128, 8192, 4096},
                            Shape{512, 512, 512}}) {
    CAPTURE(shape.m);
    CAPTURE(shape.n);
    const SgemmConfig config = chosen(shape);
    CAPTURE(config.describe());
    CHECK(fills_the_sms(config, shape));
  }
}

TEST_CASE("a side of 32 or less gets a tile 32 wide on that side, split to fill the GPU") {
  // A 64-column tile is over 60 % empty at N of 17 to 24. On the H200 the best 32-column config
  // ran 14.88 TFLOP/s at 3369x23x10429 against 8.63 for the best of 64 columns or more, 9.61
  // against 5.87 at 13093x17x1153, 16.66 against 11.64 at 6771x24x2261 and 7.19 against 5.50 at
  // 2198x23x1121 (docs/perf-data/sgemm-menu-narrow-303-404-h200.json.xz).
  struct Narrow {
    Shape shape;
    bool must_fill_the_sms;
  };
  const Narrow narrow[] = {
      {{3369, 23, 10429}, true},
      {{13093, 17, 1153}, true},
      {{6771, 24, 2261}, true},
      // Since C's ragged rows go out by float4, the measured best here is 128x32 at split 6: its
      // 18 tile rows leave 108 blocks for 132 SMs and ran 7.80 TFLOP/s, against 7.65 for 64x32
      // at split 16, which fills them (docs/perf-data/sgemm-menu-ragged-small-h200.json.xz).
      {{2198, 23, 1121}, false},
  };
  for (const Narrow& row : narrow) {
    const Shape& shape = row.shape;
    CAPTURE(shape.m);
    CAPTURE(shape.n);
    const SgemmConfig config = chosen(shape, h200());
    CAPTURE(config.describe());
    CHECK(config.block_n() == 32);
    CHECK(config.block_m() >= 64);
    CHECK(config.split_k > 1);
    if (row.must_fill_the_sms) CHECK(fills_the_sms(config, shape));
  }
  // And 32 rows at M of 32 or less: the 32x128 tile of 8x4 results a thread ran 15.17 TFLOP/s at
  // 23x4574x4586 against 14.15 for the 32x64 of 4x4 and 10.59 for 64x128, and 14.38 at 30x8891x727,
  // the best of every config and split at both
  // (docs/perf-data/sgemm-menu-ragged-realigned-large-h200.json.xz).
  for (const Shape shape : {Shape{23, 4574, 4586}, Shape{30, 8891, 727}}) {
    CAPTURE(shape.m);
    const SgemmConfig config = chosen(shape, h200());
    CAPTURE(config.describe());
    CHECK(config.block_m() == 32);
    CHECK(config.block_n() == 128);
    CHECK(fills_the_sms(config, shape));
  }
}

TEST_CASE(
    "at deep K and N of 32 or less the tensor cores' 128x32 is taken, split to fill the GPU") {
  // Measured on the H200, every menu config at every split (docs/perf-data/
  // sgemm-menu-tf32-32-columns-h200.txt.xz): 1.05x cuBLAS at 3825x25x4705 and 1.04x at 6208x22x5063
  // (split 12 and 8), where the FFMAs' 128x32, the menu's best before, ran 0.84x and 0.85x.
  for (const Shape shape : {Shape{3825, 25, 4705}, Shape{6208, 22, 5063}}) {
    CAPTURE(shape.m);
    const SgemmConfig config = chosen(shape, h200());
    CAPTURE(config.describe());
    CHECK(config.tf32x3);
    CHECK(config.block_m() == 128);
    CHECK(config.block_n() == 32);
    CHECK(fills_the_sms(config, shape));
  }
  // Not at short K, where the tensor cores are not rated, nor where N fills wider tiles.
  CHECK_FALSE(chosen({3825, 25, 200}, h200()).tf32x3);
  CHECK(chosen({3825, 1024, 4705}, h200()).block_n() > 32);
}

TEST_CASE("at short K and N % 4 != 0 the tile is one whose warps store C in 4 rows of lanes") {
  // There C is stored a float at a time and the stores weigh: a warp of 8 rows of lanes touches
  // twice the cache lines per store. On the H200 the 128x64 tile of 8x4 lanes ran 12.4 TFLOP/s at
  // 9156x3037x30 where 64x64 ran 21.3, 18.4 against 27.6 at 3151x13153x55 and 10.1 against 16.9
  // at 2573x1261x43 (docs/perf-data/sgemm-menu-{12,small}-h200.json.xz); 17.0 against 25.5 at
  // 7265x3415x47 and 21.0 against 26.9 at 3285x4586x81, where the model before chose it
  // (docs/perf-data/sgemm-heldout-505-h200.json.xz).
  for (const Shape shape : {Shape{9156, 3037, 30}, Shape{3151, 13153, 55}, Shape{2573, 1261, 43},
                            Shape{7265, 3415, 47}, Shape{3285, 4586, 81}}) {
    CAPTURE(shape.m);
    CAPTURE(shape.n);
    const SgemmConfig config = chosen(shape, h200());
    CAPTURE(config.describe());
    CHECK(config.lanes_m == 4);
    CHECK(fills_the_sms(config, shape));
  }
}

TEST_CASE("at K of a few dozen over millions of outputs 64x128 at 4 blocks an SM is taken") {
  // With the FFMAs' last tile at BK 16 computing its rows inside K alone, BK 16 no longer pays
  // for the zeros past K, and 64x128 at 4 blocks an SM ran fastest of the configs timed there
  // (docs/perf-data/sgemm-ffma-tail-short-k-h200.txt): 1.09x and 1.10x cuBLAS at 9720x4715x35
  // and 7668x12087x37, where the model before took 128x64 at BK 8 (1.01x and 1.03x then), 0.94x
  // and 0.92x at 9664x1529x30 and 1189x5861x31.
  for (const Shape shape : {Shape{9720, 4715, 35}, Shape{7668, 12087, 37}, Shape{9664, 1529, 30},
                            Shape{1189, 5861, 31}}) {
    CAPTURE(shape.m);
    const SgemmConfig config = chosen(shape, h200());
    CAPTURE(config.describe());
    CHECK(config == SgemmConfig{2, 2, 4, 8, 8, 16, 3, 4});
  }
}

TEST_CASE("a small square takes a small tile split in two") {
  // A few dozen tiles of 32x64 leave most SMs idle; two slices double the blocks for a
  // reduction launched programmatically. At the 16 squares of 237 to 344 in the held-out benches
  // since that launch (H200), 32x64 at split 2 ran 1.11x cuBLAS or more at every one, unsplit
  // 0.71-2.35x (0.71x at 326^3, 0.87x at 319^3: those tiny products time bimodally).
  for (const int size : {241, 263, 300, 326}) {
    CAPTURE(size);
    const SgemmConfig config = chosen({size, size, size}, h200());
    CAPTURE(config.describe());
    CHECK(config.split_k == 2);
    CHECK(config.block_m() * config.block_n() <= 32 * 64);
  }
}

TEST_CASE("sizes below 1 are chosen for as 1, and the choice suits the device") {
  CHECK(chosen({0, 0, 0}) == chosen({1, 1, 1}));
  for (const Shape shape : {Shape{1, 1, 1}, Shape{1536, 1536, 12288}, Shape{4097, 4097, 4097}})
    CHECK(ptxrt::sgemm_config_fits(chosen(shape), h100()));
}

TEST_CASE("the heuristic's choice is the model's fastest estimate, and the estimates are sorted") {
  const Shape shape{2000, 3000, 1000};
  const auto estimates = ptxrt::sgemm_estimates(h100(), shape.m, shape.n, shape.k);
  REQUIRE(!estimates.empty());
  SgemmConfig first = estimates.front().config;
  CHECK(chosen(shape) == first);
  for (std::size_t i = 1; i < estimates.size(); ++i) {
    const auto cost = [](const ptxrt::SgemmEstimate& estimate) {
      return estimate.milliseconds *
             (estimate.config.split_k > 1 ? ptxrt::sgemm_split_penalty : 1.0);
    };
    CHECK(cost(estimates[i - 1]) <= cost(estimates[i]));
  }
}

TEST_CASE(
    "the model's time of full rounds is the flop at the menu's rate plus the round overheads") {
  const ptxrt::SgemmMenuEntry& entry = ptxrt::sgemm_heuristic_menu().front();
  const ptxrt::SgemmEstimate estimate =
      ptxrt::sgemm_estimate(entry.config, entry.tflops, entry.registers, h100(), 8192, 8192, 8192);
  const double flop_ms = 2.0 * 8192.0 * 8192.0 * 8192.0 / (entry.tflops * 1e9);
  CHECK(estimate.tiles == ptxrt::sgemm_tiles(entry.config, 8192, 8192));
  CHECK(estimate.blocks == estimate.tiles);
  CHECK(estimate.milliseconds >= flop_ms);
  CHECK(estimate.milliseconds <= flop_ms * 1.05);  // the overheads are small at K = 8192
}

TEST_CASE("a round holds the blocks an SM fits by registers and shared memory, not the bound") {
  // 64x256x16 promises 1 block per SM, but at 128 registers × 256 threads (half the register
  // file) and 83 KB of shared memory two fit; 128x256x32 at 250 registers fills the register
  // file with one block.
  const auto& menu = ptxrt::sgemm_heuristic_menu();
  const auto entry_of = [&](int block_m, int block_n) {
    return *std::find_if(menu.begin(), menu.end(), [&](const ptxrt::SgemmMenuEntry& entry) {
      return entry.config.block_m() == block_m && entry.config.block_n() == block_n;
    });
  };
  const ptxrt::SgemmMenuEntry wide = entry_of(64, 256);
  REQUIRE(wide.config.min_blocks == 1);
  const ptxrt::SgemmEstimate two =
      ptxrt::sgemm_estimate(wide.config, wide.tflops, wide.registers, h100(), 4096, 4096, 4096);
  CHECK(two.resident_blocks == 2);
  CHECK(two.slots == 2 * 132);
  const ptxrt::SgemmMenuEntry large = entry_of(128, 256);
  CHECK(ptxrt::sgemm_estimate(large.config, large.tflops, large.registers, h100(), 4096, 4096, 4096)
            .resident_blocks == 1);
  // More registers than the menu records: one block of 64x256 fills the register file.
  CHECK(ptxrt::sgemm_estimate(wide.config, wide.tflops, 255, h100(), 4096, 4096, 4096)
            .resident_blocks == 1);
  // Where the occupancy model does not know the architecture, the launch bound's promise.
  ptxrt::DeviceProperties unknown = h100();
  unknown.cc_major = 8;
  unknown.cc_minor = 8;
  CHECK(ptxrt::sgemm_estimate(wide.config, wide.tflops, wide.registers, unknown, 4096, 4096, 4096)
            .resident_blocks == 1);
}

TEST_CASE("a split cuts K into whole tiles as even as they allow, the last slice short") {
  SgemmConfig config;  // BK 16
  config.split_k = 4;
  CHECK(ptxrt::sgemm_slice_depth(config, 1000) == 256);  // 63 tiles: 16, 16, 16, 15
  CHECK(ptxrt::sgemm_slice_depth(config, 64) == 16);
  CHECK(ptxrt::sgemm_slice_depth(config, 3) == 3);
  CHECK(ptxrt::sgemm_workspace_floats(config, 100, 7) == 3200);  // rows of 8 floats
  CHECK(ptxrt::sgemm_workspace_floats(config, 100, 8) == 3200);
  const auto launch = ptxrt::sgemm_launch(config, 300, 200, ptxrt::SgemmPath::any_alignment);
  CHECK(launch.launch.grid.x == 2);
  CHECK(launch.launch.grid.y == 3);
  CHECK(launch.launch.grid.z == 4);
  config.split_k = 1;
  CHECK(ptxrt::sgemm_slice_depth(config, 1000) == 1000);
  CHECK(ptxrt::sgemm_workspace_floats(config, 100, 7) == 0);
}

TEST_CASE(
    "the split reduction's grid covers the workspace's pitched rows a float4 per group of "
    "threads, at most 16 blocks per SM, and follows the product by programmatic launch from CC "
    "9.0") {
  CHECK(ptxrt::sgemm_reduce_groups(2) == 2);
  CHECK(ptxrt::sgemm_reduce_groups(3) == 2);
  CHECK(ptxrt::sgemm_reduce_groups(6) == 4);
  CHECK(ptxrt::sgemm_reduce_groups(8) == 8);
  CHECK(ptxrt::sgemm_reduce_groups(128) == 8);
  SgemmConfig two, deep;
  two.split_k = 2;
  deep.split_k = 64;
  CHECK(ptxrt::sgemm_reduce_launch(two, h100(), 1, 1).grid.x == 1);
  // 256000 float4: 128 a block in two groups, 32 a block in eight.
  CHECK(ptxrt::sgemm_reduce_launch(two, h100(), 1000, 1024).grid.x == 2000);
  CHECK(ptxrt::sgemm_reduce_launch(deep, h100(), 64, 64).grid.x == 32);
  CHECK(ptxrt::sgemm_reduce_launch(deep, h100(), 8192, 8192).grid.x == 132 * 16);
  CHECK(ptxrt::sgemm_reduce_launch(deep, h100(), 8192, 8192).block.x == 256);
  // Rows of 146 floats go as 37 float4 (the workspace's pitch is 148): 1295 units, 32 a block.
  CHECK(ptxrt::sgemm_reduce_launch(deep, h100(), 35, 146).grid.x == 41);
  CHECK(ptxrt::sgemm_reduce_launch(two, h100(), 100, 100).grid.x == 20);
  CHECK(ptxrt::sgemm_reduce_launch(deep, h100(), 64, 64).programmatic_serialization);
  CHECK_FALSE(ptxrt::sgemm_reduce_launch(deep, turing(), 64, 64).programmatic_serialization);
}

TEST_CASE(
    "a config is built from a database's defines, and an undeclared name or a non-integer is "
    "named") {
  const SgemmConfig config = ptxrt::sgemm_config_with(
      SgemmConfig{}, {{"TM", "4"}, {"SPLIT_K", "8"}, {"VECTOR_A", "1"}, {"SKIP_IDLE_WARPS", "0"}});
  CHECK(config.thread_m == 4);
  CHECK(config.split_k == 8);
  CHECK(config.vector_a);
  CHECK(config.describe().ends_with(" vector A split 8"));
  CHECK(ptxrt::sgemm_config_with(SgemmConfig{}, config.defines()) == config);
  CHECK_THROWS_WITH_AS(ptxrt::sgemm_config_with(SgemmConfig{}, {{"TILE", "4"}}),
                       "sgemm: TILE is not one of sgemm.cu's constants", ptxrt::Error);
  CHECK_THROWS_WITH_AS(ptxrt::sgemm_config_with(SgemmConfig{}, {{"TM", "4x"}}),
                       "sgemm: TM=4x is not an integer", ptxrt::Error);
}

// The fit script mirrors this model (its docstring says so), and a refit is copied from it by
// hand: at the bench's twelve shapes and eighty drawn ones its pick must be the C++ pick.
TEST_CASE("scripts/fit_sgemm_heuristic.py picks what the heuristic picks on an H100") {
  if (!std::filesystem::exists("/usr/bin/python3")) {
    MESSAGE("skipped: the fit script needs /usr/bin/python3");
    return;
  }
  std::vector<ptxrt::apps::SgemmBenchSize> sizes = ptxrt::apps::sgemm_bench_sizes();
  for (const std::uint64_t seed : {202u, 303u})
    for (const ptxrt::apps::SgemmDrawnShape& drawn : ptxrt::apps::draw_sgemm_shapes(40, seed))
      sizes.push_back(drawn.size);
  std::vector<std::string> arguments{"/usr/bin/python3",
                                     PTXRT_SOURCE_DIR "/scripts/fit_sgemm_heuristic.py"};
  for (const ptxrt::apps::SgemmBenchSize& size : sizes) {
    arguments.push_back("--pick");
    arguments.push_back(size.name());
  }
  const ptxrt::testing::ProcessResult result = ptxrt::testing::run_process(arguments);
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  std::istringstream lines(result.output);
  std::size_t compared = 0;
  for (std::string line; std::getline(lines, line); ++compared) {
    REQUIRE(compared < sizes.size());
    const ptxrt::apps::SgemmBenchSize& size = sizes[compared];
    const SgemmConfig config = ptxrt::sgemm_heuristic_config(h100(), size.m, size.n, size.k);
    std::ostringstream expected;
    expected << size.name() << " WARPS_M=" << config.warps_m << " WARPS_N=" << config.warps_n
             << " LANES_M=" << config.lanes_m << " TM=" << config.thread_m
             << " TN=" << config.thread_n << " BK=" << config.block_k << " STAGES=" << config.stages
             << " MIN_BLOCKS=" << config.min_blocks << " VECTOR_A=" << config.vector_a
             << " SPLIT_K=" << config.split_k << " TF32X3=" << config.tf32x3;
    CHECK(line == expected.str());
  }
  CHECK(compared == sizes.size());
}

// The model's rounds depend on the benched device's SM count and its split's cost on the DRAM
// bandwidth: the fit script reads both from the bench's JSON.
TEST_CASE("the sgemm bench's JSON records the device's SMs and theoretical DRAM bandwidth") {
  const nlohmann::json report = ptxrt::apps::sgemm_bench_json(h100(), {});
  CHECK(report["device"] == h100().name);
  CHECK(report["sm_count"] == 132);
  CHECK(report["dram_gb_per_s"].get<double>() == doctest::Approx(3352.3).epsilon(1e-3));
  CHECK(report["shapes"].empty());
}
