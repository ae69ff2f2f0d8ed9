// `ptxrt run FILE.cu --problem P.json --size W=4096,H=4096 [--tuned] [--verify]`: a kernel file
// run once with its problem's default config, -D tunables, or the tuning database's pick, timed
// as a tune times it and verified against the problem's reference.
#include "run_problem.hpp"

#include <algorithm>
#include <iostream>

#include "ptxrt/tune/problem_session.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "tools/cli.hpp"
#include "tools/host_commands.hpp"
#include "tools/tune_job.hpp"

namespace ptxrt::cli {

namespace {

// The fallback config with each -D tunable set; a -D that is not a tunable is a mistake.
TuningConfig config_with(const KernelProblem& problem, const ProblemSizes& sizes,
                         const std::vector<Define>& defines) {
  std::vector<Define> values = problem.fallback_config(sizes).defines();
  for (const Define& define : defines) {
    const auto found = std::find_if(values.begin(), values.end(),
                                    [&](const Define& value) { return value.name == define.name; });
    if (found == values.end()) {
      std::string tunables;
      for (const Define& value : values) tunables += (tunables.empty() ? "" : ", ") + value.name;
      throw Error(ErrorKind::invalid_argument, "-D " + define.name + " is not a tunable of " +
                                                   problem.name() + " (its tunables: " +
                                                   tunables + ")");
    }
    found->value = define.value;
  }
  return TuningConfig(std::move(values));
}

apps::Run describe(const KernelProblem& problem, const ProblemSizes& sizes,
                   const TuningConfig& config, const ProblemSession::Run& result) {
  std::vector<Define> defines = problem.compile_options_at(sizes).defines;
  defines.insert(defines.end(), config.defines().begin(), config.defines().end());
  apps::Run run = apps::describe_launch(problem.name(), problem.entry(), std::move(defines),
                                        result.launch.grid, result.launch.block);
  run.median_ms = result.median_ms;
  run.rate = result.rate;
  run.rate_unit = result.rate_unit;
  run.verified = result.verified;
  // Passing is per element (atol + rtol × |expected|): the worst element's share of its
  // allowance says it in one number, at most 1 to pass.
  run.max_error = result.worst_share;
  run.tolerance = 1.0;
  run.error_measure = "max |actual - expected| / (atol + rtol x |expected|) over the outputs";
  run.note = result.detail;
  return run;
}

}  // namespace

void run_kernel_file(const KernelFileRun& request) {
  const KernelProblem problem = load_kernel_problem({request.kernel, request.problem_file, {}});
  const ProblemSizes sizes = problem.complete_sizes(
      request.sizes.empty() ? ProblemSizes{} : parse_problem_sizes(request.sizes));
  const Context context = Context::primary(request.device);
  const DeviceProperties& device = context.device().properties();
  check_problem(Jit::shared(), problem, sizes,
                select_target(device.cc_major, device.cc_minor, ImageFormat::cubin), device);
  std::optional<TunedChoice> tuned;
  if (request.database) {
    tuned = choose(request.database->records(), problem_key(problem, sizes, device),
                   problem.fallback_config(sizes));
    if (!request.json) std::cout << "tuned: " << tuned->describe() << '\n';
  }
  const TuningConfig config = tuned ? tuned->config : config_with(problem, sizes, request.defines);
  ProblemSession session(problem, sizes, Jit::shared(), context);
  const apps::Run run =
      describe(problem, sizes, config, session.run(config, request.repeats, request.verify));
  if (request.json) {
    nlohmann::json report = tools::run_to_json(run);
    if (tuned) report["tuned"] = tools::tuned_json(*tuned);
    print_json(std::cout, nlohmann::json::array({report}));
  } else {
    std::cout << apps::format_run(run);
  }
  if (!run.passed()) throw CLI::RuntimeError(1);
}

}  // namespace ptxrt::cli
