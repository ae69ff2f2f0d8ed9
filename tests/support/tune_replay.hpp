// Recorded exhaustive tunes for the replay (ptxrt/tune/tune_replay.hpp) from reports of
// `ptxrt tune --json`, which the repository holds for the strategy table and its tests.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ptxrt/tune/tune_replay.hpp"

namespace ptxrt::testing {

inline std::optional<double> number_at(const nlohmann::json& entry, const char* key) {
  const auto found = entry.find(key);
  if (found == entry.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

// One report of `ptxrt tune --json`: its timed configs with what they compiled to.
inline RecordedTune recorded_tune(const nlohmann::json& report) {
  RecordedTune tune;
  tune.name = report["key"]["kernel"].get<std::string>();
  for (const nlohmann::json& result : report["results"]) {
    RecordedConfig recorded;
    std::vector<Define> defines;
    for (const auto& [name, value] : result["config"].items())
      defines.push_back({name, value.get<std::string>()});
    recorded.config = TuningConfig(std::move(defines));
    const std::string status = result["status"].get<std::string>();
    recorded.status = status == "ok" || status == "cut" ? MeasurementStatus::ok
                      : status == "wrong"               ? MeasurementStatus::wrong
                                                        : MeasurementStatus::failed;
    recorded.median_ms = number_at(result, "median_ms").value_or(0.0);
    if (const auto registers = number_at(result, "registers")) {
      recorded.resources = KernelResources{};
      recorded.resources->registers = static_cast<int>(*registers);
      recorded.resources->static_shared_bytes =
          static_cast<std::size_t>(number_at(result, "static_shared_bytes").value_or(0.0));
      recorded.resources->spill_store_bytes =
          static_cast<std::size_t>(number_at(result, "spill_bytes").value_or(0.0));
    }
    if (const auto fraction = number_at(result, "occupancy")) {
      recorded.occupancy = Occupancy{};
      recorded.occupancy->fraction = *fraction;
    }
    if (const auto threads = number_at(result, "block_threads"))
      recorded.shape = LaunchShape{
          static_cast<int>(*threads),
          static_cast<std::size_t>(number_at(result, "dynamic_shared_bytes").value_or(0.0))};
    tune.configs.push_back(std::move(recorded));
  }
  return tune;
}

}  // namespace ptxrt::testing
