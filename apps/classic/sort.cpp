#include "apps/classic/sort.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <limits>
#include <numeric>
#include <utility>

#include "apps/classic/radix_sort.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {

constexpr std::array<std::pair<SortVariant, std::string_view>, 4> variant_names{{
    {SortVariant::bitonic, "bitonic"},
    {SortVariant::bitonic_pairs, "bitonic-pairs"},
    {SortVariant::radix, "radix"},
    {SortVariant::radix_pairs, "radix-pairs"},
}};

constexpr int radix_key_bits = 32;

}  // namespace

SortVariant parse_sort_variant(std::string_view name) {
  for (const auto& [variant, variant_name] : variant_names)
    if (variant_name == name) return variant;
  throw Error(ErrorKind::invalid_argument,
              "sort variant '" + std::string(name) +
                  "' is unknown: expected bitonic, bitonic-pairs, radix or radix-pairs");
}

std::string_view to_string(SortVariant variant) {
  for (const auto& [value, name] : variant_names)
    if (value == variant) return name;
  return "unknown";
}

bool is_radix(SortVariant variant) {
  return variant == SortVariant::radix || variant == SortVariant::radix_pairs;
}

bool carries_values(SortVariant variant) {
  return variant == SortVariant::bitonic_pairs || variant == SortVariant::radix_pairs;
}

SortPlan plan_sort(std::int64_t n, SortVariant variant, std::vector<Define> defines) {
  const std::size_t count = positive_size("sort n", n);
  if (count > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument, "sort n = " + std::to_string(count) + " exceeds " +
                                                 std::to_string(INT_MAX) +
                                                 ": the values are int positions");
  if (is_radix(variant) && count > RadixSort::max_keys)
    throw Error(ErrorKind::invalid_argument,
                "sort n = " + std::to_string(count) + " exceeds " +
                    std::to_string(RadixSort::max_keys) +
                    " for the radix sort (its look-back counts in 30 bits)");
  Program program = apps::builtin_program(is_radix(variant) ? "radix_sort" : "bitonic_sort");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const auto block_size = static_cast<unsigned>(define_int(resolved, "BLOCK_SIZE"));
  SortPlan plan{.n = count,
                .variant = variant,
                .program = std::move(program),
                .defines = std::move(resolved),
                .block_size = block_size};
  if (is_radix(variant)) {
    plan.launch_count = RadixSort::launches_for(radix_key_bits);
    return plan;
  }
  plan.n_pow2 = static_cast<std::size_t>(next_power_of_two(count));
  plan.launches = bitonic_plan(plan.n_pow2, static_cast<int>(plan.block_size));
  plan.launch_count = static_cast<int>(plan.launches.size());
  return plan;
}

namespace {

std::vector<int> positions(std::size_t n) {
  std::vector<int> values(n);
  std::iota(values.begin(), values.end(), 0);
  return values;
}

// Keys (and values, for pairs) against the CPU's, exactly.
void verify_sort(Run& run, const SortPlan& plan, std::vector<float> keys, std::vector<int> values,
                 std::span<const float> sorted_keys, std::span<const int> sorted_values) {
  keys.resize(plan.n);
  values.resize(plan.n);
  const bool pairs = carries_values(plan.variant);
  if (is_radix(plan.variant))
    radix_order_sort(keys, pairs ? std::span<int>(values) : std::span<int>());
  else if (pairs)
    sort(std::span<float>(keys), std::span<int>(values));
  else
    sort(std::span<float>(keys));
  record_comparison(run, sorted_keys.first(plan.n), keys, 0.0);
  if (!pairs) return;
  const auto [actual, expected] = std::mismatch(
      sorted_values.begin(), sorted_values.begin() + static_cast<long>(plan.n), values.begin());
  if (actual == sorted_values.begin() + static_cast<long>(plan.n)) return;
  run.max_error = std::numeric_limits<double>::infinity();
  run.note += (run.note.empty() ? "" : "; ") + std::string("value ") + std::to_string(*actual) +
              " at index " + std::to_string(actual - sorted_values.begin()) + ", expected " +
              std::to_string(*expected);
}

Run run_bitonic(Jit& jit, const Context& context, const SortPlan& plan, const RunOptions& options) {
  const DeviceSort sorter(context, jit, static_cast<int>(plan.block_size));
  auto [keys, values] = pad_for_sort(random_floats(plan.n, options.seed, 0), positions(plan.n));
  const DeviceBuffer<float> input_keys(context, std::span<const float>(keys));
  const DeviceBuffer<int> input_values(context, std::span<const int>(values));
  DeviceBuffer<float> device_keys(context, plan.n_pow2);
  DeviceBuffer<int> device_values(context, plan.n_pow2);
  DeviceBuffer<int>* values_or_null = carries_values(plan.variant) ? &device_values : nullptr;

  Run run = describe_launch("sort", "bitonic_sort_shared+merges", plan.defines,
                            plan.launches.front().grid, plan.block_size);
  run.launches = plan.launch_count;
  run.median_ms = median_launch_ms(
      context, options.repeats,
      [&] {
        device_keys.memory().copy_from(input_keys.memory(), input_keys.bytes());
        device_values.memory().copy_from(input_values.memory(), input_values.bytes());
      },
      [&] { sorter.sort(device_keys, values_or_null, plan.n_pow2); });
  if (options.verify)
    verify_sort(run, plan, std::move(keys), std::move(values), device_keys.download(),
                device_values.download());
  return run;
}

Run run_radix(Jit& jit, const Context& context, const SortPlan& plan, const RunOptions& options) {
  RadixSort sorter(context, jit, plan.n, plan.defines);
  std::vector<float> keys = random_floats(plan.n, options.seed, 0);
  std::vector<int> values = positions(plan.n);
  const DeviceBuffer<float> input_keys(context, std::span<const float>(keys));
  const DeviceBuffer<int> input_values(context, std::span<const int>(values));
  std::array<DeviceBuffer<float>, 2> device_keys{DeviceBuffer<float>(context, plan.n),
                                                 DeviceBuffer<float>(context, plan.n)};
  std::array<DeviceBuffer<int>, 2> device_values{DeviceBuffer<int>(context, plan.n),
                                                 DeviceBuffer<int>(context, plan.n)};
  const bool pairs = carries_values(plan.variant);
  RadixBuffers buffers{{device_keys[0].address(), device_keys[1].address()}, {}};
  if (pairs) buffers.values = {device_values[0].address(), device_values[1].address()};

  const std::size_t tile =
      plan.block_size * static_cast<std::size_t>(define_int(plan.defines, "ITEMS"));
  Run run = describe_launch("sort", "radix_histogram+radix_onesweep", plan.defines,
                            blocks_for(plan.n, static_cast<unsigned>(tile)), plan.block_size);
  run.launches = plan.launch_count;
  int result = 0;
  run.median_ms = median_launch_ms(
      context, options.repeats,
      [&] {
        // Every pass must write all of its output: poison both arrays, then load the input.
        for (int k = 0; k < 2; ++k) {
          device_keys[k].memory().fill_words(poison_word);
          device_values[k].memory().fill_words(poison_word);
        }
        device_keys[0].memory().copy_from(input_keys.memory(), input_keys.bytes());
        device_values[0].memory().copy_from(input_values.memory(), input_values.bytes());
      },
      [&] { result = sorter.sort(buffers, plan.n, RadixKeys::floating, radix_key_bits); });
  if (options.verify)
    verify_sort(run, plan, std::move(keys), std::move(values), device_keys[result].download(),
                device_values[result].download());
  return run;
}

}  // namespace

Run run_sort(Jit& jit, const Context& context, const SortPlan& plan, const RunOptions& options) {
  Run run = is_radix(plan.variant) ? run_radix(jit, context, plan, options)
                                   : run_bitonic(jit, context, plan, options);
  run.rate = giga_per_second(static_cast<double>(plan.n), run.median_ms) * 1e3;
  run.rate_unit = "Mkey/s";
  return run;
}

}  // namespace ptxrt::apps
