// The SGEMM configs as values: which ones suit a device, the launch they imply, and that each
// listed one builds for sm_90 without spilling. No GPU needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>

#include "host/matmul/sgemm.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/program.hpp"
#include "ptxrt/resources.hpp"

using ptxrt::host::SgemmConfig;

namespace {

// The limits of an H100 SXM as the driver reports them.
ptxrt::DeviceProperties h100() {
  ptxrt::DeviceProperties device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.cc_major = 9;
  device.sm_count = 132;
  device.shared_memory_per_block = 48 * 1024;
  device.shared_memory_per_block_optin = 227 * 1024;
  device.shared_memory_per_sm = 228 * 1024;
  device.registers_per_block = 65536;
  device.registers_per_sm = 65536;
  device.max_threads_per_block = 1024;
  device.max_threads_per_sm = 2048;
  device.max_blocks_per_sm = 32;
  device.warp_size = 32;
  return device;
}

// A Turing card: 64 KiB of shared memory per block at most, 1024 threads per SM.
ptxrt::DeviceProperties turing() {
  ptxrt::DeviceProperties device = h100();
  device.name = "Tesla T4";
  device.cc_major = 7;
  device.cc_minor = 5;
  device.shared_memory_per_block_optin = 64 * 1024;
  device.shared_memory_per_sm = 64 * 1024;
  device.max_threads_per_sm = 1024;
  return device;
}

std::string problem_of(const SgemmConfig& config, const ptxrt::DeviceProperties& device) {
  return ptxrt::host::sgemm_config_problem(config, device).value_or("");
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
  const ptxrt::Program program = ptxrt::Program::builtin("sgemm");
  for (const ptxrt::Define& define : config.defines()) {
    CAPTURE(define.name);
    const ptxrt::ManifestDefine* declared = program.manifest().find_define(define.name);
    REQUIRE(declared != nullptr);
    CHECK(declared->default_value == define.value);
  }
}

TEST_CASE("the default sgemm config on an H100 is sgemm.cu's: the 128x128x16 tile, 3 stages") {
  const SgemmConfig config = ptxrt::host::default_sgemm_config(h100());
  CHECK(config == SgemmConfig{});
  CHECK(config.shared_bytes() == 49920);  // over 48 KiB: the launch opts in
}

TEST_CASE("every sgemm config listed for an H100 suits it, once each, the default first") {
  const auto configs = ptxrt::host::sgemm_configs(h100());
  CHECK(configs.size() == 29);
  REQUIRE(!configs.empty());
  CHECK(configs.front() == ptxrt::host::default_sgemm_config(h100()));
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(configs[i].describe());
    CHECK(problem_of(configs[i], h100()).empty());
    CHECK(std::count(configs.begin(), configs.end(), configs[i]) == 1);
  }
}

TEST_CASE("a config's defines are exactly what sgemm.cu declares, in its declared values") {
  const ptxrt::Program program = ptxrt::Program::builtin("sgemm");
  for (const SgemmConfig& config : ptxrt::host::sgemm_configs(h100())) {
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
  CHECK_THROWS_WITH_AS(ptxrt::host::default_sgemm_config(tiny),
                       "sgemm: no config suits Tesla T4 (sm_75)", ptxrt::Error);
}

TEST_CASE("the sgemm grid covers C with one block per tile, x along N and y along M") {
  const SgemmConfig config;
  const auto edge = ptxrt::host::sgemm_launch(config, 4097, 4097, false);
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
  const auto skinny = ptxrt::host::sgemm_launch(wide, 8192, 8192, true);
  CHECK(skinny.launch.grid.x == 32);
  CHECK(skinny.launch.grid.y == 64);
  CHECK(skinny.entry == "sgemm_aligned");

  const auto single = ptxrt::host::sgemm_launch(config, 1, 1, false);
  CHECK(single.launch.grid.count() == 1);
}

TEST_CASE("the aligned sgemm entry needs N a multiple of 4 and B and C on 16 bytes") {
  using ptxrt::host::sgemm_alignment_allows_vectors;
  const SgemmConfig config;
  CHECK(sgemm_alignment_allows_vectors(config, 0x3004, 0x1000, 0x2000, 4096, 4097));
  CHECK_FALSE(sgemm_alignment_allows_vectors(config, 0x3000, 0x1000, 0x2000, 4097, 4096));
  CHECK_FALSE(sgemm_alignment_allows_vectors(config, 0x3000, 0x1004, 0x2000, 4096, 4096));
  CHECK_FALSE(sgemm_alignment_allows_vectors(config, 0x3000, 0x1000, 0x2008, 4096, 4096));
}

TEST_CASE("with vector A the aligned entry also needs K a multiple of 4 and A on 16 bytes") {
  using ptxrt::host::sgemm_alignment_allows_vectors;
  SgemmConfig config;
  config.vector_a = true;
  CHECK(sgemm_alignment_allows_vectors(config, 0x3000, 0x1000, 0x2000, 4096, 4096));
  CHECK_FALSE(sgemm_alignment_allows_vectors(config, 0x3000, 0x1000, 0x2000, 4096, 4097));
  CHECK_FALSE(sgemm_alignment_allows_vectors(config, 0x3004, 0x1000, 0x2000, 4096, 4096));
  const auto plan = ptxrt::host::sgemm_launch(config, 4096, 4096, false);
  CHECK(plan.entry == "sgemm");
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

TEST_CASE("the four shapes of issue 8 are square, square, ragged and skinny") {
  using ptxrt::host::SgemmShape;
  using ptxrt::host::sgemm_shape_of;
  CHECK(sgemm_shape_of(4096, 4096, 4096) == SgemmShape::square);
  CHECK(sgemm_shape_of(8192, 8192, 8192) == SgemmShape::square);
  CHECK(sgemm_shape_of(4097, 4097, 4097) == SgemmShape::ragged);
  CHECK(sgemm_shape_of(8192, 8192, 128) == SgemmShape::skinny);
  CHECK(sgemm_shape_of(8192, 8192, 513) == SgemmShape::square);  // 16 · 513 > 8192
  CHECK(sgemm_shape_of(4096, 4100, 4096) == SgemmShape::ragged);
  CHECK(std::string(ptxrt::host::to_string(SgemmShape::skinny)) == "skinny");
}

TEST_CASE("each shape's sweep is the default and 7 to 13 more listed configs, each once") {
  const auto listed = ptxrt::host::sgemm_configs(h100());
  for (const auto [m, n, k] : {std::array{4096, 4096, 4096}, std::array{4097, 4097, 4097},
                               std::array{8192, 8192, 128}}) {
    CAPTURE(m);
    CAPTURE(k);
    const auto candidates = ptxrt::host::sgemm_candidates(h100(), m, n, k);
    CHECK(candidates.size() >= 8);
    CHECK(candidates.size() <= 14);
    REQUIRE(!candidates.empty());
    CHECK(candidates.front() == ptxrt::host::default_sgemm_config(h100()));
    for (const SgemmConfig& config : candidates) {
      CAPTURE(config.describe());
      CHECK(std::count(candidates.begin(), candidates.end(), config) == 1);
      CHECK(std::count(listed.begin(), listed.end(), config) == 1);
    }
  }
}

TEST_CASE("the ragged sweep skips idle warps and the square one loads A by vectors") {
  const auto has = [](const std::vector<SgemmConfig>& configs, auto predicate) {
    return std::any_of(configs.begin(), configs.end(), predicate);
  };
  const auto ragged = ptxrt::host::sgemm_candidates(h100(), 4097, 4097, 4097);
  const auto square = ptxrt::host::sgemm_candidates(h100(), 8192, 8192, 8192);
  CHECK(has(ragged, [](const SgemmConfig& c) { return c.skip_idle_warps; }));
  CHECK_FALSE(has(ragged, [](const SgemmConfig& c) { return c.vector_a; }));  // N % 4 != 0
  CHECK(has(square, [](const SgemmConfig& c) { return c.vector_a; }));
  CHECK(has(square, [](const SgemmConfig& c) { return c.group_m > 1; }));
  CHECK(has(square, [](const SgemmConfig& c) { return c.block_k == 32; }));
}

// ptxas' own report, from the NVRTC log: the main configs must not touch local memory.
TEST_CASE("every listed sgemm config builds for sm_90 without spills and within its register cap") {
  const ptxrt::Program program = ptxrt::Program::builtin("sgemm");
  for (const SgemmConfig& config : ptxrt::host::sgemm_configs(h100())) {
    CAPTURE(config.describe());
    ptxrt::CompileOptions options;
    options.defines = config.defines();
    options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
    const ptxrt::Image image = ptxrt::compile(program, options);
    const auto kernels = ptxrt::parse_ptxas_info(image.compile_log);
    REQUIRE(kernels.size() == 2);
    for (const ptxrt::KernelResources& kernel : kernels) {
      CAPTURE(kernel.name);
      CHECK(kernel.spill_store_bytes.value_or(1) == 0);
      CHECK(kernel.spill_load_bytes.value_or(1) == 0);
      CHECK(kernel.stack_frame_bytes == 0);
      CHECK(kernel.registers <= config.register_cap(h100()));
      MESSAGE(config.describe() << " " << kernel.name << ": " << kernel.registers << " registers, "
                                << config.shared_bytes() << " bytes shared");
    }
  }
}
