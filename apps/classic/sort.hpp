// sort: ascending sort of n float keys, alone or carrying int values, by one of two kernels:
//   bitonic (ptx_src/bitonic_sort.cu, launched by apps::DeviceSort): n padded to the next power of
//     two with NaN keys and INT_MAX values, which sort after every real element; NaN keys last,
//     -0 == +0, equal keys ordered by value. The CPU reference is apps::sort.
//   radix (ptx_src/radix_sort.cu, launched by apps::RadixSort): 4 passes of 8 bits, stable, keys
//     ordered by their float bits (-NaN first, -0 before +0, +NaN last). The CPU reference is
//     apps::radix_order_sort (std::stable_sort by those bits).
// The values are the positions 0..n-1, so both sorts of pairs equal a stable sort of the keys and
// must match the reference exactly. Rate: Mkey/s of the n real keys.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "apps/classic/device_sort.hpp"
#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

enum class SortVariant { bitonic, bitonic_pairs, radix, radix_pairs };
// "bitonic" | "bitonic-pairs" | "radix" | "radix-pairs"; Error(invalid_argument) listing them
// otherwise.
SortVariant parse_sort_variant(std::string_view name);
std::string_view to_string(SortVariant variant);
bool is_radix(SortVariant variant);
bool carries_values(SortVariant variant);

struct SortPlan {
  std::size_t n = 0;
  SortVariant variant = SortVariant::bitonic;
  Program program;              // bitonic_sort or radix_sort
  std::vector<Define> defines;  // bitonic: BLOCK_SIZE; radix: BLOCK_SIZE, ITEMS
  unsigned block_size = 0;
  std::size_t n_pow2 = 0;                  // bitonic: the padded length
  std::vector<DeviceSortLaunch> launches;  // bitonic: what DeviceSort runs for n_pow2
  int launch_count = 0;                    // kernel launches per sort
};

// Checks n (1 .. 2^31-1 for int positions; the radix sort below 2^30) and the defines against the
// variant's kernel file. Needs no GPU.
SortPlan plan_sort(std::int64_t n, SortVariant variant, std::vector<Define> defines = {});

Run run_sort(Jit& jit, const Context& context, const SortPlan& plan, const RunOptions& options);

}  // namespace ptxrt::apps
