#include "apps/classic/vector_add.hpp"

#include "apps/classic/elementwise_add.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"

namespace ptxrt::apps {

namespace {
constexpr unsigned block_threads = 256;
// Each thread moves a float4 per iteration on the aligned path.
constexpr unsigned elements_per_thread = 4;
}  // namespace

VectorAddPlan plan_vector_add(std::int64_t n, std::vector<Define> defines) {
  const std::size_t count = positive_size("vecadd n", n);
  checked_product("vecadd n", {count}, 3 * sizeof(float));
  Program program = apps::builtin_program("vector_add");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  return {count, std::move(program), std::move(resolved)};
}

Run run_vector_add(Jit& jit, const Context& context, const VectorAddPlan& plan,
                   const RunOptions& options) {
  const Kernel kernel =
      jit.kernel(plan.program, compile_options(plan.defines), context, "vector_add");
  const Dim3 grid = grid_stride_blocks(plan.n, block_threads * elements_per_thread,
                                       context.device().properties().sm_count);
  Run run = describe_launch("vecadd", "vector_add", plan.defines, grid, block_threads);
  const LaunchConfig config{.grid = grid, .block = run.block};
  const auto n = static_cast<long long>(plan.n);
  time_elementwise_add(
      run, context, options, plan.n,
      [&](const DeviceBuffer<float>& a, const DeviceBuffer<float>& b, DeviceBuffer<float>& c) {
        kernel.launch(config, a, b, c, n);
      },
      [](std::span<const float> a, std::span<const float> b) { return vector_add(a, b); });
  return run;
}

}  // namespace ptxrt::apps
