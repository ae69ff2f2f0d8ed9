// How a tune times (the L2 flushed or warm) and what its winner is best at (time, energy, power
// or a problem's metric): the choice of the winner, what the database records of both, the
// metrics of a problem file, and the flags that ask for them, checked before any GPU work.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/problem_session.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ptxrt::Candidate;
using ptxrt::ErrorKind;
using ptxrt::KernelProblem;
using ptxrt::L2Mode;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::Objective;
using ptxrt::PowerObservation;
using ptxrt::TuningConfig;
using ptxrt::TuningDatabase;
using ptxrt::TuningKey;
using ptxrt::testing::check_error;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path kernels = fs::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";

TuningConfig tile(int width) { return TuningConfig({{"TILE_WIDTH", std::to_string(width)}}); }

// An ok measurement of TILE_WIDTH=`width`: `ms` per run, `joules` per run over its window.
Measurement observed(int width, double ms, double joules) {
  return {.config = tile(width),
          .status = MeasurementStatus::ok,
          .median_ms = ms,
          .runs = 5,
          .power = PowerObservation{.energy_j = joules,
                                    .power_w = joules / (ms * 1e-3),
                                    .sm_clock_mhz = 1980.0,
                                    .temperature_c = 55.0},
          .metrics = {{"GFLOP/J", 1.0 / joules}}};
}

TuningKey key_for(L2Mode l2 = L2Mode::flush, Objective objective = {}) {
  return {.kernel = "matmul",
          .source_hash = "hash-1",
          .space = "TILE_WIDTH in {8,16,32}",
          .device = "NVIDIA H100",
          .compute_capability = "9.0",
          .nvrtc_version = 13000,
          .size = {1024, 1024, 1024},
          .l2 = l2,
          .objective = std::move(objective)};
}

// The convolution problem of tests/data with `metrics` added, read from a file in `scratch`.
KernelProblem convolution_with_metrics(const ScratchDirectory& scratch, const json& metrics) {
  std::ifstream in(kernels / "convolution.json");
  json document = json::parse(in);
  document["metrics"] = metrics;
  const fs::path file = scratch.path() / "problem.json";
  std::ofstream(file) << document.dump(1);
  return KernelProblem::from_file(file, kernels / "convolution.cu");
}

const json flop_metrics{
    {"GFLOP/s", {{"work", "2 * W * H * 17 * 17"}, {"per", "time_s"}, {"scale", 1e9}}},
    {"GFLOP/J", {{"work", "2 * W * H * 17 * 17"}, {"per", "energy_j"}, {"scale", 1e9}}}};

bool nvml_loads() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) dlclose(library);
  return library != nullptr;
}

ptxrt::testing::ProcessResult cli(const ScratchDirectory& scratch,
                                  std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  return ptxrt::testing::run_process(
      arguments, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=warning",
                  "PTXRT_TUNING_DB=" + (scratch.path() / "tuning.json").string()});
}

}  // namespace

TEST_CASE("the L2 modes are flush and warm; anything else names the flag that gave it") {
  CHECK(ptxrt::parse_l2_mode("flush", "--l2") == L2Mode::flush);
  CHECK(ptxrt::parse_l2_mode("warm", "--l2") == L2Mode::warm);
  CHECK(ptxrt::to_string(L2Mode::warm) == "warm");
  CHECK(ptxrt::TimingPolicy{}.l2 == L2Mode::flush);
  CHECK_FALSE(ptxrt::TimingPolicy{}.observe_power);
  check_error([] { ptxrt::parse_l2_mode("cold", "--l2"); }, ErrorKind::invalid_argument,
              "--l2 'cold': expected flush or warm");
}

TEST_CASE("a worker's command line carries the L2 mode and power observation, and reads back") {
  CHECK(ptxrt::timing_arguments({}) == std::vector<std::string>{"--l2", "flush"});
  CHECK(ptxrt::timing_arguments({.l2 = L2Mode::warm, .observe_power = true}) ==
        std::vector<std::string>{"--l2", "warm", "--observe", "power"});
  CHECK(ptxrt::parse_observation("power", "--observe"));
  CHECK_FALSE(ptxrt::parse_observation("none", "--observe"));
  check_error([] { ptxrt::parse_observation("heat", "--observe"); }, ErrorKind::invalid_argument,
              "--observe 'heat': expected power");
}

TEST_CASE("the winner is the best ok measurement by the objective, in its direction") {
  const std::vector<Measurement> measurements{
      observed(8, 1.0, 0.30),
      observed(16, 2.0, 0.20),
      observed(32, 3.0, 0.25),
      {.config = tile(64), .status = MeasurementStatus::wrong, .median_ms = 0.5}};
  CHECK(ptxrt::fastest(measurements)->config == tile(8));
  CHECK(ptxrt::best_measurement(measurements, {.name = "energy"})->config == tile(16));
  // Power is energy over time: 300 W, 100 W and 83 W.
  CHECK(ptxrt::best_measurement(measurements, {.name = "power"})->config == tile(32));
  CHECK(ptxrt::best_measurement(measurements, {.name = "GFLOP/J", .higher_is_better = true})
            ->config == tile(16));
  CHECK(ptxrt::best_measurement(measurements, {.name = "GFLOP/J"})->config == tile(8));
  CHECK_FALSE(ptxrt::best_measurement(measurements, {.name = "GB/s"}));

  // A measurement without the value (not observed, or a metric that came out NaN) ranks nowhere.
  Measurement unobserved = observed(4, 0.1, 0.01);
  unobserved.power.reset();
  unobserved.metrics["GFLOP/J"] = std::numeric_limits<double>::quiet_NaN();
  CHECK(
      ptxrt::best_measurement({unobserved, observed(16, 2.0, 0.20)}, {.name = "energy"})->config ==
      tile(16));
  CHECK(ptxrt::best_measurement({unobserved, observed(16, 2.0, 0.20)},
                                {.name = "GFLOP/J", .higher_is_better = true})
            ->config == tile(16));
  CHECK(ptxrt::objective_value(observed(8, 1.0, 0.3), {.name = "energy"}) == 0.3);
  CHECK_FALSE(ptxrt::objective_value(unobserved, {.name = "energy"}));
}

TEST_CASE("a measurement's power and metrics round-trip through its JSON form") {
  const Measurement measurement = observed(16, 2.0, 0.2);
  const Measurement back = ptxrt::measurement_from_json(ptxrt::measurement_to_json(measurement));
  CHECK(back.power == measurement.power);
  CHECK(back.metrics == measurement.metrics);
  const json form = json::parse(ptxrt::measurement_to_json(measurement));
  CHECK(form["power"]["energy_j"] == 0.2);
  CHECK(form["metrics"]["GFLOP/J"] == 5.0);
  // A measurement without them writes neither field.
  const json plain = json::parse(ptxrt::measurement_to_json(
      {.config = tile(8), .status = MeasurementStatus::ok, .median_ms = 1.0}));
  CHECK_FALSE(plain.contains("power"));
  CHECK_FALSE(plain.contains("metrics"));
  check_error(
      [] {
        ptxrt::measurement_from_json(
            R"({"config": {}, "status": "failed", "metrics": {"GFLOP/s": "fast"}})");
      },
      ErrorKind::invalid_argument, "metrics.GFLOP/s: expected a number");
}

TEST_CASE("a flushed and a warm tune, or one for time and one for energy, are separate records") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  const TuningKey energy = key_for(L2Mode::flush, {.name = "energy"});
  for (const Measurement& measurement : {observed(8, 1.0, 0.3), observed(16, 2.0, 0.2)}) {
    database.record(key_for(), measurement);
    database.record(key_for(L2Mode::warm), measurement);
    database.record(energy, measurement);
  }
  const std::vector<ptxrt::TuningRecord> records = database.records();
  REQUIRE(records.size() == 3);
  CHECK(records[0].key.l2 == L2Mode::flush);
  CHECK(records[1].key.l2 == L2Mode::warm);
  CHECK(records[2].key.objective == Objective{.name = "energy"});
  CHECK(records[0].winner->config == tile(8));   // the fastest
  CHECK(records[2].winner->config == tile(16));  // the least energy
  CHECK(records[2].winner->power == observed(16, 2.0, 0.2).power);
  CHECK(database.measurements(key_for(L2Mode::warm)).size() == 2);

  const std::vector<ptxrt::TuningRecord> merged = TuningDatabase::merge({records, records});
  REQUIRE(merged.size() == 3);
  CHECK(merged[2].winner->config == tile(16));
}

TEST_CASE("a database written before L2 modes, objectives and power loads as flush and time") {
  const std::string old_file = R"({"format": "ptxrt-tuning-1", "tunes": [{
      "key": {"kernel": "matmul", "source_hash": "hash-1", "space": "TILE_WIDTH in {8,16,32}",
              "device": "NVIDIA H100", "compute_capability": "9.0", "nvrtc_version": 13000,
              "size": [1024, 1024, 1024]},
      "measurements": [{"config": {"TILE_WIDTH": "16"}, "status": "ok", "median_ms": 2.0,
                        "spread": 0.01, "runs": 5, "rate": 1.0, "rate_unit": "GFLOP/s",
                        "max_error": 0.0, "detail": ""}],
      "winner": null}]})";
  const std::vector<ptxrt::TuningRecord> records = TuningDatabase::parse(old_file, "old.json");
  REQUIRE(records.size() == 1);
  CHECK(records[0].key == key_for());
  CHECK_FALSE(records[0].measurements[0].power);
  CHECK(records[0].measurements[0].metrics.empty());
  CHECK(records[0].winner->config == tile(16));
  // And the file written again reads back the same, the new fields included.
  CHECK(TuningDatabase::parse(TuningDatabase::serialize(records), "again.json")[0].key ==
        key_for());

  std::string unknown_mode = old_file;
  unknown_mode.replace(unknown_mode.find("\"size\""), 0, "\"l2\": \"cold\", ");
  check_error([&] { TuningDatabase::parse(unknown_mode, "x.json"); }, ErrorKind::io,
              "tunes[0].key.l2: unknown L2 mode 'cold'");
}

TEST_CASE(
    "a tuned run takes a record of any L2 mode and objective, its own first, and says which") {
  const TuningConfig fallback = tile(8);
  ptxrt::TuningRecord warm{key_for(L2Mode::warm), {observed(32, 1.0, 0.1)}, observed(32, 1.0, 0.1)};
  ptxrt::TuningRecord flushed{key_for(), {observed(16, 1.0, 0.1)}, observed(16, 1.0, 0.1)};

  const ptxrt::TunedChoice only_warm = ptxrt::choose({warm}, key_for(), fallback);
  CHECK(only_warm.level == ptxrt::ChoiceLevel::exact_size);
  CHECK(only_warm.config == tile(32));
  CHECK(only_warm.describe() ==
        "TILE_WIDTH=32 (exact: tuned for matmul 1024x1024x1024 on NVIDIA "
        "H100 (9.0), L2 warm, objective time)");

  CHECK(ptxrt::choose({warm, flushed}, key_for(), fallback).config == tile(16));
  CHECK(ptxrt::choose({flushed, warm}, key_for(L2Mode::warm), fallback).config == tile(32));
}

namespace {

// Times A=1..4 at 1, 2, 3 and 4 ms; the slower, the less energy (0.4, 0.3, 0.2, 0.1 J).
// Remembers the best time each config was handed, which a cut would act on.
class EnergyMeasurer : public ptxrt::Measurer {
 public:
  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    const auto a = static_cast<double>(candidate.config.at("A"));
    bests.push_back(best_ms);
    return {.config = candidate.config,
            .status = MeasurementStatus::ok,
            .median_ms = a,
            .power = PowerObservation{.energy_j = 0.5 - 0.1 * a, .power_w = 1.0}};
  }
  std::vector<std::optional<double>> bests;
};

ptxrt::TuneReport tune_four(EnergyMeasurer& measurer, Objective objective) {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2, 3, 4});
  ptxrt::TuneOptions options;
  options.compile_threads = 0;
  options.objective = std::move(objective);
  return ptxrt::tune(
      space,
      [](const TuningConfig& config) {
        return Candidate{config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
      },
      measurer, options);
}

}  // namespace

TEST_CASE("a tune for energy cuts no slower config and wins with the least energy") {
  EnergyMeasurer by_time;
  const ptxrt::TuneReport fastest = tune_four(by_time, {});
  CHECK(fastest.winner->median_ms == 1.0);
  CHECK(by_time.bests.back() == 1.0);  // the time objective hands over the best time to cut by

  EnergyMeasurer by_energy;
  const ptxrt::TuneReport least_energy = tune_four(by_energy, {.name = "energy"});
  CHECK(least_energy.winner->median_ms == 4.0);
  CHECK(by_energy.bests == std::vector<std::optional<double>>(4, std::nullopt));
}

TEST_CASE("the database records a tune under its options' L2 mode and objective") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  ptxrt::TuneOptions options;
  options.key = key_for();
  options.timing.l2 = L2Mode::warm;
  options.objective = {.name = "energy"};
  options.database = &database;
  CHECK(options.recorded_key() == key_for(L2Mode::warm, {.name = "energy"}));
  EnergyMeasurer measurer;
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2});
  options.compile_threads = 0;
  ptxrt::tune(
      space,
      [](const TuningConfig& config) {
        return Candidate{config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
      },
      measurer, options);
  const std::vector<ptxrt::TuningRecord> records = database.records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].key == options.recorded_key());
  CHECK(records[0].winner->config.at("A") == 2);
}

TEST_CASE("a problem file's metrics are work per time or energy, read, written and checked") {
  ScratchDirectory scratch;
  const KernelProblem problem = convolution_with_metrics(scratch, flop_metrics);
  REQUIRE(problem.metrics().size() == 2);
  const ptxrt::ProblemMetric& per_joule = problem.metrics()[0];  // JSON objects sort by name
  CHECK(per_joule.name == "GFLOP/J");
  CHECK(per_joule.per == ptxrt::ProblemMetric::Per::energy_j);
  CHECK(per_joule.needs_power());
  CHECK(per_joule.maximize);
  CHECK(per_joule.scale == 1e9);
  const KernelProblem again =
      KernelProblem::from_json(problem.to_json(), std::nullopt, "again", kernels);
  REQUIRE(again.metrics().size() == 2);
  CHECK(again.metrics()[1].name == "GFLOP/s");
  CHECK(again.metrics()[1].work.text() == "2 * W * H * 17 * 17");

  // 2 * 1000 * 1000 * 289 flops in 1 ms and 0.5 J.
  const ptxrt::ProblemSizes sizes = problem.complete_sizes({{"W", 1000}, {"H", 1000}});
  Measurement measurement = observed(16, 1.0, 0.5);
  measurement.config = problem.default_config();
  const std::map<std::string, double> values = ptxrt::metric_values(problem, sizes, measurement);
  CHECK(values.at("GFLOP/s") == doctest::Approx(578.0));
  CHECK(values.at("GFLOP/J") == doctest::Approx(1.156));
  measurement.power.reset();
  CHECK(std::isnan(ptxrt::metric_values(problem, sizes, measurement).at("GFLOP/J")));
}

TEST_CASE("a metric naming what does not exist, or of a wrong form, is refused naming it") {
  ScratchDirectory scratch;
  const auto refused = [&](const json& metrics, const std::string& fragment) {
    check_error([&] { convolution_with_metrics(scratch, metrics); }, ErrorKind::invalid_argument,
                fragment);
  };
  refused({{"GB/s", {{"work", "4 * W * Q"}}}}, "metrics.GB/s.work");
  refused({{"GB/s", {{"work", "W"}, {"per", "watt"}}}},
          "metrics.GB/s.per: 'watt' is not one of time_s, time_ms, energy_j, power_w");
  refused({{"GB/s", {{"work", "W"}, {"scale", 0}}}}, "metrics.GB/s.scale: must be a finite number");
  refused({{"GB/s", {{"per", "time_s"}}}}, "metrics.GB/s: expected {\"work\"");
  refused({{"GB/s", {{"work", "W"}, {"maximize", "yes"}}}}, "metrics.GB/s.maximize");
  refused({{"energy", {{"work", "W"}}}}, "metrics.energy: a metric needs a name of its own");
}

TEST_CASE("the objective is time, energy, power or a metric, in the metric's direction") {
  ScratchDirectory scratch;
  json metrics = flop_metrics;
  metrics["ms per pixel"] = {{"work", "1"}, {"per", "time_ms"}, {"maximize", false}};
  const KernelProblem problem = convolution_with_metrics(scratch, metrics);
  CHECK(ptxrt::problem_objective(problem, "energy", "--objective") == Objective{.name = "energy"});
  CHECK(ptxrt::problem_objective(problem, "GFLOP/s", "--objective") ==
        Objective{.name = "GFLOP/s", .higher_is_better = true});
  CHECK_FALSE(ptxrt::problem_objective(problem, "ms per pixel", "--objective").higher_is_better);
  check_error([&] { ptxrt::problem_objective(problem, "GB/s", "--objective"); },
              ErrorKind::invalid_argument,
              "problem.json has no such metric (objectives: time, energy, power, GFLOP/J, "
              "GFLOP/s, ms per pixel)");
}

TEST_CASE("a metric per energy without power observed is refused naming the metric") {
  ScratchDirectory scratch;
  const KernelProblem problem = convolution_with_metrics(scratch, flop_metrics);
  check_error([&] { ptxrt::timing_for(problem, {}, {}, "--objective time"); },
              ErrorKind::invalid_argument,
              "metrics.GFLOP/J is per energy_j, which a tune observes only with power");
  const KernelProblem per_second =
      convolution_with_metrics(scratch, {{"GFLOP/s", flop_metrics["GFLOP/s"]}});
  CHECK_FALSE(ptxrt::timing_for(per_second, {}, {.name = "GFLOP/s", .higher_is_better = true},
                                "--objective GFLOP/s")
                  .observe_power);
}

TEST_CASE("observing power where NVML is missing is one error naming the flag that asked") {
  if (nvml_loads()) {
    MESSAGE("libnvidia-ml.so.1 loads here: the missing-NVML error cannot happen");
    return;
  }
  ScratchDirectory scratch;
  const KernelProblem problem = convolution_with_metrics(scratch, flop_metrics);
  check_error([&] { ptxrt::timing_for(problem, {}, {.name = "energy"}, "--objective energy"); },
              ErrorKind::no_driver,
              "--objective energy observes power through NVML (libnvidia-ml.so.1");

  const ptxrt::testing::ProcessResult energy =
      cli(scratch, {"tune", "matmul", "--size", "64", "--objective", "energy"});
  CHECK(energy.exit_code == 1);
  CHECK_MESSAGE(ptxrt::testing::contains(energy.output,
                                         "--objective energy observes power "
                                         "through NVML (libnvidia-ml.so.1"),
                energy.output);
  const ptxrt::testing::ProcessResult observe =
      cli(scratch, {"tune", "matmul", "--size", "64", "--observe", "power"});
  CHECK(observe.exit_code == 1);
  CHECK_MESSAGE(ptxrt::testing::contains(observe.output, "--observe power observes power"),
                observe.output);
}

TEST_CASE("tune refuses a bad --l2, --observe or --objective before any GPU work") {
  ScratchDirectory scratch;
  const ptxrt::testing::ProcessResult l2 = cli(scratch, {"tune", "matmul", "--l2", "cold"});
  CHECK(l2.exit_code == 2);
  CHECK_MESSAGE(ptxrt::testing::contains(l2.output, "--l2: cold not in {flush,warm}"), l2.output);
  const ptxrt::testing::ProcessResult observe =
      cli(scratch, {"tune", "matmul", "--observe", "heat"});
  CHECK(observe.exit_code == 2);
  CHECK_MESSAGE(ptxrt::testing::contains(observe.output, "--observe: heat not in {none,power}"),
                observe.output);
  const ptxrt::testing::ProcessResult metric =
      cli(scratch, {"tune", "matmul", "--objective", "GFLOP/s"});
  CHECK(metric.exit_code == 1);
  CHECK_MESSAGE(ptxrt::testing::contains(metric.output,
                                         "--objective 'GFLOP/s': the builtin problem matmul has "
                                         "no metrics (objectives: time, energy, power)"),
                metric.output);
}

TEST_CASE("tune resume carries the recorded --l2 and --objective into the resumed run") {
  ScratchDirectory scratch;
  const std::string path = (scratch.path() / "tuning.json").string();
  TuningDatabase(path).begin_request(
      R"({"kernel": ["matmul"], "size": ["64"], "l2": ["cold"], "objective": ["energy"]})");
  const ptxrt::testing::ProcessResult cold = cli(scratch, {"tune", "resume", "--db", path});
  CHECK(cold.exit_code == 1);
  CHECK_MESSAGE(ptxrt::testing::contains(cold.output, "--l2: cold not in {flush,warm}"),
                cold.output);
  if (nvml_loads()) return;  // the objective would start the tune on this machine's GPU
  const fs::path fresh = scratch.path() / "fresh.json";
  TuningDatabase(fresh).begin_request(
      R"({"kernel": ["matmul"], "size": ["64"], "l2": ["warm"], "objective": ["energy"]})");
  const ptxrt::testing::ProcessResult energy =
      cli(scratch, {"tune", "resume", "--db", fresh.string()});
  CHECK(energy.exit_code == 1);
  CHECK_MESSAGE(ptxrt::testing::contains(energy.output, "--objective energy observes power"),
                energy.output);
}
