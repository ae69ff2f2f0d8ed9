// `ptxrt run sgemm`: C = A·B through the library's sgemm() with the config it would choose (the
// shape heuristic), the tuning database's pick (tuned: sgemm_tuned_choice, the lookup of
// SgemmChoice::tuned), or the heuristic's config with -D constants set; timed, and checked
// against the CPU's fp64 product, cuBLAS's, or fp64 samples (apps/matmul/product_check.hpp) on an
// output poisoned before every run.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "apps/common/run.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt::apps {

struct SgemmRunPlan {
  int m = 0, n = 0, k = 0;
  std::vector<Define> defines;          // set over the heuristic's config; none: as chosen
  std::optional<TuningDatabase> tuned;  // run the database's pick for the shape and device
};

// Checks the sizes (ints >= 1 whose matrices' floats fit in size_t), that each define is one of
// sgemm.cu's constants with one of its declared values, that defines and tuned are not both
// given, and reads the database when tuned (a corrupt one is an Error naming it); needs no GPU.
SgemmRunPlan plan_sgemm_run(std::int64_t m, std::int64_t n, std::int64_t k,
                            std::vector<Define> defines = {},
                            std::optional<TuningDatabase> tuned = std::nullopt);

// The run and how its config was chosen (tuned: the database's answer, with its level; the
// heuristic's config at level declared_default when nothing suits).
struct SgemmRun {
  Run run;
  SgemmConfig config;
  std::optional<TunedChoice> tuned;
};

// Random inputs from the seed (make_matmul_operands); C poisoned before each run; the median of
// options.repeats runs after a warm-up; verified when options.verify.
SgemmRun run_sgemm(Jit& jit, const Context& context, const SgemmRunPlan& plan,
                   const RunOptions& options);

}  // namespace ptxrt::apps
