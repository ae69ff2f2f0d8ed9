#include "apps/classic/radix_sort.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <string>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/sizes.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

namespace {

constexpr unsigned radix = 256;
constexpr int max_passes = 4;
// The histogram's grid-stride blocks per SM: enough loads in flight to stream the keys.
constexpr unsigned histogram_blocks_per_sm = 4;

std::size_t checked_capacity(std::size_t capacity) {
  if (capacity == 0 || capacity > RadixSort::max_keys)
    throw Error(ErrorKind::invalid_argument,
                "radix sort: capacity " + std::to_string(capacity) + " is outside 1.." +
                    std::to_string(RadixSort::max_keys) + " (the look-back counts in 30 bits)");
  return capacity;
}

std::size_t tiles_for(std::size_t n, std::size_t tile) { return (n + tile - 1) / tile; }

Kernel radix_kernel(Jit& jit, const Context& context, const std::vector<Define>& defines,
                    std::string_view entry) {
  return jit.kernel(apps::builtin_program("radix_sort"), compile_options(defines), context, entry);
}

std::uint32_t ordered_bits(float key) {
  const auto bits = std::bit_cast<std::uint32_t>(key);
  return bits ^ ((bits >> 31) != 0 ? 0xffffffffu : 0x80000000u);
}

}  // namespace

RadixSort::RadixSort(const Context& context, Jit& jit, std::size_t capacity,
                     std::vector<Define> defines)
    : defines_(resolve_defines(apps::builtin_program("radix_sort"), std::move(defines))),
      block_size_(static_cast<unsigned>(define_int(defines_, "BLOCK_SIZE"))),
      tile_(static_cast<std::size_t>(block_size_) *
            static_cast<std::size_t>(define_int(defines_, "ITEMS"))),
      capacity_(checked_capacity(capacity)),
      histogram_grid_(grid_stride_blocks((capacity + 3) / 4, block_size_,
                                         context.device().properties().sm_count,
                                         histogram_blocks_per_sm)),
      histogram_(radix_kernel(jit, context, defines_, "radix_histogram")),
      onesweep_(radix_kernel(jit, context, defines_, "radix_onesweep")),
      counters_(context, max_passes * radix + max_passes),
      status_{DeviceBuffer<unsigned>(context, tiles_for(capacity, tile_) * radix),
              DeviceBuffer<unsigned>(context, tiles_for(capacity, tile_) * radix)} {}

int RadixSort::passes_for(int bits) {
  if (bits < 1 || bits > 32)
    throw Error(ErrorKind::invalid_argument,
                "radix sort: " + std::to_string(bits) + " key bits is outside 1..32");
  return (bits + 7) / 8;
}

int RadixSort::sort(const RadixBuffers& buffers, std::size_t n, RadixKeys keys, int bits,
                    CUstream stream) {
  const int passes = passes_for(bits);
  if (n > capacity_)
    throw Error(ErrorKind::invalid_argument, "radix sort: " + std::to_string(n) +
                                                 " keys exceed the capacity of " +
                                                 std::to_string(capacity_) + " it was made for");
  if (n == 0) return 0;
  const auto count = static_cast<long long>(n);
  const int key_is_float = keys == RadixKeys::floating ? 1 : 0;
  const CUdeviceptr histograms = counters_.address();
  const CUdeviceptr tile_counters = histograms + max_passes * radix * sizeof(unsigned);
  // The kernels count on zeros here; each pass clears the other status array for the next.
  counters_.fill_bytes(0, stream);
  status_[0].fill_bytes(0, stream);
  histogram_.launch({.grid = histogram_grid_, .block = block_size_, .stream = stream},
                    buffers.keys[0], count, passes, key_is_float, histograms);
  const unsigned tiles = static_cast<unsigned>(tiles_for(n, tile_));
  int current = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const CUdeviceptr next_status = pass + 1 < passes ? status_[(pass + 1) % 2].address() : 0;
    onesweep_.launch({.grid = tiles, .block = block_size_, .stream = stream}, buffers.keys[current],
                     buffers.keys[1 - current], buffers.values[current],
                     buffers.values[1 - current], count, pass, key_is_float, histograms,
                     status_[pass % 2].address(), next_status, tile_counters);
    current = 1 - current;
  }
  return current;
}

void radix_order_sort(std::span<float> keys, std::span<int> values) {
  if (!values.empty() && values.size() != keys.size())
    throw Error(ErrorKind::invalid_argument, "radix_order_sort: " + std::to_string(values.size()) +
                                                 " values for " + std::to_string(keys.size()) +
                                                 " keys");
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ordered_bits(keys[a]) < ordered_bits(keys[b]);
  });
  const std::vector<float> original_keys(keys.begin(), keys.end());
  const std::vector<int> original_values(values.begin(), values.end());
  for (std::size_t k = 0; k < order.size(); ++k) {
    keys[k] = original_keys[order[k]];
    if (!values.empty()) values[k] = original_values[order[k]];
  }
}

}  // namespace ptxrt::apps
