// What a tune chooses its winner by, and how it timed: the objectives' values of a measurement,
// the best by one, and the L2 modes' names.
#include <cmath>
#include <string>
#include <utility>

#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "support/quoted.hpp"

namespace ptxrt {

namespace {

constexpr std::pair<L2Mode, std::string_view> l2_mode_names[] = {
    {L2Mode::flush, "flush"},
    {L2Mode::warm, "warm"},
};

}  // namespace

std::string_view to_string(L2Mode mode) {
  for (const auto& [value, spelling] : l2_mode_names)
    if (value == mode) return spelling;
  return "unknown";
}

L2Mode parse_l2_mode(std::string_view text, std::string_view user) {
  for (const auto& [mode, spelling] : l2_mode_names)
    if (spelling == text) return mode;
  throw Error(ErrorKind::invalid_argument,
              std::string(user) + " " + detail::quoted(text) + ": expected flush or warm");
}

std::string Objective::describe() const {
  return higher_is_better ? name + " (higher is better)" : name;
}

std::optional<double> objective_value(const Measurement& measurement, const Objective& objective) {
  if (measurement.status != MeasurementStatus::ok) return std::nullopt;
  std::optional<double> value;
  if (objective.name == "time")
    value = measurement.median_ms;
  else if (objective.name == "energy" && measurement.power)
    value = measurement.power->energy_j;
  else if (objective.name == "power" && measurement.power)
    value = measurement.power->power_w;
  else if (const auto metric = measurement.metrics.find(objective.name);
           metric != measurement.metrics.end())
    value = metric->second;
  // A value that did not come out a number (a metric over 0 energy) ranks nowhere.
  return value && std::isfinite(*value) ? value : std::nullopt;
}

std::optional<Measurement> best_measurement(const std::vector<Measurement>& measurements,
                                            const Objective& objective) {
  std::optional<Measurement> best;
  std::optional<double> best_value;
  for (const Measurement& measurement : measurements) {
    const std::optional<double> value = objective_value(measurement, objective);
    if (!value) continue;
    if (!best_value || (objective.higher_is_better ? *value > *best_value : *value < *best_value)) {
      best = measurement;
      best_value = value;
    }
  }
  return best;
}

std::optional<Measurement> fastest(const std::vector<Measurement>& measurements) {
  return best_measurement(measurements, Objective{});
}

}  // namespace ptxrt
