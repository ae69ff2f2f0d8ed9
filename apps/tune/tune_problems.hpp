// The kernels `ptxrt tune` knows, each a KernelProblem with C++ hooks where its description
// cannot say it (kernel_problem.hpp); their keys are the source's alone, as recorded tunes have
// them:
//
//   matmul        matmul_tiled.cu, TILE_WIDTH; sizes m, n, k. Another file with the same entry,
//                 signature and TILE_WIDTH may stand in (for tests: planted configs).
//   sgemm         ptxrt::sgemm_problem (sgemm_tuning.hpp): sgemm.cu as sgemm_tuning_space narrows
//                 it for the sizes (the space and key the library's tuned choice reads), each
//                 config run by sgemm(); sizes m, n, k.
//   closest-pair  closest_pair.cu's BASE, the GPU divide & conquer run for each config; size n
//                 points (uniform in the unit square), against the CPU's divide & conquer.
//
// The products are checked against the CPU's fp64 product up to 512³ multiply-adds, beyond it
// against cuBLAS (or, without it, the SGEMM family's default config), to 1e-4 of the largest
// element; cuBLAS is their peer. Problems are values built without a GPU.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/matmul/matmul.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt::apps {

// "matmul", "sgemm", "closest-pair".
const std::vector<std::string>& tune_problem_names();

// The tiled matmul's problem; `source`: a file standing in for matmul_tiled.cu.
KernelProblem matmul_problem(const std::filesystem::path& source = {});
// The GPU divide & conquer's problem.
KernelProblem closest_pair_problem();

// The builtin problem `name` on `device` (`source`: matmul's stand-in). Throws Error
// (invalid_argument) for an unknown name (listing the known ones) or a `source` given to a
// problem other than matmul.
KernelProblem builtin_tune_problem(std::string_view name, const DeviceProperties& device,
                                   const std::filesystem::path& source = {});
// The same as a tuning worker's resolver: nothing for a name that is not a builtin.
std::optional<KernelProblem> find_builtin_tune_problem(std::string_view name,
                                                       const DeviceProperties& device);

// The sizes of `text` for builtin problem `name`: "1024" (every dimension) or "1024x512x256"
// (m×n×k) for the matrix products, "1000000" (n) for closest-pair, or the sizes by name as for
// any problem ("m=1024,n=512,k=256"); empty: none (the problem's defaults). Each from 1 to
// 2^31-1, closest-pair's n at least 2. Throws Error (invalid_argument) naming the text and what
// was expected.
ProblemSizes parse_tune_size(std::string_view name, std::string_view text);

// The config `database` picks for `problem` at `sizes` on `device` (choose(), falling back to
// the problem's fallback config), said in the log at info level. Throws Error (io) for a corrupt
// database.
TunedChoice choose_tuned(const KernelProblem& problem, const ProblemSizes& sizes,
                         const DeviceProperties& device, const TuningDatabase& database);

// The tiled matmul of m×n×k with the config the database picks for `device`: ready to run
// (run_matmul) or launch (time_matmul), with the choice and the level it came from.
struct TunedMatmul {
  MatmulPlan plan;
  TunedChoice choice;
};
TunedMatmul plan_matmul_tuned(std::int64_t m, std::int64_t n, std::int64_t k,
                              const DeviceProperties& device, const TuningDatabase& database);

}  // namespace ptxrt::apps
