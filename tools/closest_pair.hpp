// `ptxrt closest-pair`: the closest pair of generated or file points by any method, with
// verification against the CPU divide & conquer, JSON output, and the benchmark table (--bench).
#pragma once

#include <CLI/CLI.hpp>

namespace ptxrt::cli {

void add_closest_pair_command(CLI::App& app);

}  // namespace ptxrt::cli
