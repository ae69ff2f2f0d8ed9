// `ptxrt multi-gpu matmul --n 8192 [--devices 0,1] [--tile-width 16] [--seed 1]`: the split
// matmul of apps/matmul/multi_gpu.hpp on one GPU and then on all the chosen ones, printing each
// device's share and times (the upload with its rate in GB/s), the speed-up, and whether the two
// results are bitwise equal (exit 1 when they are not).
// `ptxrt multi-gpu closest-pair --n 1048576 [--devices 0,1] [--base 128] [--dist uniform]
// [--seed 1]`: the brute-force closest pair of apps/closest_pair/multi_gpu_closest_pair.hpp, the
// same way, checked against the single-GPU brute force's pair and distance (exit 1 when they
// differ).
// Both take `--host-memory pinned|pageable` (where the host keeps inputs and results; default
// pinned) and `--transfers overlapped|synchronous` (default overlapped): `--host-memory pageable
// --transfers synchronous` is how they moved data before pinned staging, for comparison.
#pragma once

#include <CLI/CLI.hpp>

namespace ptxrt::cli {

void add_multi_gpu_command(CLI::App& app);

}  // namespace ptxrt::cli
