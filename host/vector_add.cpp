#include "host/vector_add.hpp"

#include "host/kernel_defines.hpp"
#include "host/random_data.hpp"
#include "host/reference.hpp"
#include "host/sizes.hpp"
#include "host/timing.hpp"

namespace ptxrt::host {

namespace {
constexpr unsigned block_threads = 256;
// Each thread moves a float4 per iteration on the aligned path.
constexpr unsigned elements_per_thread = 4;
}  // namespace

VectorAddPlan plan_vector_add(std::int64_t n, std::vector<Define> defines) {
  const std::size_t count = positive_size("vecadd n", n);
  checked_product("vecadd n", {count}, 3 * sizeof(float));
  Program program = Program::builtin("vector_add");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  return {count, std::move(program), std::move(resolved)};
}

Run run_vector_add(Jit& jit, const Context& context, const VectorAddPlan& plan,
                   const RunOptions& options) {
  const std::vector<float> a = random_floats(plan.n, options.seed, 0);
  const std::vector<float> b = random_floats(plan.n, options.seed, 1);
  DeviceBuffer<float> device_a(context, std::span<const float>(a));
  DeviceBuffer<float> device_b(context, std::span<const float>(b));
  DeviceBuffer<float> device_c(context, plan.n);
  const Kernel kernel =
      jit.kernel(plan.program, compile_options(plan.defines), context, "vector_add");

  const Dim3 grid = grid_stride_blocks(plan.n, block_threads * elements_per_thread,
                                       context.device().properties().sm_count);
  Run run = describe_launch("vecadd", "vector_add", plan.defines, grid, block_threads);
  const auto n = static_cast<long long>(plan.n);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { device_c.memory().fill_words(poison_word); },
      [&] { kernel.launch({.grid = grid, .block = run.block}, device_a, device_b, device_c, n); });
  run.rate = giga_per_second(3.0 * sizeof(float) * static_cast<double>(plan.n), run.median_ms);
  run.rate_unit = "GB/s";
  if (options.verify) record_comparison(run, device_c.download(), vector_add(a, b), 0.0);
  return run;
}

}  // namespace ptxrt::host
