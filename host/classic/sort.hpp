// sort: ascending bitonic sort of n float keys, alone or carrying int values (ptx_src/
// bitonic_sort.cu, launched by host::DeviceSort). n is padded to the next power of two with NaN
// keys and INT_MAX values, which sort after every real element, so the first n elements are the
// result. The values are the positions 0..n-1: the kernel orders equal keys by value, which then
// equals a stable sort, and the CPU reference (host::sort) must match exactly. Rate: Mkey/s of
// the n real keys.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "host/classic/device_sort.hpp"
#include "host/common/run.hpp"
#include "ptxrt/jit.hpp"

namespace ptxrt::host {

enum class SortVariant { keys, pairs };
// "keys" | "pairs"; Error(invalid_argument) listing them otherwise.
SortVariant parse_sort_variant(std::string_view name);
std::string_view to_string(SortVariant variant);

struct SortPlan {
  std::size_t n = 0;
  std::size_t n_pow2 = 0;
  SortVariant variant = SortVariant::keys;
  std::vector<Define> defines;  // BLOCK_SIZE
  unsigned block_size = 0;
  std::vector<DeviceSortLaunch> launches;  // what DeviceSort runs for n_pow2
};

SortPlan plan_sort(std::int64_t n, SortVariant variant, std::vector<Define> defines = {});

Run run_sort(Jit& jit, const Context& context, const SortPlan& plan, const RunOptions& options);

}  // namespace ptxrt::host
