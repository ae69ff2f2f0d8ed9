#include "host/classic/sort.hpp"

#include <algorithm>
#include <climits>
#include <limits>
#include <numeric>

#include "host/common/kernel_defines.hpp"
#include "host/common/random_data.hpp"
#include "host/common/reference.hpp"
#include "host/common/sizes.hpp"
#include "host/common/timing.hpp"
#include "ptxrt/error.hpp"

namespace ptxrt::host {

SortVariant parse_sort_variant(std::string_view name) {
  if (name == "keys") return SortVariant::keys;
  if (name == "pairs") return SortVariant::pairs;
  throw Error(ErrorKind::invalid_argument,
              "sort variant '" + std::string(name) + "' is unknown: expected keys or pairs");
}

std::string_view to_string(SortVariant variant) {
  return variant == SortVariant::keys ? "keys" : "pairs";
}

SortPlan plan_sort(std::int64_t n, SortVariant variant, std::vector<Define> defines) {
  const std::size_t count = positive_size("sort n", n);
  if (count > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument, "sort n = " + std::to_string(count) + " exceeds " +
                                                 std::to_string(INT_MAX) +
                                                 ": the values are int positions");
  const auto padded = static_cast<std::size_t>(next_power_of_two(count));
  std::vector<Define> resolved =
      resolve_defines(Program::builtin("bitonic_sort"), std::move(defines));
  const int block_size = define_int(resolved, "BLOCK_SIZE");
  return {count,
          padded,
          variant,
          std::move(resolved),
          static_cast<unsigned>(block_size),
          bitonic_plan(padded, block_size)};
}

namespace {

// Random keys carrying their positions 0..n-1, padded to plan.n_pow2.
PaddedPairs padded_input(const SortPlan& plan, std::uint64_t seed) {
  std::vector<int> positions(plan.n);
  std::iota(positions.begin(), positions.end(), 0);
  return pad_for_sort(random_floats(plan.n, seed, 0), positions);
}

void verify_sort(Run& run, const SortPlan& plan, std::vector<float> keys, std::vector<int> values,
                 const DeviceBuffer<float>& device_keys, const DeviceBuffer<int>& device_values) {
  keys.resize(plan.n);
  values.resize(plan.n);
  std::vector<float> sorted_keys(plan.n);
  device_keys.download(std::span<float>(sorted_keys));
  if (plan.variant == SortVariant::keys) {
    sort(std::span<float>(keys));
    record_comparison(run, sorted_keys, keys, 0.0);
    return;
  }
  sort(std::span<float>(keys), std::span<int>(values));
  record_comparison(run, sorted_keys, keys, 0.0);
  std::vector<int> sorted_values(plan.n);
  device_values.download(std::span<int>(sorted_values));
  const auto [actual, expected] =
      std::mismatch(sorted_values.begin(), sorted_values.end(), values.begin());
  if (actual == sorted_values.end()) return;
  run.max_error = std::numeric_limits<double>::infinity();
  run.note += (run.note.empty() ? "" : "; ") + std::string("value ") + std::to_string(*actual) +
              " at index " + std::to_string(actual - sorted_values.begin()) + ", expected " +
              std::to_string(*expected);
}

}  // namespace

Run run_sort(Jit& jit, const Context& context, const SortPlan& plan, const RunOptions& options) {
  const DeviceSort sorter(context, jit, static_cast<int>(plan.block_size));
  auto [keys, values] = padded_input(plan, options.seed);
  const DeviceBuffer<float> input_keys(context, std::span<const float>(keys));
  const DeviceBuffer<int> input_values(context, std::span<const int>(values));
  DeviceBuffer<float> device_keys(context, plan.n_pow2);
  DeviceBuffer<int> device_values(context, plan.n_pow2);
  DeviceBuffer<int>* values_or_null = plan.variant == SortVariant::pairs ? &device_values : nullptr;

  Run run = describe_launch("sort", "bitonic_sort_shared+merges", plan.defines,
                            plan.launches.front().grid, plan.block_size);
  run.launches = static_cast<int>(plan.launches.size());
  run.median_ms = median_launch_ms(
      context, options.repeats,
      [&] {
        device_keys.memory().copy_from(input_keys.memory(), input_keys.bytes());
        device_values.memory().copy_from(input_values.memory(), input_values.bytes());
      },
      [&] { sorter.sort(device_keys, values_or_null, plan.n_pow2); });
  run.rate = giga_per_second(static_cast<double>(plan.n), run.median_ms) * 1e3;
  run.rate_unit = "Mkey/s";
  if (options.verify)
    verify_sort(run, plan, std::move(keys), std::move(values), device_keys, device_values);
  return run;
}

}  // namespace ptxrt::host
