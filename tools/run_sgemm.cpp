#include "tools/run_sgemm.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "host/matmul/sgemm_run.hpp"
#include "ptxrt/jit.hpp"
#include "tools/cli.hpp"
#include "tools/host_commands.hpp"

namespace ptxrt::tools {

void run_sgemm_command(const SgemmRunArguments& arguments) {
  const host::SgemmRunPlan plan = host::plan_sgemm_run(
      arguments.m, arguments.n, arguments.k, cli::parse_defines(arguments.defines), arguments.tuned,
      arguments.database.empty() ? TuningDatabase::default_path()
                                 : std::filesystem::path(arguments.database));
  const Context context = Context::primary(arguments.device);
  const host::SgemmRun result = host::run_sgemm(
      Jit::shared(), context, plan,
      {.seed = arguments.seed, .repeats = arguments.repeat, .verify = arguments.verify});
  if (arguments.json) {
    nlohmann::json report = run_to_json(result.run);
    report["sgemm"] = {{"config", result.config.describe()},
                       {"split_k", result.config.split_k},
                       {"chosen_by", result.tuned           ? "tuned"
                                     : plan.defines.empty() ? "heuristic"
                                                            : "defines"}};
    if (result.tuned) report["tuned"] = tuned_json(*result.tuned);
    std::cout << nlohmann::json::array({report}).dump(2) << '\n';
  } else {
    if (result.tuned) std::cout << "tuned: " << result.tuned->describe() << '\n';
    std::cout << host::format_run(result.run);
  }
  if (!result.run.passed()) throw CLI::RuntimeError(1);
}

}  // namespace ptxrt::tools
