// Programs of two files linked with nvJitLink (with and without LTO), and fatbins, loaded and run
// on the GPU against a CPU reference: fresh random inputs, poisoned outputs, a size that is no
// multiple of the block. tests/cpu/link_tests.cpp and multi_arch_tests.cpp check how they build.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <random>
#include <vector>

#include "gpu_fixture.hpp"
#include "ptxrt/core/fatbin.hpp"

using namespace ptxrt;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

const std::filesystem::path link_data = std::filesystem::path(PTXRT_SOURCE_DIR) / "tests/data/link";

unsigned fresh_seed() { return std::random_device{}(); }

// Sets gain and bias by name, runs affine_clamp on n random values and checks every output and
// the thread count against the CPU.
void check_affine_clamp(const Module& module, unsigned seed) {
  INFO("seed " << seed << ", module " << module.label());
  const int n = 1000 + static_cast<int>(seed % 97);  // never a multiple of the 128-thread block
  const std::vector<float> x =
      ptxrt::testing::random_floats(static_cast<std::size_t>(n), seed, -4, 4);
  const std::vector<float> bias = ptxrt::testing::random_floats(4, seed + 1);
  const float gain = 1.5f, low = -2.0f, high = 3.0f;
  module.symbol<float>("gain").set(gain);
  module.symbol<float>("bias").set(std::span<const float>(bias));
  module.symbol<int>("launched_threads").set(0);
  DeviceBuffer<float> device_x(test_context(), std::span<const float>(x));
  DeviceBuffer<float> device_y(test_context(), x.size());
  device_y.memory().fill_words(ptxrt::testing::poison_word);
  module.kernel("affine_clamp")
      .launch({.grid = blocks_for(n, 128), .block = 128}, device_x, device_y, n, low, high);
  const std::vector<float> y = device_y.download();
  for (int i = 0; i < n; ++i) {
    const float expected = std::clamp(gain * x[i] + bias[i % 4], low, high);
    REQUIRE_MESSAGE(std::abs(y[i] - expected) <= 1e-6f * std::max(1.0f, std::abs(expected)),
                    "element " << i);
  }
  CHECK(module.symbol<int>("launched_threads").get() == n);
}

}  // namespace

TEST_CASE("a program of two files runs correctly, linked with and without LTO") {
  const Program program =
      Program::from_files({link_data / "link_main.cu", link_data / "link_math.cu"});
  for (const bool lto : {false, true}) {
    CAPTURE(lto);
    CompileOptions options;
    options.lto = lto;
    check_affine_clamp(test_jit().module(program, options, test_context()), fresh_seed());
  }
}

TEST_CASE("a fatbin of sm_80, the device's SM and compute PTX loads and runs the device's code") {
  const DeviceProperties& device = test_context().device().properties();
  const std::string sm = std::to_string(device.cc_major * 10 + device.cc_minor);
  CompileOptions options;
  options.lto = true;
  options.target = {"sm_80,sm_" + sm + ",compute_" + sm, ImageFormat::fatbin, {}};
  const Program program =
      Program::from_files({link_data / "link_main.cu", link_data / "link_math.cu"});
  const Image fatbin = compile(program, options);
  check_image_for_driver(fatbin, device.driver_version, device.cc_major, device.cc_minor);
  check_affine_clamp(Module::load(test_context(), fatbin), fresh_seed());
  // Through the Jit too: the fatbin is cached and loaded like any image.
  check_affine_clamp(test_jit().module(program, options, test_context()), fresh_seed());
}
