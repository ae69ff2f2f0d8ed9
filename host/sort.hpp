// sort: ascending bitonic sort of n float keys, alone or carrying int values (ptx_src/
// bitonic_sort.cu). n is padded to the next power of two with NaN keys and INT_MAX values, which
// sort after every real element, so the first n elements are the result. The values are the
// positions 0..n-1: the kernel orders equal keys by value, which then equals a stable sort, and
// the CPU reference (host::sort) must match exactly. Rate: Mkey/s of the n real keys.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "host/run.hpp"
#include "ptxrt/jit.hpp"

namespace ptxrt::host {

enum class SortVariant { keys, pairs };
// "keys" | "pairs"; Error(invalid_argument) listing them otherwise.
SortVariant parse_sort_variant(std::string_view name);
std::string_view to_string(SortVariant variant);

// One launch of the bitonic sequence the kernel file prescribes.
struct BitonicLaunch {
  enum class Entry { sort_shared, merge_global, merge_shared };
  Entry entry = Entry::sort_shared;
  unsigned grid = 0;
  long long j = 0;  // merge_global only: the compare distance
  long long k = 0;  // merge_global and merge_shared: the stage
  bool operator==(const BitonicLaunch&) const = default;
};
std::string_view entry_name(BitonicLaunch::Entry entry);

// The launches that sort n_pow2 (a power of two) keys with blocks of block_size threads.
std::vector<BitonicLaunch> bitonic_schedule(std::uint64_t n_pow2, unsigned block_size);

struct SortPlan {
  std::size_t n = 0;
  std::size_t n_pow2 = 0;
  SortVariant variant = SortVariant::keys;
  Program program;
  std::vector<Define> defines;  // BLOCK_SIZE
  unsigned block_size = 0;
  std::vector<BitonicLaunch> launches;
};

SortPlan plan_sort(std::int64_t n, SortVariant variant, std::vector<Define> defines = {});

Run run_sort(Jit& jit, const Context& context, const SortPlan& plan, const RunOptions& options);

}  // namespace ptxrt::host
