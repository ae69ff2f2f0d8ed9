#include "apps/classic/simpson.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {
constexpr std::uint64_t max_grid = 1024;
}

Integrand parse_integrand(std::string_view name) {
  if (name == "pi") return Integrand::four_over_one_plus_x_squared;
  if (name == "square") return Integrand::x_squared;
  if (name == "sine") return Integrand::sine;
  throw Error(ErrorKind::invalid_argument, "simpson variant '" + std::string(name) +
                                               "' is unknown: expected pi, square or sine");
}

std::string_view to_string(Integrand integrand) {
  switch (integrand) {
    case Integrand::four_over_one_plus_x_squared:
      return "pi";
    case Integrand::x_squared:
      return "square";
    case Integrand::sine:
      break;
  }
  return "sine";
}

Interval interval_of(Integrand integrand) {
  switch (integrand) {
    case Integrand::four_over_one_plus_x_squared:
      return {0.0, 1.0, std::numbers::pi};
    case Integrand::x_squared:
      return {0.0, 1.0, 1.0 / 3.0};
    case Integrand::sine:
      break;
  }
  return {0.0, std::numbers::pi, 2.0};
}

double simpson_tolerance(std::int64_t n) {
  return 64.0 * std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -53);
}

SimpsonPlan plan_simpson(std::int64_t n, Integrand integrand, std::vector<Define> defines) {
  if (n < 2 || n % 2 != 0)
    throw Error(ErrorKind::invalid_argument,
                "simpson n must be even and at least 2 (the rule pairs intervals), got " +
                    std::to_string(n));
  if (n == std::numeric_limits<std::int64_t>::max() - 1)
    throw Error(ErrorKind::invalid_argument, "simpson n = " + std::to_string(n) + " is too large");
  Program program = apps::builtin_program("simpson");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const auto block_size = static_cast<unsigned>(define_int(resolved, "BLOCK_SIZE"));
  const std::uint64_t samples = static_cast<std::uint64_t>(n) + 1;
  const auto grid = static_cast<unsigned>(
      std::min<std::uint64_t>((samples + block_size - 1) / block_size, max_grid));
  return {n, integrand, std::move(program), std::move(resolved), Dim3{grid}, Dim3{block_size}};
}

Run run_simpson(Jit& jit, const Context& context, const SimpsonPlan& plan,
                const RunOptions& options) {
  const Kernel kernel = jit.kernel(plan.program, compile_options(plan.defines), context, "simpson");
  const Interval interval = interval_of(plan.integrand);
  DeviceBuffer<double> partials(context, plan.grid.x);
  const long long n = plan.n;
  const int function = static_cast<int>(plan.integrand);

  Run run = describe_launch("simpson", "simpson", plan.defines, plan.grid, plan.block);
  // All bits set: a NaN double, so a partial the kernel never wrote fails.
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { partials.fill_bytes(0xff); },
      [&] {
        kernel.launch({.grid = plan.grid, .block = plan.block}, interval.low, interval.high, n,
                      function, partials);
      });
  run.rate = giga_per_second(static_cast<double>(n) + 1.0, run.median_ms);
  run.rate_unit = "Gsample/s";
  if (!options.verify) return run;
  double integral = 0.0;
  for (double partial : partials.download()) integral += partial;
  const double expected = simpson(plan.integrand, interval.low, interval.high, plan.n);
  run.verified = true;
  run.max_error = std::fabs(integral - expected) / std::fabs(expected);
  if (std::isnan(run.max_error)) run.max_error = std::numeric_limits<double>::infinity();
  run.tolerance = simpson_tolerance(plan.n);
  run.error_measure = "|gpu - cpu| / |cpu|";
  char note[160];
  std::snprintf(note, sizeof note, "integral %.17g (cpu %.17g, exact %.17g)", integral, expected,
                interval.exact_integral);
  run.note = note;
  return run;
}

}  // namespace ptxrt::apps
