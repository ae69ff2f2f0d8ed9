#include "host/matrix_add.hpp"

#include "host/kernel_defines.hpp"
#include "host/random_data.hpp"
#include "host/reference.hpp"
#include "host/sizes.hpp"
#include "host/timing.hpp"

namespace ptxrt::host {

MatrixAddPlan plan_matrix_add(std::int64_t rows, std::int64_t cols, std::vector<Define> defines) {
  const int checked_rows = positive_int("matadd rows", rows);
  const int checked_cols = positive_int("matadd cols", cols);
  const std::size_t elements = checked_product(
      "matadd rows*cols", {static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)},
      3 * sizeof(float));
  Program program = Program::builtin("matrix_add");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const auto block_x = static_cast<unsigned>(define_int(resolved, "BLOCK_X"));
  const auto block_y = static_cast<unsigned>(define_int(resolved, "BLOCK_Y"));
  const Dim3 grid{blocks_for(static_cast<unsigned>(cols), block_x),
                  blocks_for(static_cast<unsigned>(rows), block_y)};
  return {checked_rows, checked_cols,          elements, std::move(program), std::move(resolved),
          grid,         Dim3{block_x, block_y}};
}

Run run_matrix_add(Jit& jit, const Context& context, const MatrixAddPlan& plan,
                   const RunOptions& options) {
  const std::vector<float> a = random_floats(plan.elements, options.seed, 0);
  const std::vector<float> b = random_floats(plan.elements, options.seed, 1);
  DeviceBuffer<float> device_a(context, std::span<const float>(a));
  DeviceBuffer<float> device_b(context, std::span<const float>(b));
  DeviceBuffer<float> device_c(context, plan.elements);
  const Kernel kernel =
      jit.kernel(plan.program, compile_options(plan.defines), context, "matrix_add");

  Run run = describe_launch("matadd", "matrix_add", plan.defines, plan.grid, plan.block);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { device_c.memory().fill_words(poison_word); },
      [&] {
        kernel.launch({.grid = plan.grid, .block = plan.block}, device_a, device_b, device_c,
                      plan.rows, plan.cols);
      });
  run.rate =
      giga_per_second(3.0 * sizeof(float) * static_cast<double>(plan.elements), run.median_ms);
  run.rate_unit = "GB/s";
  if (options.verify)
    record_comparison(
        run, device_c.download(),
        matrix_add(a, b, static_cast<std::size_t>(plan.rows), static_cast<std::size_t>(plan.cols)),
        0.0);
  return run;
}

}  // namespace ptxrt::host
