// Ascending bitonic sort of (float key, int value) pairs in device memory, through the builtin
// kernel ptx_src/bitonic_sort.cu and its launch protocol (see the top of that file for the order:
// NaN keys last, equal keys ordered by value, so with values 0..n-1 it is a stable sort).
//
// The sort works on a power-of-two length: the caller pads keys[count, n_pow2) with NaN
// (0x7fc00000) and values with INT_MAX, which sort after every real element — on the device,
// e.g. in the kernel that produces the keys, or with pad_for_sort from the host.
//
// Thread safety: a DeviceSort may be shared; launches are ordered on the stream given.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <span>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/memory.hpp"

namespace ptxrt::apps {

// One launch of the protocol. (Not apps/classic/sort.hpp's BitonicLaunch: two types of one name in
// one namespace broke the one-definition rule, and std::vector's code for one ran on the other.)
struct DeviceSortLaunch {
  enum class Kind { sort_shared, merge_global, merge_shared };
  Kind kind = Kind::sort_shared;
  long long j = 0;  // merge_global: the compare distance
  long long k = 0;  // merge_global, merge_shared: the stage
  unsigned grid = 1;
  bool operator==(const DeviceSortLaunch&) const = default;
};

// The launches that sort n_pow2 elements with `block_size` threads per block. Pure (no GPU);
// throws Error(invalid_argument) unless n_pow2 is a power of two and block_size one of the
// kernel's values (128, 256, 512, 1024).
std::vector<DeviceSortLaunch> bitonic_plan(std::size_t n_pow2, int block_size);

// The smallest power of two >= count, at least 1: the length to allocate and pad to.
std::size_t bitonic_length(std::size_t count);

// Keys and values padded to bitonic_length(keys.size()) on the host, ready to upload.
struct PaddedPairs {
  std::vector<float> keys;
  std::vector<int> values;
};
PaddedPairs pad_for_sort(std::span<const float> keys, std::span<const int> values);

class DeviceSort {
 public:
  // Compiles (or finds in `jit`'s caches) bitonic_sort.cu with BLOCK_SIZE = block_size.
  DeviceSort(const Context& context, Jit& jit, int block_size = 512);

  // Sorts keys[0, n_pow2) ascending, carrying values[0, n_pow2) when `values` is not null.
  // Throws Error(invalid_argument) when n_pow2 is not a power of two or exceeds a buffer.
  void sort(DeviceBuffer<float>& keys, DeviceBuffer<int>* values, std::size_t n_pow2,
            CUstream stream = nullptr) const;

  int block_size() const noexcept { return block_size_; }

 private:
  int block_size_;
  Kernel sort_shared_;
  Kernel merge_global_;
  Kernel merge_shared_;
};

}  // namespace ptxrt::apps
