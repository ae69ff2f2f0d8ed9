#include "ptxrt/tune/tune_replay.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"

namespace ptxrt {

double RecordedTune::best_ms() const {
  double best = 0.0;
  for (const RecordedConfig& recorded : configs)
    if (recorded.status == MeasurementStatus::ok && (best == 0.0 || recorded.median_ms < best))
      best = recorded.median_ms;
  return best;
}

namespace {

// The recording as a space of its own values, allowing only the configs it holds.
class ReplaySpace {
 public:
  explicit ReplaySpace(const RecordedTune& recorded) : recorded_(recorded) {
    std::map<std::string, std::set<std::int64_t>> values;
    for (std::size_t i = 0; i < recorded.configs.size(); ++i) {
      const TuningConfig& config = recorded.configs[i].config;
      for (const Define& define : config.defines()) {
        const std::optional<std::int64_t> value = config.find(define.name);
        if (!value)
          throw Error(ErrorKind::invalid_argument,
                      "replay of " + detail::quoted(recorded.name) + ": " + define.name + "=" +
                          detail::quoted(define.value) + " is not an integer");
        values[define.name].insert(*value);
      }
      index_.emplace(config.describe(), i);
    }
    for (const auto& [name, set] : values)
      space_.add_parameter(name, std::vector<std::int64_t>(set.begin(), set.end()));
    space_.add_constraint("recorded", [this](const TuningConfig& config) {
      return find(config) ? Verdict() : Verdict::refused("not in the recording");
    });
  }
  ReplaySpace(const ReplaySpace&) = delete;
  ReplaySpace& operator=(const ReplaySpace&) = delete;

  const TuningSpace& space() const { return space_; }
  const RecordedConfig* find(const TuningConfig& config) const {
    const auto found = index_.find(config.describe());
    return found == index_.end() ? nullptr : &recorded_.configs[found->second];
  }

 private:
  const RecordedTune& recorded_;
  std::map<std::string, std::size_t> index_;
  TuningSpace space_;
};

// Times as recorded; the cut the real measurer would make (TimingPolicy's defaults), and the
// runs it would take, decide the cost.
class RecordedMeasurer : public Measurer {
 public:
  explicit RecordedMeasurer(const ReplaySpace& space) : space_(space) {}

  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    const RecordedConfig& entry = *space_.find(candidate.config);
    const TimingPolicy policy;
    Measurement measurement{
        .config = candidate.config, .status = entry.status, .median_ms = entry.median_ms};
    int runs = policy.min_runs;
    if (entry.status == MeasurementStatus::ok && best_ms &&
        entry.median_ms > *best_ms * policy.cut_ratio) {
      measurement.status = MeasurementStatus::cut;
      runs = policy.cut_after;
    }
    if (entry.status != MeasurementStatus::ok) runs = 0;
    cost_ms_ += entry.median_ms * (runs + policy.warmup_runs + 1);
    costs_.push_back(cost_ms_);
    measurement.runs = runs;
    return measurement;
  }
  double cost_ms() const { return cost_ms_; }
  // The cost once the i-th config (from 0) was timed.
  double cost_after(std::size_t i) const { return costs_[i]; }

 private:
  const ReplaySpace& space_;
  double cost_ms_ = 0.0;
  std::vector<double> costs_;
};

bool timed(const Measurement& measurement) {
  return measurement.status == MeasurementStatus::ok ||
         measurement.status == MeasurementStatus::cut;
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

}  // namespace

ReplayScore replay(const RecordedTune& recorded, TuneOptions options,
                   const std::vector<double>& within) {
  const double best = recorded.best_ms();
  if (best <= 0.0)
    throw Error(ErrorKind::invalid_argument,
                "replay of " + detail::quoted(recorded.name) + ": no config was timed");
  const ReplaySpace space(recorded);
  const CandidateCompiler compile = [&](const TuningConfig& config) {
    const RecordedConfig& entry = *space.find(config);
    return Candidate{.config = config,
                     .resources = entry.resources,
                     .occupancy = entry.occupancy,
                     .shape = entry.shape};
  };
  RecordedMeasurer measurer(space);
  options.compile_threads = 0;
  options.database = nullptr;
  options.resume = false;
  const TuneReport report = tune(space.space(), compile, measurer, options);

  ReplayScore score;
  score.timed = report.results.size();
  score.cost_ms = measurer.cost_ms();
  for (const TuneResult& result : report.results)
    if (timed(result.measurement) &&
        (!score.found_ms || result.measurement.median_ms < *score.found_ms))
      score.found_ms = result.measurement.median_ms;
  for (double distance : within) {
    std::optional<std::size_t> reached;
    double cost = measurer.cost_ms();
    for (std::size_t i = 0; i < report.results.size(); ++i) {
      const Measurement& m = report.results[i].measurement;
      if (timed(m) && m.median_ms <= best * (1.0 + distance)) {
        reached = i + 1;
        cost = measurer.cost_after(i);
        break;
      }
    }
    score.configs_to.push_back(reached);
    score.cost_to.push_back(cost);
  }
  return score;
}

bool seeded(TuningStrategy strategy) {
  return strategy == TuningStrategy::random || strategy == TuningStrategy::model;
}

ReplaySummary summarize_replays(const RecordedTune& recorded, const TuneOptions& options, int seeds,
                                const std::vector<double>& within) {
  const double exhaustive_cost = replay(recorded, TuneOptions{}, {}).cost_ms;
  ReplaySummary summary;
  summary.seeds = seeded(options.strategy) ? std::max(1, seeds) : 1;
  std::vector<std::vector<double>> configs(within.size()), costs(within.size());
  std::vector<double> timed_counts, found;
  summary.within.resize(within.size());
  for (int seed = 1; seed <= summary.seeds; ++seed) {
    TuneOptions seeded_options = options;
    seeded_options.seed = static_cast<std::uint64_t>(seed);
    const ReplayScore score = replay(recorded, seeded_options, within);
    timed_counts.push_back(static_cast<double>(score.timed));
    found.push_back(score.found_ms.value_or(std::numeric_limits<double>::infinity()));
    for (std::size_t d = 0; d < within.size(); ++d) {
      summary.within[d].reached = summary.within[d].reached && score.configs_to[d].has_value();
      configs[d].push_back(static_cast<double>(score.configs_to[d].value_or(score.timed)));
      costs[d].push_back(score.cost_to[d] / exhaustive_cost);
    }
  }
  for (std::size_t d = 0; d < within.size(); ++d) {
    summary.within[d].configs = quantile(configs[d], 0.5);
    summary.within[d].configs_p90 = quantile(configs[d], 0.9);
    summary.within[d].cost_share = quantile(costs[d], 0.5);
  }
  summary.timed = quantile(timed_counts, 0.5);
  summary.found_ms = quantile(found, 0.5);
  summary.found_ms_p90 = quantile(found, 0.9);
  return summary;
}

}  // namespace ptxrt
