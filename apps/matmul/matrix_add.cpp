#include "apps/matmul/matrix_add.hpp"

#include "apps/classic/elementwise_add.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"

namespace ptxrt::apps {

MatrixAddPlan plan_matrix_add(std::int64_t rows, std::int64_t cols, std::vector<Define> defines) {
  const int checked_rows = positive_int("matadd rows", rows);
  const int checked_cols = positive_int("matadd cols", cols);
  const std::size_t elements = checked_product(
      "matadd rows*cols", {static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)},
      3 * sizeof(float));
  Program program = apps::builtin_program("matrix_add");
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
  const Kernel kernel =
      jit.kernel(plan.program, compile_options(plan.defines), context, "matrix_add");
  Run run = describe_launch("matadd", "matrix_add", plan.defines, plan.grid, plan.block);
  const LaunchConfig config{.grid = plan.grid, .block = plan.block};
  const auto rows = static_cast<std::size_t>(plan.rows);
  const auto cols = static_cast<std::size_t>(plan.cols);
  time_elementwise_add(
      run, context, options, plan.elements,
      [&](const DeviceBuffer<float>& a, const DeviceBuffer<float>& b, DeviceBuffer<float>& c) {
        kernel.launch(config, a, b, c, plan.rows, plan.cols);
      },
      [&](std::span<const float> a, std::span<const float> b) {
        return matrix_add(a, b, rows, cols);
      });
  return run;
}

}  // namespace ptxrt::apps
