#include "apps/matmul/sgemm_run.hpp"

#include <cstdio>
#include <utility>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/timing.hpp"
#include "apps/matmul/matmul.hpp"
#include "apps/matmul/product_check.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {

// The config to run and, for tuned, the database's answer.
std::pair<SgemmConfig, std::optional<TunedChoice>> choose(const DeviceProperties& device,
                                                          const SgemmRunPlan& plan) {
  if (plan.tuned) {
    TunedChoice choice = sgemm_tuned_choice(device, plan.m, plan.n, plan.k, *plan.tuned);
    return {sgemm_config_with(SgemmConfig{}, choice.config.defines()), std::move(choice)};
  }
  return {sgemm_config_with(sgemm_heuristic_config(device, plan.m, plan.n, plan.k), plan.defines),
          std::nullopt};
}

std::string chosen_by(const SgemmRunPlan& plan, const std::optional<TunedChoice>& tuned) {
  if (tuned && tuned->level == ChoiceLevel::declared_default)
    return "the shape heuristic: the database has no sgemm tune for this device or compute "
           "capability";
  if (tuned) return "tuned (" + std::string(to_string(tuned->level)) + ")";
  return plan.defines.empty() ? "the shape heuristic" : "the shape heuristic with -D";
}

// Compares the output with the most complete reference there is time for.
void verify(Run& run, const Context& context, const MatmulOperands& operands,
            const std::vector<float>& c) {
  const int m = static_cast<int>(operands.m), n = static_cast<int>(operands.n),
            k = static_cast<int>(operands.k);
  if (static_cast<double>(m) * n * static_cast<double>(k) <= full_cpu_reference_limit) {
    record_comparison(run, c, matmul(operands.a, operands.b, operands.m, operands.n, operands.k),
                      matmul_tolerance);
    return;
  }
  const ProductSamples samples = sample_product(operands.a, operands.b, m, n, k);
  if (const auto cublas = cublas_product(find_cublas(), context, operands.device_a,
                                         operands.device_b, m, n, k, samples);
      cublas && cublas->sampled_error <= matmul_tolerance) {
    record_comparison(run, c, cublas->c, matmul_tolerance);
    char measure[128];
    std::snprintf(measure, sizeof measure,
                  "max |gpu - cuBLAS| / max |cuBLAS| (cuBLAS within %.2g of fp64 at %zu elements)",
                  cublas->sampled_error, samples.indices.size());
    run.error_measure = measure;
    return;
  }
  std::vector<float> sampled;
  for (const std::size_t index : samples.indices) sampled.push_back(c[index]);
  record_comparison(run, sampled, samples.expected, matmul_tolerance);
  run.error_measure = "max |gpu - fp64| / max |fp64| at " + std::to_string(samples.indices.size()) +
                      " elements (no usable cuBLAS)";
}

}  // namespace

SgemmRunPlan plan_sgemm_run(std::int64_t m, std::int64_t n, std::int64_t k,
                            std::vector<Define> defines, std::optional<TuningDatabase> tuned) {
  const ProductSizes sizes = checked_product_sizes("sgemm", m, n, k);
  if (tuned && !defines.empty())
    throw Error(ErrorKind::invalid_argument, "--tuned picks the defines itself: drop -D");
  resolve_defines(apps::builtin_program("sgemm"), defines);
  if (tuned) tuned->records();
  return {sizes.m, sizes.n, sizes.k, std::move(defines), std::move(tuned)};
}

SgemmRun run_sgemm(Jit& jit, const Context& context, const SgemmRunPlan& plan,
                   const RunOptions& options) {
  auto [config, tuned] = choose(context.device().properties(), plan);
  MatmulOperands operands = make_matmul_operands(context, plan.m, plan.n, plan.k, options.seed);
  const DeviceBuffer<float>& device_a = operands.device_a;
  const DeviceBuffer<float>& device_b = operands.device_b;
  DeviceBuffer<float>& device_c = operands.device_c;
  SgemmWorkspace workspace(context);
  const SgemmOptions given{
      .choice = SgemmChoice::given, .config = config, .workspace = &workspace, .jit = &jit};

  const SgemmPath path = sgemm_path(context.device().properties(), config, plan.m, plan.n, plan.k,
                                    device_a.address(), device_b.address(), device_c.address());
  const SgemmLaunch launch = sgemm_launch(config, plan.m, plan.n, path);
  Run run = describe_launch("sgemm", launch.entry, config.defines(), launch.launch.grid,
                            launch.launch.block);
  run.launches = 1 + (config.split_k > 1 ? 1 : 0) + (path == SgemmPath::padded_b ? 1 : 0);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { device_c.memory().fill_words(poison_word); },
      [&] { sgemm(context, plan.m, plan.n, plan.k, device_a, device_b, device_c, given); });
  run.rate = giga_per_second(2.0 * plan.m * plan.n * static_cast<double>(plan.k), run.median_ms);
  run.rate_unit = "GFLOP/s";
  run.note = config.describe() + ", chosen by " + chosen_by(plan, tuned);
  if (options.verify) verify(run, context, operands, device_c.download());
  return {std::move(run), config, std::move(tuned)};
}

}  // namespace ptxrt::apps
