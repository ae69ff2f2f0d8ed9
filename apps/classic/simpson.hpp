// simpson: Simpson's rule in fp64 over n intervals (ptx_src/simpson.cu); the host adds the
// per-block partials in double. Three integrands with known integrals: pi (4/(1+x²) on [0, 1]),
// square (x² on [0, 1]) and sine (sin on [0, π]). Verified against apps::simpson, whose summation
// order differs: relative error within 64·sqrt(n)·2^-53 (the typical error is sqrt(n)·2^-53; the
// margin keeps a correct run from failing, while a wrong weight on a single sample of n <= 10^8
// still exceeds it). Rate: Gsample/s of the n+1 samples.
#pragma once

#include <cstdint>
#include <string_view>

#include "apps/common/reference.hpp"
#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

// "pi" | "square" | "sine"; Error(invalid_argument) listing them otherwise.
Integrand parse_integrand(std::string_view name);
std::string_view to_string(Integrand integrand);

struct Interval {
  double low = 0.0;
  double high = 0.0;
  double exact_integral = 0.0;
};
Interval interval_of(Integrand integrand);

double simpson_tolerance(std::int64_t n);

struct SimpsonPlan {
  std::int64_t n = 0;  // even, >= 2
  Integrand integrand = Integrand::four_over_one_plus_x_squared;
  Program program;
  std::vector<Define> defines;  // BLOCK_SIZE
  Dim3 grid;
  Dim3 block;
};

SimpsonPlan plan_simpson(std::int64_t n, Integrand integrand, std::vector<Define> defines = {});

Run run_simpson(Jit& jit, const Context& context, const SimpsonPlan& plan,
                const RunOptions& options);

}  // namespace ptxrt::apps
