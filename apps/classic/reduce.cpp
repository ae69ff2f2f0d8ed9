#include "apps/classic/reduce.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

ReduceVariant parse_reduce_variant(std::string_view name) {
  if (name == "sum") return ReduceVariant::sum;
  if (name == "argmin") return ReduceVariant::argmin;
  if (name == "cooperative") return ReduceVariant::cooperative;
  throw Error(ErrorKind::invalid_argument, "reduce variant '" + std::string(name) +
                                               "' is unknown: expected sum, argmin or cooperative");
}

std::string_view to_string(ReduceVariant variant) {
  switch (variant) {
    case ReduceVariant::sum:
      return "sum";
    case ReduceVariant::argmin:
      return "argmin";
    case ReduceVariant::cooperative:
      return "cooperative";
  }
  return "sum";
}

std::vector<ReducePass> reduction_passes(std::uint64_t n, unsigned block_size, unsigned max_grid) {
  std::vector<ReducePass> passes;
  std::uint64_t count = n;
  do {
    const std::uint64_t blocks = std::max<std::uint64_t>(1, (count + block_size - 1) / block_size);
    const auto grid = static_cast<unsigned>(std::min<std::uint64_t>(blocks, max_grid));
    passes.push_back({count, grid});
    count = grid;
  } while (count > 1);
  return passes;
}

double sum_error_bound(const std::vector<ReducePass>& passes, unsigned block_size) {
  double units = 1.0;
  for (const ReducePass& pass : passes) {
    const double threads = static_cast<double>(pass.grid) * block_size;
    units += std::ceil(static_cast<double>(pass.count) / threads) + std::log2(threads);
  }
  return units * std::ldexp(1.0, -24);
}

ReducePlan plan_reduce(std::int64_t n, ReduceVariant variant, std::vector<Define> defines) {
  const std::size_t count = positive_size("reduce n", n);
  checked_product("reduce n", {count}, sizeof(float));
  Program program = apps::builtin_program("reduce");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const auto block_size = static_cast<unsigned>(define_int(resolved, "BLOCK_SIZE"));
  return {count,
          variant,
          std::move(program),
          std::move(resolved),
          block_size,
          reduction_passes(count, block_size)};
}

namespace {

// The sum's verdict: against the double sum relative to sum|x|, within the bound of `passes`.
void record_sum(Run& run, float result, const std::vector<float>& in,
                const std::vector<ReducePass>& passes, unsigned block_size) {
  const double expected = sum(in);
  double magnitude = 0.0;
  for (float value : in) magnitude += std::fabs(static_cast<double>(value));
  run.verified = true;
  run.max_error = std::fabs(static_cast<double>(result) - expected) / magnitude;
  if (std::isnan(run.max_error)) run.max_error = std::numeric_limits<double>::infinity();
  run.tolerance = sum_error_bound(passes, block_size);
  run.error_measure = "|gpu - cpu| / sum|x|, bound of the kernel's summation order";
  char note[128];
  std::snprintf(note, sizeof note, "sum %.9g (cpu %.12g)", static_cast<double>(result), expected);
  run.note = note;
}

Run run_sum(const Kernel& kernel, const Context& context, const ReducePlan& plan,
            const std::vector<float>& in, Run run, const RunOptions& options) {
  const DeviceBuffer<float> device_in(context, std::span<const float>(in));
  std::vector<DeviceBuffer<float>> partials;
  for (const ReducePass& pass : plan.passes) partials.emplace_back(context, pass.grid);
  run.median_ms = median_launch_ms(
      context, options.repeats,
      [&] {
        for (auto& partial : partials) partial.memory().fill_words(poison_word);
      },
      [&] {
        for (std::size_t p = 0; p < plan.passes.size(); ++p) {
          const auto count = static_cast<long long>(plan.passes[p].count);
          const LaunchConfig config{.grid = plan.passes[p].grid, .block = plan.block_size};
          if (p == 0)
            kernel.launch(config, device_in, partials[p], count);
          else
            kernel.launch(config, partials[p - 1], partials[p], count);
        }
      });
  if (!options.verify) return run;
  float result = 0.0f;
  partials.back().download(std::span<float>(&result, 1));
  record_sum(run, result, in, plan.passes, plan.block_size);
  return run;
}

// One cooperative launch of every block that can be resident: a grid-wide barrier between the
// partials and their fold.
Run run_cooperative(const Kernel& kernel, const Context& context, const ReducePlan& plan,
                    const std::vector<float>& in, Run run, const RunOptions& options) {
  const auto per_sm =
      static_cast<unsigned>(kernel.max_active_blocks_per_sm(static_cast<int>(plan.block_size)));
  const unsigned grid =
      grid_stride_blocks(plan.n, plan.block_size, context.device().properties().sm_count, per_sm);
  const std::vector<ReducePass> passes{{plan.n, grid}, {grid, 1}};
  run.grid = grid;
  const DeviceBuffer<float> device_in(context, std::span<const float>(in));
  DeviceBuffer<float> partial(context, grid);
  DeviceBuffer<float> out(context, 1);
  const auto count = static_cast<long long>(plan.n);
  run.median_ms = median_launch_ms(
      context, options.repeats,
      [&] {
        partial.memory().fill_words(poison_word);
        out.memory().fill_words(poison_word);
      },
      [&] {
        kernel.launch({.grid = grid, .block = plan.block_size, .cooperative = true}, device_in,
                      partial, out, count);
      });
  if (!options.verify) return run;
  float result = 0.0f;
  out.download(std::span<float>(&result, 1));
  record_sum(run, result, in, passes, plan.block_size);
  return run;
}

Run run_argmin(const Kernel& kernel, const Context& context, const ReducePlan& plan,
               const std::vector<float>& in, Run run, const RunOptions& options) {
  const DeviceBuffer<float> device_in(context, std::span<const float>(in));
  std::vector<DeviceBuffer<float>> values;
  std::vector<DeviceBuffer<long long>> indices;
  for (const ReducePass& pass : plan.passes) {
    values.emplace_back(context, pass.grid);
    indices.emplace_back(context, pass.grid);
  }
  const CUdeviceptr no_indices = 0;  // pass 1 indexes the input itself
  run.median_ms = median_launch_ms(
      context, options.repeats,
      [&] {
        for (auto& partial : values) partial.memory().fill_words(poison_word);
        for (auto& partial : indices) partial.fill_bytes(0xff);
      },
      [&] {
        for (std::size_t p = 0; p < plan.passes.size(); ++p) {
          const auto count = static_cast<long long>(plan.passes[p].count);
          const LaunchConfig config{.grid = plan.passes[p].grid, .block = plan.block_size};
          if (p == 0)
            kernel.launch(config, device_in, no_indices, values[p], indices[p], count);
          else
            kernel.launch(config, values[p - 1], indices[p - 1], values[p], indices[p], count);
        }
      });
  if (!options.verify) return run;
  float value = 0.0f;
  long long index = 0;
  values.back().download(std::span<float>(&value, 1));
  indices.back().download(std::span<long long>(&index, 1));
  const ArgMin expected = argmin(in);
  const bool exact =
      std::bit_cast<std::uint32_t>(value) == std::bit_cast<std::uint32_t>(expected.value) &&
      index == expected.index;
  run.verified = true;
  run.max_error = exact ? 0.0 : std::numeric_limits<double>::infinity();
  run.tolerance = 0.0;
  run.error_measure = "exact (value bits and index)";
  char note[128];
  std::snprintf(note, sizeof note, "min %.9g at %lld (cpu %.9g at %lld)",
                static_cast<double>(value), index, static_cast<double>(expected.value),
                static_cast<long long>(expected.index));
  run.note = note;
  return run;
}

}  // namespace

Run run_reduce(Jit& jit, const Context& context, const ReducePlan& plan,
               const RunOptions& options) {
  const bool cooperative = plan.variant == ReduceVariant::cooperative;
  const std::string entry =
      cooperative ? "reduce_sum_cooperative" : "reduce_" + std::string(to_string(plan.variant));
  const Kernel kernel = jit.kernel(plan.program, compile_options(plan.defines), context, entry);
  Run run =
      describe_launch("reduce", entry, plan.defines, plan.passes.front().grid, plan.block_size);
  run.launches = cooperative ? 1 : static_cast<int>(plan.passes.size());
  const std::vector<float> in = random_floats(plan.n, options.seed, 0);
  switch (plan.variant) {
    case ReduceVariant::sum:
      run = run_sum(kernel, context, plan, in, std::move(run), options);
      break;
    case ReduceVariant::argmin:
      run = run_argmin(kernel, context, plan, in, std::move(run), options);
      break;
    case ReduceVariant::cooperative:
      run = run_cooperative(kernel, context, plan, in, std::move(run), options);
      break;
  }
  run.rate = giga_per_second(sizeof(float) * static_cast<double>(plan.n), run.median_ms);
  run.rate_unit = "GB/s";
  return run;
}

}  // namespace ptxrt::apps
