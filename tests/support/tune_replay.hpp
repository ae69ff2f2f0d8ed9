// A deterministic simulator of a tune, for comparing strategies: a recorded exhaustive tune (one
// report of `ptxrt tune --json`, or a table made up for a test) is replayed through the real
// tuner, whose stand-in compiler gives each config the resources it compiled to and whose
// stand-in measurer gives it the time it took, so that each strategy's order can be scored
// without a GPU: how many configs it times, and at what timing cost, before one within 1 % (3 %)
// of the recorded winner.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::testing {

struct RecordedConfig {
  TuningConfig config;
  MeasurementStatus status = MeasurementStatus::ok;  // cut counts as ok: it was timed
  double median_ms = 0.0;
  std::optional<KernelResources> resources;
  std::optional<Occupancy> occupancy;
  std::optional<LaunchShape> shape;
};

struct RecordedTune {
  std::string name;
  std::vector<RecordedConfig> configs;

  // The fastest timed config's time.
  double best_ms() const {
    double best = 0.0;
    for (const RecordedConfig& recorded : configs)
      if (recorded.status == MeasurementStatus::ok && (best == 0.0 || recorded.median_ms < best))
        best = recorded.median_ms;
    return best;
  }
};

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
      recorded.shape = LaunchShape{static_cast<int>(*threads),
                                   static_cast<std::size_t>(
                                       number_at(result, "dynamic_shared_bytes").value_or(0.0))};
    tune.configs.push_back(std::move(recorded));
  }
  return tune;
}

struct ReplayScore {
  std::size_t timed = 0;  // configs timed in all
  double cost_ms = 0.0;   // their timing cost: warm-up, verification and timed runs
  // Per distance asked for: configs timed until the first within it of the winner, and the
  // cost until then (nothing when the tune never came that close).
  std::vector<std::optional<std::size_t>> configs_to;
  std::vector<double> cost_to;
};

// Replays `recorded` with `options` (strategy, seed, budget; compiled inline, so the order is
// the strategy's alone) and scores it against the recorded winner at each of `within`.
inline ReplayScore replay(const RecordedTune& recorded, TuneOptions options,
                          const std::vector<double>& within) {
  std::map<std::string, std::set<std::int64_t>> values;
  for (const RecordedConfig& entry : recorded.configs)
    for (const Define& define : entry.config.defines())
      values[define.name].insert(std::stoll(define.value));
  TuningSpace space;
  for (const auto& [name, set] : values)
    space.add_parameter(name, std::vector<std::int64_t>(set.begin(), set.end()));
  const auto find = [&](const TuningConfig& config) {
    return std::find_if(recorded.configs.begin(), recorded.configs.end(),
                        [&](const RecordedConfig& entry) { return entry.config == config; });
  };
  space.add_constraint("recorded", [&](const TuningConfig& config) -> std::optional<std::string> {
    if (find(config) == recorded.configs.end()) return "not in the recording";
    return std::nullopt;
  });
  const CandidateCompiler compile = [&](const TuningConfig& config) {
    const RecordedConfig& entry = *find(config);
    return Candidate{config, Candidate::State::ready, {}, entry.resources, entry.occupancy,
                     entry.shape};
  };
  // Times as recorded; the cut the real measurer would make (TimingPolicy's defaults), and the
  // runs it would take, decide the cost.
  struct Replayer : Measurer {
    const RecordedTune* recorded = nullptr;
    std::function<std::vector<RecordedConfig>::const_iterator(const TuningConfig&)> find;
    double cost_ms = 0.0;
    std::vector<double> costs;
    Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
      const RecordedConfig& entry = *find(candidate.config);
      const TimingPolicy policy;
      Measurement measurement{candidate.config, entry.status, entry.median_ms};
      int runs = policy.min_runs;
      if (entry.status == MeasurementStatus::ok && best_ms &&
          entry.median_ms > *best_ms * policy.cut_ratio) {
        measurement.status = MeasurementStatus::cut;
        runs = policy.cut_after;
      }
      if (entry.status != MeasurementStatus::ok) runs = 0;
      cost_ms += entry.median_ms * (runs + policy.warmup_runs + 1);
      costs.push_back(cost_ms);
      measurement.runs = runs;
      return measurement;
    }
  } measurer;
  measurer.recorded = &recorded;
  measurer.find = find;
  options.compile_threads = 0;
  const TuneReport report = tune(space, compile, measurer, options);

  ReplayScore score;
  score.timed = report.results.size();
  score.cost_ms = measurer.cost_ms;
  const double best = recorded.best_ms();
  for (double distance : within) {
    std::optional<std::size_t> reached;
    double cost = measurer.cost_ms;
    for (std::size_t i = 0; i < report.results.size(); ++i) {
      const Measurement& m = report.results[i].measurement;
      if ((m.status == MeasurementStatus::ok || m.status == MeasurementStatus::cut) &&
          m.median_ms <= best * (1.0 + distance)) {
        reached = i + 1;
        cost = measurer.costs[i];
        break;
      }
    }
    score.configs_to.push_back(reached);
    score.cost_to.push_back(cost);
  }
  return score;
}

}  // namespace ptxrt::testing
