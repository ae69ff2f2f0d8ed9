// The SGEMM configs as values: which ones suit a device, the launch they imply, and that each
// listed one builds for sm_90 without spilling. No GPU needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "apps/matmul/sgemm.hpp"
#include "blas/sgemm_family.hpp"
#include "device_profiles.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/core/target.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

using ptxrt::SgemmConfig;
using ptxrt::testing::h100;
using ptxrt::testing::turing;

namespace {

std::string problem_of(const SgemmConfig& config, const ptxrt::DeviceProperties& device) {
  return ptxrt::sgemm_config_fits(config, device).reason();
}

}  // namespace

TEST_CASE("a default-constructed sgemm config is sgemm.cu's defaults: 128x128x16, 8x8 per thread") {
  const SgemmConfig config;
  CHECK(config.block_m() == 128);
  CHECK(config.block_n() == 128);
  CHECK(config.threads() == 256);
  CHECK(config.lanes_n() == 8);
  CHECK(config.shared_bytes() == 3 * 16 * (128 + 4 + 128) * 4);
  CHECK(config.register_cap(h100()) == 128);
  CHECK(config.describe() == "128x128x16 8x8/thread 4x2 warps lanes 4x8 3 stages min 2 blocks/SM");
  const ptxrt::Program program = ptxrt::apps::builtin_program("sgemm");
  for (const ptxrt::Define& define : config.defines()) {
    CAPTURE(define.name);
    const ptxrt::ManifestDefine* declared = program.manifest().find_define(define.name);
    REQUIRE(declared != nullptr);
    CHECK(declared->default_value == define.value);
  }
}

TEST_CASE("sgemm.cu's default ring is over 48 KiB, so its launch opts in") {
  CHECK(SgemmConfig{}.shared_bytes() == 49920);
  CHECK(problem_of(SgemmConfig{}, h100()).empty());
}

TEST_CASE(
    "a config on the tensor cores has its own ring, needs compute capability 8.0 and says so") {
  SgemmConfig config{2, 4, 8, 8, 16, 16, 3, 1};
  config.tf32x3 = true;
  REQUIRE(config.block_m() == 128);
  REQUIRE(config.block_n() == 256);
  // Per stage 128 rows of A of 16 + 4 floats and 16 rows of B of 256 + 8: 8% more than the FFMAs'.
  CHECK(config.shared_bytes() == 3 * (128 * 20 + 16 * 264) * 4);
  CHECK(config.describe() ==
        "128x256x16 8x16/thread 2x4 warps lanes 8x4 3 stages min 1 blocks/SM 3xTF32");
  CHECK(ptxrt::sgemm_config_with(SgemmConfig{}, {{"TF32X3", "1"}}).tf32x3);
  CHECK(problem_of(config, h100()).empty());
  CHECK(problem_of(config, turing()).find("needs compute capability 8.0 or newer") !=
        std::string::npos);
  config.tf32x3 = false;
  CHECK(problem_of(config, turing()).find("compute capability") == std::string::npos);
}

TEST_CASE("every sgemm config listed for an H100 suits it, once each, sgemm.cu's defaults first") {
  const auto configs = ptxrt::apps::sgemm_configs(h100());
  CHECK(configs.size() == 59);
  REQUIRE(!configs.empty());
  CHECK(configs.front() == SgemmConfig{});
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(configs[i].describe());
    CHECK(problem_of(configs[i], h100()).empty());
    CHECK(std::count(configs.begin(), configs.end(), configs[i]) == 1);
  }
}

TEST_CASE("a config's defines are exactly what sgemm.cu declares, in its declared values") {
  const ptxrt::Program program = ptxrt::apps::builtin_program("sgemm");
  for (const SgemmConfig& config : ptxrt::apps::sgemm_configs(h100())) {
    CAPTURE(config.describe());
    std::vector<ptxrt::Define> defines = config.defines();
    const std::vector<ptxrt::Define> given = defines;
    ptxrt::validate_defines(program.manifest(), defines);  // throws for a value not declared
    CHECK(defines == given);  // and nothing was missing, so no default was appended
  }
}

TEST_CASE("a config value sgemm.cu does not declare is rejected, naming the define") {
  SgemmConfig config;
  config.thread_m = 12;
  CHECK(problem_of(config, h100()) == "TM=12 is not among sgemm.cu's declared values");
  config = SgemmConfig{};
  config.stages = 1;
  CHECK(problem_of(config, h100()) == "STAGES=1 is not among sgemm.cu's declared values");
}

TEST_CASE(
    "a config whose shared-memory ring exceeds the opt-in limit is rejected with both sizes") {
  SgemmConfig config;
  config.stages = 4;  // 4 · 16 · 260 · 4 bytes
  CHECK(problem_of(config, turing()) ==
        config.describe() + ": 66560 bytes of shared memory exceed the device's 65536 per block");
}

TEST_CASE("a config whose promised blocks per SM do not fit is rejected, saying which resource") {
  SgemmConfig config;
  config.warps_m = 8;  // 512 threads, three times, on an SM of 1024 threads
  config.block_k = 8;  // so that the ring fits Turing's 64 KiB
  config.min_blocks = 3;
  CHECK(problem_of(config, turing())
            .ends_with(": 3 blocks of 512 threads exceed the SM's 1024 threads"));

  config = SgemmConfig{};
  config.stages = 4;  // 66560 bytes per block: three fit in 228 KiB, four plus reserves do not
  config.min_blocks = 4;
  CHECK(problem_of(config, h100())
            .ends_with(": 4 blocks need 270336 bytes of shared memory, over the SM's 233472"));
}

TEST_CASE("a config whose accumulators cannot fit under its register cap is pruned") {
  SgemmConfig config;
  config.thread_m = 16;  // 128 accumulators under a cap of 128 (256 threads, 2 blocks per SM)
  CHECK(config.register_cap(h100()) == 128);
  CHECK(problem_of(config, h100())
            .ends_with(
                ": needs about 168 registers, over the cap of 128 that 2 blocks per SM leave"));
  config.min_blocks = 1;  // the same tile with the whole register file: 255 per thread
  CHECK(config.register_cap(h100()) == 255);
  CHECK(problem_of(config, h100()).empty());
}

TEST_CASE("no sgemm config suiting a device is an error naming the device") {
  ptxrt::DeviceProperties tiny = turing();
  tiny.max_threads_per_block = 64;
  CHECK_THROWS_WITH_AS(ptxrt::sgemm_heuristic_config(tiny, 1024, 1024, 1024),
                       "sgemm: no config suits Tesla T4 (sm_75)", ptxrt::Error);
}

TEST_CASE("the sgemm grid covers C with one block per tile, x along N and y along M") {
  const SgemmConfig config;
  const auto edge = ptxrt::sgemm_launch(config, 4097, 4097, ptxrt::SgemmPath::any_alignment);
  CHECK(edge.launch.grid.x == 33);
  CHECK(edge.launch.grid.y == 33);
  CHECK(edge.launch.grid.z == 1);
  CHECK(edge.launch.block.x == 256);
  CHECK(edge.launch.block.count() == 256);
  CHECK(edge.launch.dynamic_shared_bytes == 49920);
  CHECK(edge.entry == "sgemm");

  SgemmConfig wide;
  wide.thread_n = 16;  // 128x256
  wide.min_blocks = 1;
  const auto skinny = ptxrt::sgemm_launch(wide, 8192, 8192, ptxrt::SgemmPath::vectors);
  CHECK(skinny.launch.grid.x == 32);
  CHECK(skinny.launch.grid.y == 64);
  CHECK(skinny.entry == "sgemm_aligned");

  const auto single = ptxrt::sgemm_launch(config, 1, 1, ptxrt::SgemmPath::any_alignment);
  CHECK(single.launch.grid.count() == 1);
}

TEST_CASE(
    "B loads by vectors where N is a multiple of 4 and B on 16 bytes, else padded where the copy "
    "pays") {
  using ptxrt::sgemm_path;
  using ptxrt::SgemmPadding;
  using ptxrt::SgemmPath;
  const ptxrt::DeviceProperties device = ptxrt::testing::h200();
  const SgemmConfig config;
  // A's alignment and K do not matter without vector A; C's decides how C is stored.
  CHECK(sgemm_path(device, config, 100, 4096, 4097, 0x3004, 0x1000, 0x2000) == SgemmPath::vectors);
  CHECK(sgemm_path(device, config, 100, 4096, 4097, 0x3004, 0x1000, 0x2004) == SgemmPath::vector_b);
  CHECK(sgemm_path(device, config, 4096, 4097, 4096, 0x3000, 0x1000, 0x2004) ==
        SgemmPath::padded_b);
  CHECK(sgemm_path(device, config, 4096, 4096, 4096, 0x3000, 0x1004, 0x2000) ==
        SgemmPath::padded_b);
  CHECK(sgemm_path(device, config, 4096, 4097, 0, 0x3000, 0x1000, 0x2000) ==
        SgemmPath::any_alignment);
  // Shapes benched on an H200 padded and not: the first two gained (0.74x -> 0.97x and
  // 0.78x -> 0.83x cuBLAS at their best config), the last three lost.
  const auto padded = [&](int m, int n, int k) {
    return sgemm_path(device, config, m, n, k, 0x3000, 0x1000, 0x2000) == SgemmPath::padded_b;
  };
  CHECK(padded(3507, 335, 523));
  CHECK(padded(1299, 1603, 825));
  CHECK_FALSE(padded(187, 1559, 6838));
  CHECK_FALSE(padded(118, 7197, 2426));
  CHECK_FALSE(padded(3223, 437, 78));
  // Forced either way; never with k = 0 (nothing to copy).
  CHECK(sgemm_path(device, config, 37, 37, 9, 0x3000, 0x1000, 0x2000, SgemmPadding::always) ==
        SgemmPath::padded_b);
  CHECK(sgemm_path(device, config, 37, 36, 9, 0x3000, 0x1000, 0x2000, SgemmPadding::always) ==
        SgemmPath::vectors);
  CHECK(sgemm_path(device, config, 37, 37, 0, 0x3000, 0x1000, 0x2000, SgemmPadding::always) ==
        SgemmPath::any_alignment);
  CHECK(sgemm_path(device, config, 6270, 3399, 140, 0x3000, 0x1000, 0x2000, SgemmPadding::never) ==
        SgemmPath::any_alignment);
  // A pitch past INT_MAX cannot be passed to the kernel.
  CHECK(sgemm_path(device, config, 4096, 2147483645, 1, 0x3000, 0x1000, 0x2000,
                   SgemmPadding::always) == SgemmPath::any_alignment);
  CHECK(sgemm_path(device, config, 4096, 2147483644, 1, 0x3000, 0x1004, 0x2000,
                   SgemmPadding::always) == SgemmPath::padded_b);

  CHECK(ptxrt::sgemm_b_pitch(SgemmPath::padded_b, 4097) == 4100);
  CHECK(ptxrt::sgemm_b_pitch(SgemmPath::padded_b, 2147483644) == 2147483644);
  CHECK(ptxrt::sgemm_b_pitch(SgemmPath::any_alignment, 4097) == 4097);
  CHECK(ptxrt::sgemm_b_pitch(SgemmPath::vectors, 4096) == 4096);
  CHECK(ptxrt::sgemm_launch(config, 4096, 4097, SgemmPath::padded_b).entry == "sgemm_pitched_b");
  CHECK(ptxrt::sgemm_launch(config, 64, 64, SgemmPath::vector_b).entry == "sgemm_pitched_b");
}

TEST_CASE("with vector A the vector paths also need K a multiple of 4 and A on 16 bytes") {
  using ptxrt::SgemmPath;
  const ptxrt::DeviceProperties device = ptxrt::testing::h200();
  SgemmConfig config;
  config.vector_a = true;
  const auto path = [&](int m, int n, int k, CUdeviceptr a) {
    return ptxrt::sgemm_path(device, config, m, n, k, a, 0x1000, 0x2000);
  };
  CHECK(path(4096, 4096, 4096, 0x3000) == SgemmPath::vectors);
  CHECK(path(4096, 4096, 4097, 0x3000) == SgemmPath::any_alignment);
  CHECK(path(4096, 4096, 4096, 0x3004) == SgemmPath::any_alignment);
  CHECK(path(4096, 4097, 4096, 0x3000) == SgemmPath::padded_b);
  CHECK(path(4096, 4097, 4097, 0x3000) == SgemmPath::any_alignment);
  const auto plan = ptxrt::sgemm_launch(config, 4096, 4096, SgemmPath::any_alignment);
  CHECK(plan.entry == "sgemm");
}

TEST_CASE("the pad's grid covers a row's float4s along x and spreads the rows along y") {
  const ptxrt::DeviceProperties device = h100();  // 132 SMs
  const ptxrt::LaunchConfig wide = ptxrt::sgemm_pad_launch(device, 3223, 4584);
  CHECK(wide.grid.x == 5);  // 1146 float4s, 256 a block
  CHECK(wide.grid.y == 132 * 16 / 5);
  CHECK(wide.block.x == 256);
  CHECK(ptxrt::sgemm_pad_launch(device, 3, 4584).grid.y == 3);
  CHECK(ptxrt::sgemm_pad_launch(device, 100000, 4).grid.y == 2112);
  // A row wider than the grid's budget still gets one block of rows at a time.
  const ptxrt::LaunchConfig huge = ptxrt::sgemm_pad_launch(device, 10, 2147483644);
  CHECK(huge.grid.x == 2097152);
  CHECK(huge.grid.y == 1);
}

TEST_CASE("the switches that change no result are defines and show in the description") {
  SgemmConfig config;
  config.group_m = 8;
  config.vector_a = true;
  config.skip_idle_warps = true;
  CHECK(config.describe() ==
        "128x128x16 8x8/thread 4x2 warps lanes 4x8 3 stages min 2 blocks/SM group 8 vector A "
        "skip idle warps");
  const std::vector<ptxrt::Define> defines = config.defines();
  const auto value_of = [&](const char* name) {
    const auto found =
        std::find_if(defines.begin(), defines.end(),
                     [&](const ptxrt::Define& define) { return define.name == name; });
    return found == defines.end() ? std::string("missing") : found->value;
  };
  CHECK(value_of("GROUP_M") == "8");
  CHECK(value_of("VECTOR_A") == "1");
  CHECK(value_of("SKIP_IDLE_WARPS") == "1");
  CHECK(problem_of(config, h100()).empty());
  config.group_m = 4;
  CHECK(problem_of(config, h100()) == "GROUP_M=4 is not among sgemm.cu's declared values");
}

TEST_CASE(
    "the bench's shape classes: deep, skinny, flat, small, ragged, square, first that holds") {
  using ptxrt::apps::sgemm_shape_of;
  using ptxrt::apps::SgemmShape;
  CHECK(sgemm_shape_of(4096, 4096, 4096) == SgemmShape::square);
  CHECK(sgemm_shape_of(8192, 8192, 8192) == SgemmShape::square);
  CHECK(sgemm_shape_of(4097, 4097, 4097) == SgemmShape::ragged);
  CHECK(sgemm_shape_of(4096, 4100, 4096) == SgemmShape::ragged);
  CHECK(sgemm_shape_of(8192, 8192, 128) == SgemmShape::flat);
  CHECK(sgemm_shape_of(8192, 8192, 513) == SgemmShape::square);  // 16 · 513 > 8192
  CHECK(sgemm_shape_of(8192, 8192, 512) == SgemmShape::flat);    // 16 · 512 = 8192
  CHECK(sgemm_shape_of(1024, 1024, 1024) == SgemmShape::small);
  CHECK(sgemm_shape_of(1536, 1536, 12288) == SgemmShape::deep);    // K = 8 · max(M, N)
  CHECK(sgemm_shape_of(1536, 1536, 12287) == SgemmShape::square);  // 1536 = 12 · 128
  CHECK(sgemm_shape_of(64, 64, 512) == SgemmShape::deep);          // deep before skinny
  CHECK(sgemm_shape_of(8192, 64, 8192) == SgemmShape::skinny);
  CHECK(sgemm_shape_of(128, 8192, 128) == SgemmShape::skinny);  // skinny before flat
  CHECK(std::string(ptxrt::apps::to_string(SgemmShape::deep)) == "deep");
}

TEST_CASE("each shape's sweep is the heuristic's choice first, then 7 to 19 more, each once") {
  // The model's runners-up and the configs listed for the shape's class; all suit the device.
  for (const std::array<int, 3>& shape :
       {std::array{4096, 4096, 4096}, std::array{4097, 4097, 4097}, std::array{8192, 8192, 128},
        std::array{1536, 1536, 12288}, std::array{1024, 1024, 1024}}) {
    const int m = shape[0], n = shape[1], k = shape[2];  // clang before 16 captures no binding
    CAPTURE(m);
    CAPTURE(k);
    const auto candidates = ptxrt::apps::sgemm_candidates(h100(), m, n, k);
    CHECK(candidates.size() >= 8);
    CHECK(candidates.size() <= 20);
    REQUIRE(!candidates.empty());
    CHECK(candidates.front() == ptxrt::sgemm_heuristic_config(h100(), m, n, k));
    for (const SgemmConfig& config : candidates) {
      CAPTURE(config.describe());
      CHECK(std::count(candidates.begin(), candidates.end(), config) == 1);
      CHECK(problem_of(config, h100()).empty());
      CHECK((!config.vector_a || n % 4 == 0));
    }
  }
}

TEST_CASE("the ragged sweep skips idle warps and the square one loads A by vectors") {
  const auto has = [](const std::vector<SgemmConfig>& configs, auto predicate) {
    return std::any_of(configs.begin(), configs.end(), predicate);
  };
  const auto ragged = ptxrt::apps::sgemm_candidates(h100(), 4097, 4097, 4097);
  const auto square = ptxrt::apps::sgemm_candidates(h100(), 8192, 8192, 8192);
  CHECK(has(ragged, [](const SgemmConfig& c) { return c.skip_idle_warps; }));
  CHECK_FALSE(has(ragged, [](const SgemmConfig& c) { return c.vector_a; }));  // N % 4 != 0
  CHECK(has(square, [](const SgemmConfig& c) { return c.vector_a; }));
  CHECK(has(square, [](const SgemmConfig& c) { return c.group_m > 1; }));
  CHECK(has(square, [](const SgemmConfig& c) { return c.block_k == 32; }));
}

TEST_CASE("the menu's configs at every split hold every config the heuristic can pick") {
  const auto contains = [](const std::vector<SgemmConfig>& configs, const SgemmConfig& config) {
    return std::find(configs.begin(), configs.end(), config) != configs.end();
  };
  // N % 4 != 0 on a product too small to pad (no vector A), deep, flat, K % 4 != 0, the least.
  for (const std::array<int, 3>& shape :
       {std::array{3180, 35, 849}, std::array{223, 153, 10201}, std::array{6270, 3399, 140},
        std::array{4096, 4096, 4097}, std::array{1, 1, 1}}) {
    const int m = shape[0], n = shape[1], k = shape[2];
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    // sgemm_heuristic_config's rule: vector A only where the vector entry runs and pays.
    const auto as_picked = [&](const SgemmConfig& config) {
      return ptxrt::sgemm_pick_vector_a(h100(), config, m, n, k);
    };
    const auto menu = ptxrt::apps::sgemm_menu_configs(h100(), m, n, k, 64);
    for (const SgemmConfig& config : menu) {
      CAPTURE(config.describe());
      CHECK(std::count(menu.begin(), menu.end(), config) == 1);
      CHECK(problem_of(config, h100()).empty());
      CHECK((config.split_k == 1 || ptxrt::sgemm_slice_depth(config, k) >= 64));
      CHECK(as_picked(config) == config);
    }
    // Every entry of the menu unsplit, and whatever the model rates, with vector A as the pick
    // keeps it.
    for (const ptxrt::SgemmMenuEntry& entry : ptxrt::sgemm_heuristic_menu())
      CHECK(contains(menu, as_picked(entry.config)));
    for (const ptxrt::SgemmEstimate& estimate : ptxrt::sgemm_estimates(h100(), m, n, k)) {
      CAPTURE(estimate.config.describe());
      CHECK(contains(menu, as_picked(estimate.config)));
    }
    CHECK(contains(menu, ptxrt::sgemm_heuristic_config(h100(), m, n, k)));
  }
  // Slices of 64 reach splits the model's 256 do not: 849 deep, 128x64 tiles split 4 (the
  // winner measured there) and 16, not 32 (slices of 32).
  const auto menu = ptxrt::apps::sgemm_menu_configs(h100(), 3180, 35, 849, 64);
  const auto split_of_128x64 = [&](int split_k) {
    return std::any_of(menu.begin(), menu.end(), [&](const SgemmConfig& config) {
      return config.block_m() == 128 && config.block_n() == 64 && config.lanes_m == 8 &&
             config.split_k == split_k;
    });
  };
  CHECK(split_of_128x64(4));
  CHECK(split_of_128x64(16));
  CHECK_FALSE(split_of_128x64(32));
  CHECK(ptxrt::apps::sgemm_menu_configs(h100(), 3180, 35, 849, 256).size() < menu.size());
}

// ptxas' own report, from the NVRTC log: the main configs must not touch local memory. On the
// tensor cores only the reduction and the pad must not: their products fill the register file
// with one block's accumulators and fragments, and ptxas spills a few words of the fast loop or
// the careful second pass (infinities) in some of them; their measured speed judges them
// (docs/perf-notes.md, "3xTF32 on the tensor cores"). Each compile takes seconds, so CTest checks
// the list in parts, each its own case selecting one subcase (tests/CMakeLists.txt registers
// PTXRT_SGEMM_SPILL_CHECK_PARTS of them): part N holds the configs whose place in the list is
// N - 1 modulo the count. Run whole, it is skipped. The list holds the heuristic's menu too, whose
// any-alignment registers must give the blocks per SM the any-alignment kernel's give: the model
// counts rounds of them.
TEST_CASE("every listed sgemm config builds for sm_90 without spills and within its register cap" *
          doctest::skip()) {
  constexpr std::size_t parts = PTXRT_SGEMM_SPILL_CHECK_PARTS;
  const ptxrt::Program program = ptxrt::apps::builtin_program("sgemm");
  std::vector<SgemmConfig> configs = ptxrt::apps::sgemm_configs(h100());
  const auto& menu = ptxrt::sgemm_heuristic_menu();
  for (const ptxrt::SgemmMenuEntry& entry : menu)
    if (std::find(configs.begin(), configs.end(), entry.config) == configs.end())
      configs.push_back(entry.config);
  REQUIRE(configs.size() >= parts);
  const auto blocks_per_sm = [](const SgemmConfig& config, int registers) {
    return ptxrt::sgemm_estimate(config, 1.0, registers, h100(), 4096, 4096, 4096).resident_blocks;
  };
  for (std::size_t part = 0; part < parts; ++part) {
    SUBCASE(("part " + std::to_string(part + 1) + " of " + std::to_string(parts)).c_str()) {
      for (std::size_t index = part; index < configs.size(); index += parts) {
        const SgemmConfig& config = configs[index];
        CAPTURE(config.describe());
        ptxrt::CompileOptions options;
        options.defines = config.defines();
        options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
        const ptxrt::Image image = ptxrt::compile(program, options);
        const auto kernels = ptxrt::parse_ptxas_info(image.compile_log);
        REQUIRE(kernels.size() ==
                5);  // sgemm, sgemm_aligned, sgemm_pitched_b, the reduction, the pad
        const auto entry = std::find_if(
            menu.begin(), menu.end(),
            [&](const ptxrt::SgemmMenuEntry& listed) { return listed.config == config; });
        for (const ptxrt::KernelResources& kernel : kernels) {
          CAPTURE(kernel.name);
          const bool product =
              kernel.name != "sgemm_split_reduce" && kernel.name != "sgemm_pad_rows";
          if (!config.tf32x3 || !product) {
            CHECK(kernel.spill_store_bytes.value_or(1) == 0);
            CHECK(kernel.spill_load_bytes.value_or(1) == 0);
            CHECK(kernel.stack_frame_bytes == 0);
          }
          CHECK(kernel.registers <= config.register_cap(h100()));
          MESSAGE(config.describe() << " " << kernel.name << ": " << kernel.registers
                                    << " registers, " << config.shared_bytes() << " bytes shared, "
                                    << kernel.spill_store_bytes.value_or(0) << " bytes spilled");
          if (entry != menu.end() && kernel.name == "sgemm")
            CHECK(blocks_per_sm(config, entry->any_alignment_registers) ==
                  blocks_per_sm(config, kernel.registers));
        }
      }
    }
  }
}

TEST_CASE("a tune compiles an sgemm config under the key the library then loads it by") {
  // A tune's worker runs each config through ptxrt::sgemm: under a key of its own, every config
  // would compile twice, the second time in the worker, one config at a time.
  const ptxrt::DeviceProperties device = h100();
  const ptxrt::KernelProblem problem = ptxrt::sgemm_problem(device);
  const ptxrt::ProblemSizes sizes = problem.complete_sizes({{"m", 427}, {"n", 658}, {"k", 2257}});
  const ptxrt::TuningConfig tuned = problem.fallback_config(sizes);
  const ptxrt::Target target = ptxrt::select_target(device.cc_major, device.cc_minor);
  ptxrt::Jit jit(ptxrt::JitOptions{.cache_directory = {}});
  const ptxrt::Candidate candidate =
      ptxrt::problem_compiler(jit, problem, sizes, target, device)(tuned);
  REQUIRE(candidate.state == ptxrt::Candidate::State::ready);
  REQUIRE(jit.stats().compiles == 1);
  ptxrt::CompileOptions library =
      ptxrt::sgemm_compile_options(ptxrt::sgemm_config_with(SgemmConfig{}, tuned.defines()));
  library.target = target;
  jit.image(ptxrt::sgemm_program(), library);
  CHECK(jit.stats().compiles == 1);
}
