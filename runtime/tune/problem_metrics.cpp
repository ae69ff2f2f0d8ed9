// A problem's metrics of a measurement (KernelProblem::metrics): work per what was observed.
#include <limits>
#include <map>
#include <string>

#include "ptxrt/tune/problem_session.hpp"

namespace ptxrt {

namespace {

// The observed quantity a metric divides by; NaN when the measurement has none (not observed).
double per_value(ProblemMetric::Per per, const Measurement& measurement) {
  const double not_observed = std::numeric_limits<double>::quiet_NaN();
  switch (per) {
    case ProblemMetric::Per::time_s:
      return measurement.median_ms * 1e-3;
    case ProblemMetric::Per::time_ms:
      return measurement.median_ms;
    case ProblemMetric::Per::energy_j:
      return measurement.power ? measurement.power->energy_j : not_observed;
    case ProblemMetric::Per::power_w:
      return measurement.power ? measurement.power->power_w : not_observed;
  }
  return not_observed;
}

}  // namespace

std::map<std::string, double> metric_values(const KernelProblem& problem, const ProblemSizes& sizes,
                                            const Measurement& measurement) {
  std::map<std::string, double> values;
  for (const ProblemMetric& metric : problem.metrics()) {
    const auto work = static_cast<double>(
        problem.evaluate(metric.work, sizes, measurement.config, "metrics." + metric.name));
    values[metric.name] = work / per_value(metric.per, measurement) / metric.scale;
  }
  return values;
}

}  // namespace ptxrt
