// [jit] on a real GPU: the no-GPU resource report and occupancy table against the driver's own
// numbers for every built-in kernel and each value of its constants; single flight; PTX loading;
// a kernel written with the standard headers.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <thread>

#include "apps/common/builtin_kernels.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"

using namespace ptxrt;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

// Each value of each constant with the others at their defaults (as the CPU compile test does).
std::vector<std::vector<Define>> configurations(const Manifest& manifest) {
  std::vector<std::vector<Define>> result{{}};
  for (const ManifestDefine& define : manifest.defines)
    for (const std::string& value : define.values)
      if (!define.default_value || value != *define.default_value)
        result.push_back({{define.name, value}});
  return result;
}

}  // namespace

TEST_CASE("the resource report and occupancy match the driver for every built-in kernel") {
  const DeviceProperties& device = test_context().device().properties();
  const ArchLimits& limits = arch_limits(device.cc_major, device.cc_minor);
  int kernels_checked = 0, occupancies_checked = 0;
  for (const std::string& name : apps::builtin_kernel_names()) {
    const Program program = apps::builtin_program(name);
    for (std::vector<Define> defines : configurations(program.manifest())) {
      CompileOptions options{.defines = defines};
      const Module module = test_jit().module(program, options, test_context());
      const auto image = test_jit().image(program, Jit::target_for(options, test_context()));
      const auto report = image_resources(*image);
      for (const KernelResources& resources : report) {
        INFO(name << " [" << format_defines(image->defines) << "] " << resources.name);
        const Kernel kernel = module.kernel(resources.name);
        const KernelAttributes driver = kernel.attributes();
        CHECK(resources.registers == driver.registers);
        CHECK(resources.static_shared_bytes == driver.static_shared_bytes);
        CHECK(resources.stack_frame_bytes == driver.local_bytes);
        CHECK(resources.user_constant_bytes == driver.constant_bytes);
        if (resources.max_threads_per_block > 0)
          CHECK(resources.max_threads_per_block == driver.max_threads_per_block);
        for (int block : {32, 64, 96, 128, 256, 384, 512, 768, 1024}) {
          if (block > driver.max_threads_per_block) continue;
          INFO("block " << block);
          const Occupancy predicted = compute_occupancy(limits, resources, block, 0);
          CHECK(predicted.active_blocks_per_sm == kernel.max_active_blocks_per_sm(block));
          ++occupancies_checked;
        }
        ++kernels_checked;
      }
    }
  }
  MESSAGE(kernels_checked << " kernel specializations, " << occupancies_checked
                          << " occupancies checked against the driver");
  CHECK(kernels_checked > 20);
}

TEST_CASE("occupancy with dynamic shared memory matches the driver") {
  const DeviceProperties& device = test_context().device().properties();
  const ArchLimits& limits = arch_limits(device.cc_major, device.cc_minor);
  const Program program = Program::from_string(R"(
extern "C" __global__ void scratch(float* out) {
  extern __shared__ float buffer[];
  buffer[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
})", "scratch.cu");
  const Module module = test_jit().module(program, {}, test_context());
  const Kernel kernel = module.kernel("scratch");
  kernel.set_max_dynamic_shared_bytes(device.shared_memory_per_block_optin);
  const auto image = test_jit().image(program, Jit::target_for({}, test_context()));
  const KernelResources resources = read_cubin_resources(image->data).at(0);
  for (std::size_t dynamic : {0ul, 4096ul, 20000ul, 48u * 1024ul, 100u * 1024ul, 200u * 1024ul}) {
    for (int block : {128, 256, 1024}) {
      INFO("dynamic " << dynamic << " block " << block);
      CHECK(compute_occupancy(limits, resources, block, dynamic).active_blocks_per_sm ==
            kernel.max_active_blocks_per_sm(block, dynamic));
    }
  }
}

TEST_CASE("sixteen threads asking for one specialization compile and load it once") {
  Jit jit([] {
    JitOptions options;
    options.cache_directory.clear();
    return options;
  }());
  const Program program = apps::builtin_program("matmul_tiled");
  const CompileOptions options{.defines = {{"TILE_WIDTH", "8"}}};
  std::vector<std::thread> threads;
  std::vector<CUmodule> handles(16);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] { handles[i] = jit.module(program, options, test_context()).handle(); });
  for (std::thread& thread : threads) thread.join();
  for (CUmodule handle : handles) CHECK(handle == handles[0]);
  const JitStats stats = jit.stats();
  CHECK(stats.compiles == 1);
  CHECK(stats.module_loads == 1);
  CHECK(stats.module_hits == 15);
}

TEST_CASE("a PTX image is JIT-compiled by the driver, its log kept, and runs") {
  CompileOptions options;
  options.target.format = ImageFormat::ptx;
  const Program program = apps::builtin_program("vector_add");
  const Module module = test_jit().module(program, options, test_context());
  CHECK(module.label().find("compute_") != std::string::npos);
  const long long n = 1001;
  const auto a = ptxrt::testing::random_floats(n, 8), b = ptxrt::testing::random_floats(n, 9);
  DeviceBuffer<float> da(test_context(), std::span<const float>(a));
  DeviceBuffer<float> db(test_context(), std::span<const float>(b));
  DeviceBuffer<float> dc(test_context(), a.size());
  dc.memory().fill_words(ptxrt::testing::poison_word);
  module.kernel("vector_add").launch({.grid = 4, .block = 128}, da, db, dc, n);
  const auto c = dc.download();
  for (long long i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);
}

TEST_CASE("a PTX image newer than the driver is refused with advice, before the driver sees it") {
  Image image;
  image.format = ImageFormat::ptx;
  image.arch = "compute_90";
  image.name = "future.cu";
  image.data = ".version 99.0\n.target sm_90\n.address_size 64\n";
  const DeviceProperties& device = test_context().device().properties();
  CHECK_THROWS_WITH_AS(check_image_for_driver(image, device.driver_version, device.cc_major, device.cc_minor),
                       doctest::Contains("99.0"), Error);
}

TEST_CASE("a template kernel is reached by the name expression it was compiled for") {
  const Program program = Program::from_string(R"(
template <typename T, int Scale>
__global__ void scale(T* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= Scale;
})", "scale_template.cu");
  const CompileOptions options{.name_expressions = {"scale<float, 3>", "scale<float, 5>"}};
  const Module module = test_jit().module(program, options, test_context());
  const int n = 300;
  const auto values = ptxrt::testing::random_floats(n, 12);
  for (auto [expression, factor] : {std::pair{"scale<float, 3>", 3.0f}, {"scale<float, 5>", 5.0f}}) {
    INFO(expression);
    DeviceBuffer<float> data(test_context(), std::span<const float>(values));
    module.kernel(expression).launch({.grid = blocks_for(n, 128), .block = 128}, data, n);
    const auto scaled = data.download();
    for (int i = 0; i < n; ++i) REQUIRE(scaled[i] == values[i] * factor);
  }
}

TEST_CASE("a kernel written with the C++ standard headers runs and agrees with the host's std") {
  const Program program = Program::from_string(R"(
#include <algorithm>
#include <array>
#include <bit>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <numeric>
extern "C" __global__ void standard_mix(const float* x, const float* y, float* clamped,
                                        float* magnitude, int* bits, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::array<float, 3> window{x[i], y[i], x[(i + 1) % n]};
  clamped[i] = std::clamp(*std::max_element(window.begin(), window.end()), -0.5f, 0.5f);
  magnitude[i] = std::abs(std::complex<float>(x[i], y[i]));
  bits[i] = std::popcount(std::bit_cast<std::uint32_t>(x[i])) + 100 * std::gcd(i, 360);
})", "standard_mix.cu");
  const Module module = test_jit().module(program, {}, test_context());
  const int n = 1003;
  const auto x = ptxrt::testing::random_floats(n, 31), y = ptxrt::testing::random_floats(n, 32);
  DeviceBuffer<float> dx(test_context(), std::span<const float>(x));
  DeviceBuffer<float> dy(test_context(), std::span<const float>(y));
  DeviceBuffer<float> clamped(test_context(), n), magnitude(test_context(), n);
  DeviceBuffer<int> bits(test_context(), n);
  clamped.memory().fill_words(ptxrt::testing::poison_word);
  magnitude.memory().fill_words(ptxrt::testing::poison_word);
  bits.memory().fill_words(ptxrt::testing::poison_word);
  module.kernel("standard_mix")
      .launch({.grid = blocks_for(n, 128), .block = 128}, dx, dy, clamped, magnitude, bits, n);
  const auto got_clamped = clamped.download(), got_magnitude = magnitude.download();
  const auto got_bits = bits.download();
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const float largest = std::max({x[i], y[i], x[(i + 1) % n]});
    REQUIRE(got_clamped[i] == std::clamp(largest, -0.5f, 0.5f));
    const float expected = std::abs(std::complex<float>(x[i], y[i]));
    REQUIRE(std::fabs(got_magnitude[i] - expected) <= 4e-7f * expected);  // 3 ulp
    REQUIRE(got_bits[i] ==
            std::popcount(std::bit_cast<std::uint32_t>(x[i])) + 100 * std::gcd(i, 360));
  }
}
