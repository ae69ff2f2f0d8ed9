// `ptxrt tune replay|import|export` (tools/tune_exchange.cpp): Kernel Tuner's files in and out.
#pragma once

#include <CLI/CLI.hpp>

namespace ptxrt::cli {

// Adds replay, import and export under `tune`.
void add_kernel_tuner_commands(CLI::App& tune);

}  // namespace ptxrt::cli
