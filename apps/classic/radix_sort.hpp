// Stable LSD radix sort of 32-bit keys (unsigned, or floats ordered as numbers), optionally
// carrying 32-bit values, through the builtin kernel ptx_src/radix_sort.cu: one launch counts
// every pass's digits, then one "onesweep" launch per 8-bit digit. The closest pair's grid method
// sorts its cell keys with it; `ptxrt run sort --variant radix` times it.
//
// Ownership and thread safety: a RadixSort owns the look-back workspace of its kernels, sized at
// construction, so one sort runs on it at a time: give each thread its own. Launches are ordered
// on the stream given.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/memory.hpp"

namespace ptxrt::apps {

// How the 32 bits of a key order: as an unsigned integer, or as a float's value (-NaN first, then
// -inf .. -0, +0 .. +inf, +NaN).
enum class RadixKeys { unsigned_int, floating };

// Keys (and values) in two device arrays of at least n elements each: the passes alternate
// between them, starting from index 0. values = {0, 0} sorts keys alone.
struct RadixBuffers {
  std::array<CUdeviceptr, 2> keys{};
  std::array<CUdeviceptr, 2> values{};
};

class RadixSort {
 public:
  // The look-back counts in 30 bits.
  static constexpr std::size_t max_keys = (std::size_t{1} << 30) - 1;

  // Compiles radix_sort.cu with `defines` (BLOCK_SIZE, ITEMS; checked against its manifest,
  // defaults filled in) and allocates the workspace for up to `capacity` keys. Throws
  // Error(invalid_argument) for a capacity of 0 or above max_keys.
  RadixSort(const Context& context, Jit& jit, std::size_t capacity,
            std::vector<Define> defines = {});

  // Sorts keys[0][0, n) (carrying values[0]) stably by their low `bits` bits, 8 per pass, and
  // returns the index of the arrays that hold the result: 0 after an even number of passes.
  // Throws Error(invalid_argument) for n above the capacity or bits outside 1..32.
  int sort(const RadixBuffers& buffers, std::size_t n, RadixKeys keys, int bits = 32,
           CUstream stream = nullptr);

  // ceil(bits / 8); Error(invalid_argument) outside 1..32.
  static int passes_for(int bits);
  const std::vector<Define>& defines() const noexcept { return defines_; }
  std::size_t capacity() const noexcept { return capacity_; }
  // Kernel launches of one sort: the histogram and one per pass.
  static int launches_for(int bits) { return 1 + passes_for(bits); }

 private:
  std::vector<Define> defines_;
  unsigned block_size_;
  std::size_t tile_;
  std::size_t capacity_;
  unsigned histogram_grid_;
  Kernel histogram_;
  Kernel onesweep_;
  DeviceBuffer<unsigned> counters_;               // histograms (4*256), then tile counters (4)
  std::array<DeviceBuffer<unsigned>, 2> status_;  // the look-back words, ping-pong by pass
};

// The order the radix sort produces, on the CPU: stable by the keys' order (as RadixKeys says),
// carrying `values` when not empty (then as many as keys). The reference of the GPU tests and of
// `run sort --variant radix`.
void radix_order_sort(std::span<float> keys, std::span<int> values);

}  // namespace ptxrt::apps
