// The kernels `ptxrt tune` knows, each as a TuneProblem: its program and tuning space (from the
// file's manifest, plus C++ constraints), the launch shape a config implies (for pruning before
// any GPU work), and a GPU session that verifies a config against a reference and times it.
//
//   matmul        matmul_tiled.cu, TILE_WIDTH; size m×n×k. Another file with the same entry,
//                 signature and TILE_WIDTH may stand in (for tests: planted configs).
//   sgemm         sgemm.cu, its tile constants and split of K as sgemm_tuning_space narrows them
//                 for the size (the space and key the library's tuned choice reads); size m×n×k.
//   closest-pair  closest_pair.cu's BASE, the GPU divide & conquer; size n points.
//
// Problems are values built without a GPU; sessions live in the process that owns the GPU (the
// tuner's worker) and are used from one thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/matmul/matmul.hpp"
#include "ptxrt/core/context.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::apps {

struct TuneProblem {
  std::string name;  // "matmul"
  Program program;
  std::string entry;  // the entry whose resources decide pruning
  TuningSpace space;
  std::vector<std::int64_t> size;
  std::function<LaunchShape(const TuningConfig&)> shape;
  // The GPU side: inputs made and the reference computed once, in `context`.
  std::function<std::unique_ptr<TuneSession>(Jit& jit, const Context& context)> open_session;
};

// "matmul", "sgemm", "closest-pair".
const std::vector<std::string>& tune_problem_names();

// "1024" (every dimension), "1024x512x256" (m×n×k) for the matrix products; "1000000" (n) for
// closest-pair. Throws Error (invalid_argument) naming the text and what was expected.
std::vector<std::int64_t> parse_tune_size(std::string_view problem, std::string_view text);

// Throws Error (invalid_argument) for an unknown name (listing the known ones), a size of the
// wrong shape, or a `source` given to a problem other than matmul.
TuneProblem make_tune_problem(std::string_view name, std::vector<std::int64_t> size,
                              const DeviceProperties& device,
                              const std::filesystem::path& source = {});

// The database key of `problem` on `device`.
TuningKey tune_key(const TuneProblem& problem, const DeviceProperties& device);

// The sizes each problem tunes when none is given.
std::vector<std::int64_t> default_tune_size(std::string_view problem);

// The config `database` picks for `problem` on `device` (choose(), falling back to the space's
// declared defaults), said in the log at info level. Throws Error (io) for a corrupt database.
TunedChoice choose_tuned(const TuneProblem& problem, const DeviceProperties& device,
                         const TuningDatabase& database);

// The tiled matmul of m×n×k with the config the database picks for `device`: ready to run
// (run_matmul) or launch (time_matmul), with the choice and the level it came from.
struct TunedMatmul {
  MatmulPlan plan;
  TunedChoice choice;
};
TunedMatmul plan_matmul_tuned(std::int64_t m, std::int64_t n, std::int64_t k,
                              const DeviceProperties& device, const TuningDatabase& database);

}  // namespace ptxrt::apps
