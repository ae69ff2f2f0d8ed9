// The CLI commands over the host programs of host/: `ptxrt run` (one kernel, timed and checked)
// and `ptxrt bench` (the kernels against their peers). Both check every argument before they
// touch the driver, so usage errors read the same with or without a GPU. A ptxrt::Error leaves
// the callback (the caller prints it and exits 1); a failed verification throws
// CLI::RuntimeError(1) after the report is printed, which CLI::App::exit turns into exit code 1.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "apps/common/run.hpp"
#include "ptxrt/tune/tuning_database.hpp"

void add_run_command(CLI::App& app);
void add_bench_command(CLI::App& app);

namespace ptxrt::tools {

// A run as JSON: what ran, time, rate and verification (an infinite error becomes null).
nlohmann::json run_to_json(const apps::Run& run);

// A tuned run's choice as JSON: {level, config, from: {device, compute_capability, size}}.
nlohmann::json tuned_json(const TunedChoice& choice);

}  // namespace ptxrt::tools
