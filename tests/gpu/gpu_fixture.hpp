// Shared set-up for the GPU tests: the context of device 0 and a way to load a kernel source.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/jit.hpp"
#include "ptxrt/ptxrt.hpp"

namespace ptxrt::testing {

// Device 0's primary context, retained once for the whole test process.
const Context& test_context();

// A Jit without a disk cache, shared by the tests of one process.
Jit& test_jit();

// Compiles CUDA source to PTX for the test device with NVRTC.
std::string compile_ptx(std::string_view source, std::string_view name);
// Compiles CUDA source (a CUBIN for the device) and loads it into `context`, through test_jit().
Module load_source(std::string_view source, std::string_view name = "test.cu");
Module load_source(std::string_view source, std::string_view name, const Context& context);

inline std::vector<float> random_floats(std::size_t count, unsigned seed, float low = -1.0f,
                                        float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

// True when scripts/sanitize_gpu_tests.py runs this process under compute-sanitizer, whose tools
// run kernels hundreds of times slower (racecheck checks every shared-memory access). The tests'
// largest inputs then shrink to sizes that still cross every tile and BASE edge: each test keeps
// its code paths and finishes within a 10-minute GPU run.
bool under_compute_sanitizer();

template <typename Size>
Size full_or_sanitized(Size full, Size under_sanitizer) {
  return under_compute_sanitizer() ? under_sanitizer : full;
}

// A seed no earlier run used: each run draws fresh random inputs (tests CAPTURE it to replay one).
inline std::uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) | device();
}

// The bits of a quiet NaN: outputs are filled with it before a run, so unwritten elements show.
inline constexpr std::uint32_t poison_word = 0x7fc00000u;

}  // namespace ptxrt::testing
