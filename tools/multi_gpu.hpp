// `ptxrt multi-gpu matmul --n 8192 [--devices 0,1] [--tile-width 16] [--seed 1]`: the split
// matmul of host/multi_gpu.hpp on one GPU and then on all the chosen ones, printing each
// device's share and times, the speed-up, and whether the two results are bitwise equal (exit 1
// when they are not).
#pragma once

#include <CLI/CLI.hpp>

namespace ptxrt::cli {

void add_multi_gpu_command(CLI::App& app);

}  // namespace ptxrt::cli
