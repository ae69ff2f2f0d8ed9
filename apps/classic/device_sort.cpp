#include "apps/classic/device_sort.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

namespace {

void require_power_of_two(std::size_t n_pow2) {
  if (!std::has_single_bit(n_pow2))
    throw Error(ErrorKind::invalid_argument,
                "bitonic sort: length " + std::to_string(n_pow2) + " is not a power of two");
}

void require_block_size(int block_size) {
  if (block_size != 128 && block_size != 256 && block_size != 512 && block_size != 1024)
    throw Error(ErrorKind::invalid_argument, "bitonic sort: block size " +
                                                 std::to_string(block_size) +
                                                 " is not one of 128, 256, 512, 1024");
}

unsigned grid_of(std::size_t blocks) {
  return static_cast<unsigned>(std::max<std::size_t>(1, blocks));
}

Kernel bitonic_kernel(const Context& context, Jit& jit, int block_size, std::string_view entry) {
  require_block_size(block_size);
  return jit.kernel(apps::builtin_program("bitonic_sort"),
                    {.defines = {{"BLOCK_SIZE", std::to_string(block_size)}}}, context, entry);
}

}  // namespace

std::vector<DeviceSortLaunch> bitonic_plan(std::size_t n_pow2, int block_size) {
  require_power_of_two(n_pow2);
  require_block_size(block_size);
  const auto threads = static_cast<std::size_t>(block_size);
  const std::size_t chunk = 2 * threads;
  std::vector<DeviceSortLaunch> plan;
  // Stages up to one chunk happen inside shared memory in one launch.
  plan.push_back({DeviceSortLaunch::Kind::sort_shared, 0, 0, grid_of(n_pow2 / chunk)});
  for (std::size_t k = 2 * chunk; k <= n_pow2; k *= 2) {
    for (std::size_t j = k / 2; j >= chunk; j /= 2) {
      plan.push_back({DeviceSortLaunch::Kind::merge_global, static_cast<long long>(j),
                      static_cast<long long>(k), grid_of((n_pow2 / 2 + threads - 1) / threads)});
    }
    plan.push_back({DeviceSortLaunch::Kind::merge_shared, 0, static_cast<long long>(k),
                    grid_of(n_pow2 / chunk)});
  }
  return plan;
}

std::size_t bitonic_length(std::size_t count) {
  return std::bit_ceil(std::max<std::size_t>(count, 1));
}

PaddedPairs pad_for_sort(std::span<const float> keys, std::span<const int> values) {
  if (values.size() != keys.size())
    throw Error(ErrorKind::invalid_argument, "pad_for_sort: " + std::to_string(values.size()) +
                                                 " values for " + std::to_string(keys.size()) +
                                                 " keys");
  const std::size_t length = bitonic_length(keys.size());
  constexpr std::uint32_t quiet_nan_bits = 0x7fc00000u;
  float padding_key;
  std::memcpy(&padding_key, &quiet_nan_bits, sizeof padding_key);
  PaddedPairs padded{std::vector<float>(keys.begin(), keys.end()),
                     std::vector<int>(values.begin(), values.end())};
  padded.keys.resize(length, padding_key);
  padded.values.resize(length, INT_MAX);
  return padded;
}

DeviceSort::DeviceSort(const Context& context, Jit& jit, int block_size)
    : block_size_(block_size),
      sort_shared_(bitonic_kernel(context, jit, block_size, "bitonic_sort_shared")),
      merge_global_(bitonic_kernel(context, jit, block_size, "bitonic_merge_global")),
      merge_shared_(bitonic_kernel(context, jit, block_size, "bitonic_merge_shared")) {}

void DeviceSort::sort(DeviceBuffer<float>& keys, DeviceBuffer<int>* values, std::size_t n_pow2,
                      CUstream stream) const {
  require_power_of_two(n_pow2);
  if (n_pow2 > keys.size() || (values != nullptr && n_pow2 > values->size()))
    throw Error(ErrorKind::invalid_argument,
                "bitonic sort: length " + std::to_string(n_pow2) + " exceeds the buffers (" +
                    std::to_string(keys.size()) + " keys, " +
                    std::to_string(values != nullptr ? values->size() : 0) + " values)");
  const CUdeviceptr value_address = values != nullptr ? values->address() : 0;
  const auto length = static_cast<long long>(n_pow2);
  for (const DeviceSortLaunch& step : bitonic_plan(n_pow2, block_size_)) {
    const LaunchConfig config{
        .grid = step.grid, .block = static_cast<unsigned>(block_size_), .stream = stream};
    switch (step.kind) {
      case DeviceSortLaunch::Kind::sort_shared:
        sort_shared_.launch(config, keys, value_address, length);
        break;
      case DeviceSortLaunch::Kind::merge_global:
        merge_global_.launch(config, keys, value_address, length, step.j, step.k);
        break;
      case DeviceSortLaunch::Kind::merge_shared:
        merge_shared_.launch(config, keys, value_address, length, step.k);
        break;
    }
  }
}

}  // namespace ptxrt::apps
