// `ptxrt run sgemm`: C = A·B through sgemm.cu with one config (the device's default, with any
// -D constants set, or the tuning database's pick), timed and checked as `run matmul` is.
#pragma once

#include <cstdint>
#include <vector>

#include "host/common/run.hpp"
#include "ptxrt/jit.hpp"

namespace ptxrt::host {

struct SgemmRunPlan {
  int m = 0, n = 0, k = 0;
  std::vector<Define> defines;  // set over default_sgemm_config of the device it runs on
};

// Checks the sizes (ints >= 1, each matrix's floats fit in size_t) and that every define is one
// of sgemm.cu's constants with one of its declared values; needs no GPU.
SgemmRunPlan plan_sgemm_run(std::int64_t m, std::int64_t n, std::int64_t k,
                            std::vector<Define> defines = {});

// Random inputs from the seed, C poisoned before each run, timed, and verified against the
// CPU's fp64 product (host::matmul) with matmul_tolerance when asked.
Run run_sgemm(Jit& jit, const Context& context, const SgemmRunPlan& plan, const RunOptions& options);

}  // namespace ptxrt::host
