#include "host/sort.hpp"

#include <algorithm>
#include <climits>
#include <limits>
#include <numeric>

#include "host/kernel_defines.hpp"
#include "host/random_data.hpp"
#include "host/reference.hpp"
#include "host/sizes.hpp"
#include "host/timing.hpp"
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

std::string_view entry_name(BitonicLaunch::Entry entry) {
  switch (entry) {
    case BitonicLaunch::Entry::sort_shared:
      return "bitonic_sort_shared";
    case BitonicLaunch::Entry::merge_global:
      return "bitonic_merge_global";
    case BitonicLaunch::Entry::merge_shared:
      break;
  }
  return "bitonic_merge_shared";
}

std::vector<BitonicLaunch> bitonic_schedule(std::uint64_t n_pow2, unsigned block_size) {
  using Entry = BitonicLaunch::Entry;
  const std::uint64_t chunk = 2ull * block_size;
  const auto chunks = static_cast<unsigned>(std::max<std::uint64_t>(1, n_pow2 / chunk));
  const auto pair_blocks =
      static_cast<unsigned>(std::max<std::uint64_t>(1, (n_pow2 / 2 + block_size - 1) / block_size));
  std::vector<BitonicLaunch> launches{{Entry::sort_shared, chunks, 0, 0}};
  for (std::uint64_t k = 2 * chunk; k <= n_pow2; k *= 2) {
    for (std::uint64_t j = k / 2; j >= chunk; j /= 2)
      launches.push_back(
          {Entry::merge_global, pair_blocks, static_cast<long long>(j), static_cast<long long>(k)});
    launches.push_back({Entry::merge_shared, chunks, 0, static_cast<long long>(k)});
  }
  return launches;
}

SortPlan plan_sort(std::int64_t n, SortVariant variant, std::vector<Define> defines) {
  const std::size_t count = positive_size("sort n", n);
  if (count > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument, "sort n = " + std::to_string(count) + " exceeds " +
                                                 std::to_string(INT_MAX) +
                                                 ": the values are int positions");
  const auto padded = static_cast<std::size_t>(next_power_of_two(count));
  Program program = Program::builtin("bitonic_sort");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const auto block_size = static_cast<unsigned>(define_int(resolved, "BLOCK_SIZE"));
  return {count,
          padded,
          variant,
          std::move(program),
          std::move(resolved),
          block_size,
          bitonic_schedule(padded, block_size)};
}

namespace {

// Keys padded with NaN and values 0..n-1 padded with INT_MAX: the padding sorts last.
std::pair<std::vector<float>, std::vector<int>> padded_input(const SortPlan& plan,
                                                             std::uint64_t seed) {
  std::vector<float> keys = random_floats(plan.n, seed, 0);
  keys.resize(plan.n_pow2, std::numeric_limits<float>::quiet_NaN());
  std::vector<int> values(plan.n_pow2, INT_MAX);
  std::iota(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(plan.n), 0);
  return {std::move(keys), std::move(values)};
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
  const Module module = jit.module(plan.program, compile_options(plan.defines), context);
  auto [keys, values] = padded_input(plan, options.seed);
  const DeviceBuffer<float> input_keys(context, std::span<const float>(keys));
  const DeviceBuffer<int> input_values(context, std::span<const int>(values));
  DeviceBuffer<float> device_keys(context, plan.n_pow2);
  DeviceBuffer<int> device_values(context, plan.n_pow2);
  const bool pairs = plan.variant == SortVariant::pairs;
  const CUdeviceptr values_or_null = pairs ? device_values.address() : 0;
  const auto n_pow2 = static_cast<long long>(plan.n_pow2);

  std::vector<Kernel> kernels;
  for (const BitonicLaunch& launch : plan.launches)
    kernels.push_back(module.kernel(entry_name(launch.entry)));
  Run run = describe_launch("sort", "bitonic_sort_shared+merges", plan.defines,
                            plan.launches.front().grid, plan.block_size);
  run.launches = static_cast<int>(plan.launches.size());
  run.median_ms = median_launch_ms(
      context, options.repeats,
      [&] {
        device_keys.memory().copy_from(input_keys.memory(), input_keys.bytes());
        device_values.memory().copy_from(input_values.memory(), input_values.bytes());
      },
      [&] {
        for (std::size_t i = 0; i < plan.launches.size(); ++i) {
          const BitonicLaunch& launch = plan.launches[i];
          const LaunchConfig config{.grid = launch.grid, .block = plan.block_size};
          const CUdeviceptr keys_address = device_keys.address();
          switch (launch.entry) {
            case BitonicLaunch::Entry::sort_shared:
              kernels[i].launch(config, keys_address, values_or_null, n_pow2);
              break;
            case BitonicLaunch::Entry::merge_global:
              kernels[i].launch(config, keys_address, values_or_null, n_pow2, launch.j, launch.k);
              break;
            case BitonicLaunch::Entry::merge_shared:
              kernels[i].launch(config, keys_address, values_or_null, n_pow2, launch.k);
              break;
          }
        }
      });
  run.rate = giga_per_second(static_cast<double>(plan.n), run.median_ms) * 1e3;
  run.rate_unit = "Mkey/s";
  if (options.verify)
    verify_sort(run, plan, std::move(keys), std::move(values), device_keys, device_values);
  return run;
}

}  // namespace ptxrt::host
