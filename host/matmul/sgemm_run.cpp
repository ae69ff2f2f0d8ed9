#include "host/matmul/sgemm_run.hpp"

#include <cstdio>
#include <utility>

#include "host/common/kernel_defines.hpp"
#include "host/common/random_data.hpp"
#include "host/common/reference.hpp"
#include "host/common/timing.hpp"
#include "host/matmul/matmul.hpp"
#include "host/matmul/product_check.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/sgemm_heuristic.hpp"
#include "ptxrt/sgemm_tuning.hpp"

namespace ptxrt::host {

namespace {

// The config to run and, for tuned, the database's answer.
std::pair<SgemmConfig, std::optional<TunedChoice>> choose(const DeviceProperties& device,
                                                          const SgemmRunPlan& plan) {
  if (plan.tuned) {
    TunedChoice choice =
        sgemm_tuned_choice(device, plan.m, plan.n, plan.k, TuningDatabase(plan.database));
    return {sgemm_config_with(SgemmConfig{}, choice.config.defines()), std::move(choice)};
  }
  return {sgemm_config_with(sgemm_heuristic_config(device, plan.m, plan.n, plan.k), plan.defines),
          std::nullopt};
}

std::string chosen_by(const SgemmRunPlan& plan, const std::optional<TunedChoice>& tuned) {
  if (tuned) return "tuned (" + std::string(to_string(tuned->level)) + ")";
  return plan.defines.empty() ? "the shape heuristic" : "the shape heuristic with -D";
}

// Compares the output with the most complete reference there is time for.
void verify(Run& run, const Context& context, const std::vector<float>& a,
            const std::vector<float>& b, const DeviceBuffer<float>& device_a,
            const DeviceBuffer<float>& device_b, const std::vector<float>& c,
            const SgemmRunPlan& plan) {
  const auto m = static_cast<std::size_t>(plan.m), n = static_cast<std::size_t>(plan.n),
             k = static_cast<std::size_t>(plan.k);
  if (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <=
      full_cpu_reference_limit) {
    record_comparison(run, c, matmul(a, b, m, n, k), matmul_tolerance);
    return;
  }
  const ProductSamples samples = sample_product(a, b, plan.m, plan.n, plan.k);
  if (const auto cublas = cublas_product(find_cublas(), context, device_a, device_b, plan.m, plan.n,
                                         plan.k, samples);
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
                            std::vector<Define> defines, bool tuned,
                            std::filesystem::path database) {
  const ProductSizes sizes = checked_product_sizes("sgemm", m, n, k);
  if (tuned && !defines.empty())
    throw Error(ErrorKind::invalid_argument, "--tuned picks the defines itself: drop -D");
  resolve_defines(Program::builtin("sgemm"), defines);
  if (tuned) TuningDatabase(database).records();
  return {sizes.m, sizes.n, sizes.k, std::move(defines), tuned, std::move(database)};
}

SgemmRun run_sgemm(Jit& jit, const Context& context, const SgemmRunPlan& plan,
                   const RunOptions& options) {
  auto [config, tuned] = choose(context.device().properties(), plan);
  const auto m = static_cast<std::size_t>(plan.m), n = static_cast<std::size_t>(plan.n),
             k = static_cast<std::size_t>(plan.k);
  const std::vector<float> a = random_floats(m * k, options.seed, 0);
  const std::vector<float> b = random_floats(k * n, options.seed, 1);
  const DeviceBuffer<float> device_a(context, std::span<const float>(a));
  const DeviceBuffer<float> device_b(context, std::span<const float>(b));
  DeviceBuffer<float> device_c(context, m * n);
  SgemmWorkspace workspace(context);
  const SgemmOptions given{
      .choice = SgemmChoice::given, .config = config, .workspace = &workspace, .jit = &jit};

  const SgemmLaunch launch =
      sgemm_launch(config, plan.m, plan.n,
                   sgemm_alignment_allows_vectors(config, device_a.address(), device_b.address(),
                                                  device_c.address(), plan.n, plan.k));
  Run run = describe_launch("sgemm", launch.entry, config.defines(), launch.launch.grid,
                            launch.launch.block);
  run.launches = config.split_k > 1 ? 2 : 1;
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { device_c.memory().fill_words(poison_word); },
      [&] { sgemm(context, plan.m, plan.n, plan.k, device_a, device_b, device_c, given); });
  run.rate = giga_per_second(2.0 * plan.m * plan.n * static_cast<double>(plan.k), run.median_ms);
  run.rate_unit = "GFLOP/s";
  run.note = config.describe() + ", chosen by " + chosen_by(plan, tuned);
  if (options.verify) verify(run, context, a, b, device_a, device_b, device_c.download(), plan);
  return {std::move(run), config, std::move(tuned)};
}

}  // namespace ptxrt::host
