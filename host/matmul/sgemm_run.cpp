#include "host/matmul/sgemm_run.hpp"

#include "host/common/kernel_defines.hpp"
#include "host/common/reference.hpp"
#include "host/common/timing.hpp"
#include "host/matmul/matmul.hpp"
#include "host/matmul/sgemm.hpp"

namespace ptxrt::host {

SgemmRunPlan plan_sgemm_run(std::int64_t m, std::int64_t n, std::int64_t k,
                            std::vector<Define> defines) {
  // The same checks as the tiled matmul's: sizes, and the defines against sgemm.cu's manifest.
  const MatmulPlan sizes = plan_matmul(m, n, k, MatmulVariant::tiled);
  resolve_defines(Program::builtin("sgemm"), defines);
  return {sizes.m, sizes.n, sizes.k, std::move(defines)};
}

Run run_sgemm(Jit& jit, const Context& context, const SgemmRunPlan& plan,
              const RunOptions& options) {
  const SgemmConfig config =
      sgemm_config_with(default_sgemm_config(context.device().properties()), plan.defines);
  MatmulOperands operands = make_matmul_operands(context, plan.m, plan.n, plan.k, options.seed);
  const DeviceBuffer<float>& device_a = operands.device_a;
  const DeviceBuffer<float>& device_b = operands.device_b;
  DeviceBuffer<float>& device_c = operands.device_c;
  const bool aligned = sgemm_alignment_allows_vectors(config, device_a.address(),
                                                      device_b.address(), device_c.address(),
                                                      plan.n, plan.k);
  const SgemmLaunch launch = sgemm_launch(config, plan.m, plan.n, aligned);
  Run run = describe_launch("sgemm", launch.entry, config.defines(), launch.launch.grid,
                            launch.launch.block);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { device_c.memory().fill_words(poison_word); },
      [&] {
        sgemm(jit, context, device_a, device_b, device_c, plan.m, plan.n, plan.k, config);
      });
  run.rate = giga_per_second(2.0 * plan.m * plan.n * static_cast<double>(plan.k), run.median_ms);
  run.rate_unit = "GFLOP/s";
  if (options.verify)
    record_comparison(run, device_c.download(),
                      matmul(operands.a, operands.b, operands.m, operands.n, operands.k),
                      matmul_tolerance);
  return run;
}

}  // namespace ptxrt::host
