// What `ptxrt tune` prints: the report of one tune as text or JSON, the progress line, and the
// table of `ptxrt tune show`.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ptxrt/tune/tune_worker.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt::cli {

// The setting of one tune, for its report.
struct TuneSetting {
  TuningKey key;
  std::string strategy;
  std::string database;
  unsigned compile_threads = 0;
  int workers_started = 0;
  std::vector<int> devices;         // the ordinals timing it, one worker each
  TuningConfig default_config;      // what runs untuned: the winner's speed-up is over it
  TunePhases phases;                // where the wall time went (the report's "phases")
  std::vector<TuningConfig> first;  // timed before the strategy's picks: the problem's suggestions
};

nlohmann::json measurement_json(const Measurement& measurement);
nlohmann::json config_json(const TuningConfig& config);
nlohmann::json key_json(const TuningKey& key);

nlohmann::json tune_report_json(const TuneSetting& setting, const TuneReport& report,
                                const std::optional<Measurement>& peer);
void print_tune_report(std::ostream& out, const TuneSetting& setting, const TuneReport& report,
                       const std::optional<Measurement>& peer);

// `ptxrt tune --dry-run`: what would be timed, and every config pruned with its reason.
nlohmann::json tune_plan_json(const TuningKey& key, const std::string& strategy,
                              const TunePlan& plan);
void print_tune_plan(std::ostream& out, const TuningKey& key, const std::string& strategy,
                     const TunePlan& plan);

// "[ 12/40] best 1.234 ms TILE_WIDTH=32  ETA 0:42", for a terminal line rewritten in place.
std::string format_progress(const TuneProgress& progress);
// "dry run: compiled 1200 of 40000 configs  ETA 12:10", the dry run's.
std::string format_plan_progress(const TuneProgress& progress);

// `ptxrt tune show`: every tune in the database with its winner.
nlohmann::json tune_records_json(const std::vector<TuningRecord>& records);
void print_tune_records(std::ostream& out, const std::vector<TuningRecord>& records);

}  // namespace ptxrt::cli
