#include "apps/classic/transpose.hpp"

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

TransposeVariant parse_transpose_variant(std::string_view name) {
  if (name == "naive") return TransposeVariant::naive;
  if (name == "shared") return TransposeVariant::shared;
  if (name == "padded") return TransposeVariant::padded;
  throw Error(ErrorKind::invalid_argument, "transpose variant '" + std::string(name) +
                                               "' is unknown: expected naive, shared or padded");
}

std::string_view to_string(TransposeVariant variant) {
  switch (variant) {
    case TransposeVariant::naive:
      return "naive";
    case TransposeVariant::shared:
      return "shared";
    case TransposeVariant::padded:
      break;
  }
  return "padded";
}

TransposePlan plan_transpose(std::int64_t rows, std::int64_t cols, TransposeVariant variant,
                             std::vector<Define> defines) {
  const int checked_rows = positive_int("transpose rows", rows);
  const int checked_cols = positive_int("transpose cols", cols);
  const std::size_t elements = checked_product(
      "transpose rows*cols", {static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)},
      sizeof(float));
  Program program = apps::builtin_program("transpose");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const int tile = define_int(resolved, "TILE_DIM");
  const int block_rows = define_int(resolved, "BLOCK_ROWS");
  if (block_rows > tile || tile % block_rows != 0)
    throw Error(ErrorKind::invalid_argument,
                "BLOCK_ROWS=" + std::to_string(block_rows) + " must divide TILE_DIM=" +
                    std::to_string(tile) + " (each thread moves TILE_DIM/BLOCK_ROWS elements)");
  const auto tile_width = static_cast<unsigned>(tile);
  const Dim3 grid{blocks_for(static_cast<unsigned>(cols), tile_width),
                  blocks_for(static_cast<unsigned>(rows), tile_width)};
  return {checked_rows,
          checked_cols,
          elements,
          variant,
          std::move(program),
          "transpose_" + std::string(to_string(variant)),
          std::move(resolved),
          grid,
          Dim3{tile_width, static_cast<unsigned>(block_rows)}};
}

Run run_transpose(Jit& jit, const Context& context, const TransposePlan& plan,
                  const RunOptions& options) {
  const std::vector<float> in = random_floats(plan.elements, options.seed, 0);
  const DeviceBuffer<float> device_in(context, std::span<const float>(in));
  DeviceBuffer<float> device_out(context, plan.elements);
  const Kernel kernel =
      jit.kernel(plan.program, compile_options(plan.defines), context, plan.entry);

  Run run = describe_launch("transpose", plan.entry, plan.defines, plan.grid, plan.block);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { device_out.memory().fill_words(poison_word); },
      [&] {
        kernel.launch({.grid = plan.grid, .block = plan.block}, device_in, device_out, plan.rows,
                      plan.cols);
      });
  run.rate =
      giga_per_second(2.0 * sizeof(float) * static_cast<double>(plan.elements), run.median_ms);
  run.rate_unit = "GB/s";
  if (options.verify)
    record_comparison(
        run, device_out.download(),
        transpose(in, static_cast<std::size_t>(plan.rows), static_cast<std::size_t>(plan.cols)),
        0.0);
  return run;
}

}  // namespace ptxrt::apps
