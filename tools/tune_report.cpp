#include "tune_report.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "cli.hpp"

namespace ptxrt::cli {

using nlohmann::json;

namespace {

std::string minutes_seconds(double seconds) {
  const auto whole = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  std::ostringstream text;
  text << whole / 60 << ':' << std::setw(2) << std::setfill('0') << whole % 60;
  return text.str();
}

std::size_t count_status(const TuneReport& report, MeasurementStatus status) {
  std::size_t count = 0;
  for (const TuneResult& result : report.results) count += result.measurement.status == status;
  return count;
}

json pruned_json(const std::vector<PrunedConfig>& pruned, const char* stage) {
  json list = json::array();
  for (const PrunedConfig& entry : pruned)
    list.push_back(
        {{"config", config_json(entry.config)}, {"reason", entry.reason}, {"stage", stage}});
  return list;
}

// What the compile told of a config: the features the model strategy learns from, which a
// replay of the tune (tests/bench/strategy_replay.cpp) gives back to it.
void add_compiled(json& entry, const std::optional<KernelResources>& resources,
                  const std::optional<Occupancy>& occupancy,
                  const std::optional<LaunchShape>& shape) {
  entry["registers"] = resources ? json(resources->registers) : json();
  const std::size_t spills =
      resources ? resources->spill_store_bytes.value_or(0) + resources->spill_load_bytes.value_or(0)
                : 0;
  entry["spill_bytes"] = spills;
  entry["static_shared_bytes"] = resources ? json(resources->static_shared_bytes) : json();
  entry["occupancy"] = occupancy ? json(occupancy->fraction) : json();
  entry["block_threads"] = shape ? json(shape->block_threads) : json();
  entry["dynamic_shared_bytes"] = shape ? json(shape->dynamic_shared_bytes) : json();
}

json result_json(const TuneResult& result) {
  json entry = measurement_json(result.measurement);
  add_compiled(entry, result.resources, result.occupancy, result.shape);
  entry["elapsed_seconds"] = result.elapsed_seconds;
  return entry;
}

// The default config's measurement, this run's or resumed, when it was timed to the end.
std::optional<Measurement> default_measurement(const TuneSetting& setting,
                                               const TuneReport& report) {
  for (const TuneResult& result : report.results)
    if (result.measurement.config == setting.default_config &&
        result.measurement.status == MeasurementStatus::ok)
      return result.measurement;
  for (const Measurement& measurement : report.resumed)
    if (measurement.config == setting.default_config && measurement.status == MeasurementStatus::ok)
      return measurement;
  return std::nullopt;
}

std::string rate_text(const Measurement& measurement) {
  return fixed(measurement.rate, 1) + " " + measurement.rate_unit;
}

// What NVML saw and the problem's metrics, for one line: "0.0123 J/run  251.0 W  1980 MHz  55 C
// GFLOP/s 812.4"; empty when neither was taken.
std::string observed_text(const Measurement& measurement) {
  std::string text;
  if (const std::optional<PowerObservation>& power = measurement.power)
    text += "  " + fixed(power->energy_j, 5) + " J/run  " + fixed(power->power_w, 1) + " W  " +
            fixed(power->sm_clock_mhz, 0) + " MHz  " + fixed(power->temperature_c, 0) + " C";
  for (const auto& [name, value] : measurement.metrics) text += "  " + name + " " + fixed(value, 2);
  return text;
}

void print_counts(std::ostream& out, const TuneReport& report) {
  out << "  space " << report.space_size << " configs: " << report.pruned_by_constraints.size()
      << " pruned by constraints, " << report.pruned_by_resources.size() << " by resources, "
      << report.compile_failures.size() << " failed to compile (" << report.compile_timeouts
      << " timed out)\n"
      << "  compiled " << report.compiled << ", timed " << report.results.size() << " (ok "
      << count_status(report, MeasurementStatus::ok) << ", cut "
      << count_status(report, MeasurementStatus::cut) << ", wrong "
      << count_status(report, MeasurementStatus::wrong) << ", failed "
      << count_status(report, MeasurementStatus::failed) << ", crashed "
      << count_status(report, MeasurementStatus::crashed) << "), resumed " << report.resumed.size()
      << ", not reached " << report.not_reached << '\n';
}

// With several devices, a column says which one timed each config.
void print_results(std::ostream& out, const TuneReport& report, bool by_device) {
  const bool observed =
      std::any_of(report.results.begin(), report.results.end(),
                  [](const auto& r) { return !observed_text(r.measurement).empty(); });
  std::vector<std::vector<std::string>> rows;
  for (const TuneResult& result : report.results) {
    const Measurement& m = result.measurement;
    const bool timed = m.status == MeasurementStatus::ok || m.status == MeasurementStatus::cut;
    rows.push_back({m.config.describe(), std::string(to_string(m.status)),
                    timed ? fixed(m.median_ms, 4) : "-",
                    timed ? fixed(m.spread * 100, 1) + "%" : "-", timed ? rate_text(m) : "-",
                    result.resources ? std::to_string(result.resources->registers) : "-",
                    result.occupancy ? fixed(result.occupancy->fraction * 100, 0) + "%" : "-"});
    if (by_device) rows.back().push_back(m.device ? std::to_string(*m.device) : "-");
    if (observed) rows.back().push_back(observed_text(m));
    rows.back().push_back(m.detail);
  }
  std::vector<std::string> header{"config", "status", "median ms", "spread",
                                  "rate",   "regs",   "occupancy"};
  if (by_device) header.push_back("device");
  if (observed) header.push_back("observed");
  header.push_back("detail");
  if (!rows.empty()) print_table(out, header, rows);
}

std::string device_list(const std::vector<int>& devices) {
  std::string text;
  for (int device : devices) text += (text.empty() ? "" : ", ") + std::to_string(device);
  return text;
}

// Up to `listed` pruned configs are listed one a line; a longer list (a declared space of hundreds
// of thousands breaks a few constraints each) is counted by reason instead, the commonest first,
// each with the first config it pruned.
void print_pruned(std::ostream& out, const char* title, const std::vector<PrunedConfig>& pruned) {
  constexpr std::size_t listed = 20;
  if (pruned.empty()) return;
  if (pruned.size() <= listed) {
    out << title << ":\n";
    for (const PrunedConfig& entry : pruned)
      out << "  " << entry.config.describe() << ": " << entry.reason << '\n';
    return;
  }
  struct Reason {
    const PrunedConfig* first;
    std::size_t count;
  };
  std::vector<Reason> reasons;
  std::unordered_map<std::string_view, std::size_t> index_of;
  for (const PrunedConfig& entry : pruned) {
    const auto [found, added] = index_of.try_emplace(entry.reason, reasons.size());
    if (added) reasons.push_back({&entry, 0});
    ++reasons[found->second].count;
  }
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const Reason& a, const Reason& b) { return a.count > b.count; });
  out << title << " (" << pruned.size() << ", by reason; --json lists every config):\n";
  std::size_t shown_configs = 0;
  for (std::size_t i = 0; i < reasons.size() && i < listed; ++i) {
    out << "  " << reasons[i].count << " × " << reasons[i].first->reason << "  (first "
        << reasons[i].first->config.describe() << ")\n";
    shown_configs += reasons[i].count;
  }
  if (reasons.size() > listed)
    out << "  ... and " << pruned.size() - shown_configs << " more for " << reasons.size() - listed
        << " other reasons\n";
}

}  // namespace

json config_json(const TuningConfig& config) {
  json object = json::object();
  for (const Define& define : config.defines()) object[define.name] = define.value;
  return object;
}

json measurement_json(const Measurement& measurement) {
  return json::parse(measurement_to_json(measurement));
}

json key_json(const TuningKey& key) {
  return {{"kernel", key.kernel},
          {"size", key.size},
          {"device", key.device},
          {"compute_capability", key.compute_capability},
          {"nvrtc_version", key.nvrtc_version},
          {"source_hash", key.source_hash},
          {"space", key.space},
          {"l2", to_string(key.l2)},
          {"objective",
           {{"name", key.objective.name}, {"higher_is_better", key.objective.higher_is_better}}}};
}

namespace {

// The default config, its time when it was timed to the end, and the winner's speed-up over it.
json default_json(const TuneSetting& setting, const TuneReport& report) {
  const std::optional<Measurement> measured = default_measurement(setting, report);
  json entry{{"config", config_json(setting.default_config)},
             {"median_ms", measured ? json(measured->median_ms) : json()},
             {"speedup", json()}};
  if (measured && report.winner) entry["speedup"] = measured->median_ms / report.winner->median_ms;
  return entry;
}

// The tune's wall time by what it was spent on. The measurers' time (summed over them) holds the
// workers' start-up waits, verification and timing; what is left of it is loading each config's
// module in the worker and the exchange with it. Idle is the measurers' time without a config:
// waiting for a compile, or for the tuner.
json phases_json(const TuneSetting& setting, const TuneReport& report) {
  const TunePhases& phases = setting.phases;
  const double measurers = static_cast<double>(std::max<std::size_t>(1, setting.devices.size()));
  const double accounted =
      phases.worker_start_wait_seconds + phases.verification_seconds + phases.timing_seconds;
  return {
      {"compile_seconds", phases.compile_seconds},
      {"worker_start_seconds", phases.worker_start_seconds},
      {"worker_start_wait_seconds", phases.worker_start_wait_seconds},
      {"reference_seconds", phases.reference_seconds},
      {"verification_seconds", phases.verification_seconds},
      {"timing_seconds", phases.timing_seconds},
      {"other_measuring_seconds", std::max(0.0, report.measuring_seconds - accounted)},
      {"idle_seconds", std::max(0.0, report.wall_seconds * measurers - report.measuring_seconds)}};
}

}  // namespace

json tune_report_json(const TuneSetting& setting, const TuneReport& report,
                      const std::optional<Measurement>& peer) {
  json pruned = json::array();
  for (const json& stage : {pruned_json(report.pruned_by_constraints, "constraint"),
                            pruned_json(report.pruned_by_resources, "resources"),
                            pruned_json(report.compile_failures, "compile")})
    for (const json& entry : stage) pruned.push_back(entry);
  json results = json::array();
  for (const TuneResult& result : report.results) results.push_back(result_json(result));
  json resumed = json::array();
  for (const Measurement& measurement : report.resumed)
    resumed.push_back(measurement_json(measurement));
  json first = json::array();
  for (const TuningConfig& config : setting.first) first.push_back(config_json(config));
  return {{"key", key_json(setting.key)},
          {"strategy", setting.strategy},
          {"database", setting.database},
          {"compile_threads", setting.compile_threads},
          {"workers_started", setting.workers_started},
          {"devices", setting.devices},
          {"first", first},
          {"counts",
           {{"space", report.space_size},
            {"pruned_by_constraints", report.pruned_by_constraints.size()},
            {"pruned_by_resources", report.pruned_by_resources.size()},
            {"compile_failures", report.compile_failures.size()},
            {"compile_timeouts", report.compile_timeouts},
            {"compiled", report.compiled},
            {"timed", report.results.size()},
            {"ok", count_status(report, MeasurementStatus::ok)},
            {"cut", count_status(report, MeasurementStatus::cut)},
            {"wrong", count_status(report, MeasurementStatus::wrong)},
            {"failed", count_status(report, MeasurementStatus::failed)},
            {"crashed", count_status(report, MeasurementStatus::crashed)},
            {"resumed", report.resumed.size()},
            {"not_reached", report.not_reached}}},
          {"pruned", pruned},
          {"results", results},
          {"resumed", resumed},
          {"winner", report.winner ? measurement_json(*report.winner) : json()},
          {"default", default_json(setting, report)},
          {"peer", peer ? measurement_json(*peer) : json()},
          {"wall_seconds", report.wall_seconds},
          {"measuring_seconds", report.measuring_seconds},
          {"phases", phases_json(setting, report)}};
}

void print_tune_report(std::ostream& out, const TuneSetting& setting, const TuneReport& report,
                       const std::optional<Measurement>& peer) {
  out << "tune " << setting.key.describe() << ", strategy " << setting.strategy << ", "
      << setting.key.describe_method() << '\n';
  print_counts(out, report);
  if (!setting.first.empty())
    out << "  timed first: the problem's " << setting.first.size() << " suggested config(s), from "
        << setting.first.front().describe() << '\n';
  out << "  wall time " << fixed(report.wall_seconds, 2) << " s (measuring "
      << fixed(report.measuring_seconds, 2) << " s), compile threads " << setting.compile_threads
      << ", workers started " << setting.workers_started
      << (setting.devices.size() > 1 ? ", devices " : ", device ") << device_list(setting.devices)
      << '\n';
  const TunePhases& phases = setting.phases;
  out << "  compiling " << fixed(phases.compile_seconds, 2) << " s on all threads; worker start "
      << fixed(phases.worker_start_seconds, 2) << " s (waited for "
      << fixed(phases.worker_start_wait_seconds, 2) << " s), verification "
      << fixed(phases.verification_seconds, 2) << " s, timing " << fixed(phases.timing_seconds, 2)
      << " s (--json: phases)\n\n";
  print_results(out, report, setting.devices.size() > 1);
  print_pruned(out, "\npruned by constraints", report.pruned_by_constraints);
  print_pruned(out, "\npruned by resources", report.pruned_by_resources);
  print_pruned(out, "\nfailed to compile", report.compile_failures);
  out << '\n';
  if (!report.winner) {
    out << "no config passed verification\n";
    return;
  }
  const Measurement& winner = *report.winner;
  out << "winner";
  if (setting.key.objective != Objective{}) out << " by " << setting.key.objective.describe();
  out << ": " << winner.config.describe() << "  " << fixed(winner.median_ms, 4) << " ms  "
      << rate_text(winner) << observed_text(winner) << '\n';
  if (const std::optional<Measurement> untuned = default_measurement(setting, report))
    out << "default: " << untuned->config.describe() << "  " << fixed(untuned->median_ms, 4)
        << " ms  (the winner is " << fixed(untuned->median_ms / winner.median_ms, 2)
        << "x as fast)\n";
  if (peer && peer->median_ms > 0.0)
    out << "peer:   " << peer->detail << "  " << fixed(peer->median_ms, 4) << " ms  "
        << rate_text(*peer) << "  (winner at "
        << fixed(100.0 * peer->median_ms / winner.median_ms, 1) << "% of its rate)\n";
  out << "recorded in " << setting.database << '\n';
}

json tune_plan_json(const TuningKey& key, const std::string& strategy, const TunePlan& plan) {
  json pruned = json::array();
  for (const json& stage : {pruned_json(plan.pruned_by_constraints, "constraint"),
                            pruned_json(plan.pruned_by_resources, "resources"),
                            pruned_json(plan.compile_failures, "compile")})
    for (const json& entry : stage) pruned.push_back(entry);
  json ready = json::array();
  for (const Candidate& candidate : plan.ready) {
    json entry{{"config", config_json(candidate.config)}};
    add_compiled(entry, candidate.resources, candidate.occupancy, candidate.shape);
    ready.push_back(entry);
  }
  return {{"key", key_json(key)},
          {"strategy", strategy},
          {"counts",
           {{"space", plan.space_size},
            {"pruned_by_constraints", plan.pruned_by_constraints.size()},
            {"pruned_by_resources", plan.pruned_by_resources.size()},
            {"compile_failures", plan.compile_failures.size()},
            {"not_compiled", plan.not_compiled},
            {"to_time", plan.ready.size()}}},
          {"pruned", pruned},
          {"to_time", ready}};
}

void print_tune_plan(std::ostream& out, const TuningKey& key, const std::string& strategy,
                     const TunePlan& plan) {
  out << "plan for " << key.describe() << ", strategy " << strategy << " (dry run: nothing timed)\n"
      << "  space " << plan.space_size << " configs: " << plan.pruned_by_constraints.size()
      << " pruned by constraints, " << plan.pruned_by_resources.size() << " by resources, "
      << plan.compile_failures.size() << " failed to compile\n"
      << "  would time " << plan.ready.size() << " configs\n";
  if (plan.not_compiled > 0)
    out << "  not compiled: " << plan.not_compiled
        << " configs (the dry run was stopped before their compile)\n";
  std::vector<std::vector<std::string>> rows;
  for (const Candidate& candidate : plan.ready)
    rows.push_back({candidate.config.describe(),
                    candidate.resources ? std::to_string(candidate.resources->registers) : "-",
                    candidate.occupancy ? fixed(candidate.occupancy->fraction * 100, 0) + "%" : "-",
                    candidate.spill_bytes() > 0 ? std::to_string(candidate.spill_bytes()) : ""});
  if (!rows.empty()) {
    out << '\n';
    print_table(out, {"config", "regs", "occupancy", "spill bytes"}, rows);
  }
  print_pruned(out, "\npruned by constraints", plan.pruned_by_constraints);
  print_pruned(out, "\npruned by resources", plan.pruned_by_resources);
  print_pruned(out, "\nfailed to compile", plan.compile_failures);
}

std::string format_progress(const TuneProgress& progress) {
  const int width = static_cast<int>(std::to_string(progress.total).size());
  std::ostringstream text;
  text << '[' << std::setw(width) << progress.done << '/' << progress.total << "] ";
  if (progress.best)
    text << "best " << fixed(progress.best->median_ms, 4) << " ms "
         << progress.best->config.describe();
  else
    text << "no result yet";
  text << "  ETA " << minutes_seconds(progress.eta_seconds);
  return text.str();
}

std::string format_plan_progress(const TuneProgress& progress) {
  return "dry run: compiled " + std::to_string(progress.done) + " of " +
         std::to_string(progress.total) + " configs  ETA " + minutes_seconds(progress.eta_seconds);
}

json tune_records_json(const std::vector<TuningRecord>& records) {
  json list = json::array();
  for (const TuningRecord& record : records)
    list.push_back({{"key", key_json(record.key)},
                    {"measured", record.measurements.size()},
                    {"winner", record.winner ? measurement_json(*record.winner) : json()}});
  return list;
}

void print_tune_records(std::ostream& out, const std::vector<TuningRecord>& records) {
  std::vector<std::vector<std::string>> rows;
  for (const TuningRecord& record : records) {
    const TuningKey& key = record.key;
    const std::optional<Measurement>& winner = record.winner;
    rows.push_back({key.kernel, format_size(key.size), key.device, key.compute_capability,
                    std::string(to_string(key.l2)), key.objective.describe(),
                    std::to_string(record.measurements.size()),
                    winner ? winner->config.describe() : "(none)",
                    winner ? fixed(winner->median_ms, 4) : "-", winner ? rate_text(*winner) : "-"});
  }
  print_table(out,
              {"kernel", "size", "device", "cc", "l2", "objective", "measured", "winner",
               "median ms", "rate"},
              rows);
}

}  // namespace ptxrt::cli
