// The tuner on several measurers that finish out of order (one faster than another, configs of
// different lengths), under every strategy, with compile failures and timeouts, pruned configs,
// wrong, crashed, failed and cut ones among them, and each way a tune is cut short: a budget, a
// time limit, a stop request, a measurer that throws, and a resume of a stopped tune. Whatever
// happens, every config is accounted for exactly once, no measurement a measurer returned is
// lost (each is in the report and the database), and the winner is the fastest ok one.
// scripts/test.sh runs these under AddressSanitizer + UBSan and ThreadSanitizer too.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuner.hpp"

using ptxrt::Candidate;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;
using ptxrt::TuningStrategy;
using ptxrt::testing::ScratchDirectory;
using namespace std::chrono_literals;

namespace {

constexpr TuningStrategy every_strategy[] = {TuningStrategy::exhaustive, TuningStrategy::random,
                                             TuningStrategy::occupancy, TuningStrategy::model};
// Compiled on the tune's thread, and ahead of the measurers on a pool.
constexpr unsigned compile_thread_counts[] = {0, 3};

const std::vector<std::int64_t> b_values{1, 2, 4, 8};

// 4 × 4 × 3 = 48 configs; A=4 with B=8 (3 configs) is ruled out by a constraint.
ptxrt::TuningSpace stand_in_space() {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2, 3, 4}).add_parameter("B", b_values).add_parameter("C", {0, 1, 2});
  space.add_constraint("A=4 needs B below 8", [](const TuningConfig& config) {
    return config.at("A") == 4 && config.at("B") == 8 ? ptxrt::Verdict::refused("too wide")
                                                      : ptxrt::Verdict();
  });
  return space;
}
constexpr std::size_t allowed_count = 45;

// A config's number, 0..47, which decides its fate in the stand-ins below.
int ordinal(const TuningConfig& config) {
  const auto b = std::find(b_values.begin(), b_values.end(), config.at("B")) - b_values.begin();
  return static_cast<int>((config.at("A") - 1) * 12 + b * 3 + config.at("C"));
}

// Some configs fail to compile, some time out compiling, some are pruned by their resources; the
// rest are ready, with registers and an occupancy for the occupancy and model strategies. Takes
// 0 to 0.6 ms, so that compiles on a pool land out of order.
Candidate stand_in_compile(const TuningConfig& config) {
  const int number = ordinal(config);
  std::this_thread::sleep_for(300us * (number % 3));
  if (number % 11 == 3) throw ptxrt::Error(ptxrt::ErrorKind::compile, "does not compile");
  Candidate candidate{config, Candidate::State::ready, {}, ptxrt::KernelResources{}, {}};
  if (number % 13 == 5) {
    candidate.state = Candidate::State::compile_timeout;
    candidate.reason = "compile timed out";
    return candidate;
  }
  if (number % 9 == 7) {
    candidate.state = Candidate::State::pruned;
    candidate.reason = "too many registers";
    return candidate;
  }
  candidate.resources->registers = static_cast<int>(16 + 8 * config.at("B"));
  candidate.occupancy = ptxrt::Occupancy{};
  candidate.occupancy->fraction = std::min(1.0, 64.0 / candidate.resources->registers);
  candidate.shape = ptxrt::LaunchShape{static_cast<int>(64 * config.at("A")), 0};
  return candidate;
}

// What timing a config gives: some compute wrong, some hang (the worker is killed: crashed), some
// fail to launch; the rest take 1.0 to 3.2 ms, cut when over 1.5 × the best known.
Measurement fate(const TuningConfig& config, std::optional<double> best_ms) {
  const int number = ordinal(config);
  Measurement measurement{.config = config,
                          .status = MeasurementStatus::ok,
                          .median_ms = 1.0 + (number * 37 % 23) / 10.0};
  if (number % 7 == 2)
    measurement.status = MeasurementStatus::wrong;
  else if (number % 10 == 6)
    measurement = {.config = config, .status = MeasurementStatus::crashed, .detail = "timed out"};
  else if (number % 17 == 4)
    measurement = {
        .config = config, .status = MeasurementStatus::failed, .detail = "launch refused"};
  else if (best_ms && measurement.median_ms > *best_ms * 1.5)
    measurement.status = MeasurementStatus::cut;
  return measurement;
}

// What all the measurers of one tune share: how many calls they have had, and the stop request
// one of them makes at a given call (0: never).
struct SharedCalls {
  std::atomic<int> count{0};
  std::atomic<bool> stop{false};
  int stop_at = 0;
};

// Times by fate() after sleeping its pace × 1..4 (by the config), so that configs finish out of
// order and one measurer outpaces another. Throws at its own call `throw_at` (0: never).
// Remembers what it returned.
class PacedMeasurer : public ptxrt::Measurer {
 public:
  PacedMeasurer(int device, std::chrono::milliseconds pace, SharedCalls& calls)
      : device_(device), pace_(pace), calls_(calls) {}

  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    if (++own_calls_ == throw_at)
      throw ptxrt::Error(ptxrt::ErrorKind::driver, "device " + std::to_string(device_) + " lost");
    if (++calls_.count == calls_.stop_at) calls_.stop = true;
    std::this_thread::sleep_for(pace_ * (1 + ordinal(candidate.config) % 4));
    Measurement measurement = fate(candidate.config, best_ms);
    measurement.device = device_;
    returned.push_back(measurement);
    return measurement;
  }

  int throw_at = 0;
  std::vector<Measurement> returned;

 private:
  int device_;
  std::chrono::milliseconds pace_;
  SharedCalls& calls_;
  int own_calls_ = 0;
};

ptxrt::TuningKey test_key() { return {"stand-in", "hash", "A, B, C", "device", "9.0", 13000, {1}}; }

// One tune on three measurers of different paces, recording in `database` when given. (A
// database write syncs the file, which takes milliseconds: the tests of cuts made inside a tune
// leave it out, so that the measurers' calls overlap as on GPUs.)
class ThreeMeasurers {
 public:
  explicit ThreeMeasurers(std::optional<std::filesystem::path> database = std::nullopt) {
    if (database) database_.emplace(std::move(*database));
    for (const auto& [device, pace] : {std::pair{0, 1ms}, {1, 3ms}, {2, 2ms}}) {
      owned_.push_back(std::make_unique<PacedMeasurer>(device, pace, calls));
      measurers_.push_back(owned_.back().get());
    }
  }

  ptxrt::TuneOptions options(TuningStrategy strategy, unsigned compile_threads) const {
    ptxrt::TuneOptions options;
    options.strategy = strategy;
    options.compile_threads = compile_threads;
    options.seed = 5;
    options.stop = &calls.stop;
    options.database = database_ ? &*database_ : nullptr;
    options.key = test_key();
    return options;
  }

  ptxrt::TuneReport tune(const ptxrt::TuneOptions& options) {
    return ptxrt::tune(stand_in_space(), stand_in_compile, measurers_, options);
  }

  PacedMeasurer& measurer(std::size_t index) { return *owned_.at(index); }

  std::size_t measurers_used() const {
    return static_cast<std::size_t>(
        std::count_if(owned_.begin(), owned_.end(),
                      [](const auto& measurer) { return !measurer->returned.empty(); }));
  }

  // Every measurement the measurers returned, by config.
  std::map<std::string, Measurement> returned() const {
    std::map<std::string, Measurement> by_config;
    for (const auto& measurer : owned_)
      for (const Measurement& measurement : measurer->returned)
        CHECK(by_config.emplace(measurement.config.describe(), measurement).second);
    return by_config;
  }

  // What the database holds, by config; nothing without one.
  std::map<std::string, Measurement> recorded() const {
    std::map<std::string, Measurement> by_config;
    if (!database_) return by_config;
    for (const Measurement& measurement : database_->measurements(test_key()))
      by_config.emplace(measurement.config.describe(), measurement);
    return by_config;
  }

  SharedCalls calls;

 private:
  std::optional<ptxrt::TuningDatabase> database_;
  std::vector<std::unique_ptr<PacedMeasurer>> owned_;
  std::vector<ptxrt::Measurer*> measurers_;
};

void check_same_outcome(const Measurement& found, const Measurement& returned) {
  CAPTURE(returned.config.describe());
  CHECK(found.status == returned.status);
  CHECK(found.median_ms == returned.median_ms);
  CHECK(found.device == returned.device);
}

// Every allowed config is in exactly one of the report's lists (timed, failed to compile, pruned
// by its resources, resumed) or counted as not reached.
void check_each_config_accounted_for_once(const ptxrt::TuneReport& report) {
  std::vector<std::string> seen;
  for (const ptxrt::TuneResult& result : report.results)
    seen.push_back(result.measurement.config.describe());
  for (const ptxrt::PrunedConfig& failure : report.compile_failures)
    seen.push_back(failure.config.describe());
  for (const ptxrt::PrunedConfig& pruned : report.pruned_by_resources)
    seen.push_back(pruned.config.describe());
  for (const Measurement& resumed : report.resumed) seen.push_back(resumed.config.describe());
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == seen.size());
  CHECK(seen.size() + report.not_reached == allowed_count);
  CHECK(report.space_size == 48);
  CHECK(report.pruned_by_constraints.size() == 3);
  CHECK(report.compiled == report.results.size() + report.pruned_by_resources.size());
}

// Each measurement a measurer returned is in `found` as returned.
void check_holds_every_returned(const std::map<std::string, Measurement>& found,
                                const ThreeMeasurers& tune) {
  for (const auto& [config, measurement] : tune.returned()) {
    const auto held = found.find(config);
    REQUIRE(held != found.end());
    check_same_outcome(held->second, measurement);
  }
}

// Each measurement a measurer returned is in the report's results, which hold nothing else, and
// in the database (when there is one), which holds no config as still running.
void check_no_measurement_lost(const ptxrt::TuneReport& report, const ThreeMeasurers& tune) {
  std::map<std::string, Measurement> results;
  for (const ptxrt::TuneResult& result : report.results)
    results.emplace(result.measurement.config.describe(), result.measurement);
  CHECK(report.results.size() == tune.returned().size());
  check_holds_every_returned(results, tune);
  const std::map<std::string, Measurement> recorded = tune.recorded();
  if (recorded.empty()) return;
  check_holds_every_returned(recorded, tune);
  for (const auto& [recorded_config, measurement] : recorded) {
    const auto& config = recorded_config;  // clang before 16 captures no binding
    CAPTURE(config);
    CHECK(measurement.finished());
  }
}

// The winner is the fastest ok measurement, this run's or resumed.
void check_winner_is_fastest_ok(const ptxrt::TuneReport& report) {
  std::vector<Measurement> all = report.resumed;
  for (const ptxrt::TuneResult& result : report.results) all.push_back(result.measurement);
  const std::optional<Measurement> fastest = ptxrt::fastest(all);
  REQUIRE(report.winner.has_value() == fastest.has_value());
  if (!fastest) return;
  CHECK(report.winner->config == fastest->config);
  CHECK(report.winner->median_ms == fastest->median_ms);
  CHECK(report.winner->status == MeasurementStatus::ok);
}

void check_report(const ptxrt::TuneReport& report, const ThreeMeasurers& tune) {
  check_each_config_accounted_for_once(report);
  check_no_measurement_lost(report, tune);
  check_winner_is_fastest_ok(report);
}

// Runs `body(strategy, compile_threads)` for every strategy, compiled inline and on a pool.
template <typename Body>
void for_every_strategy(const Body& body) {
  for (TuningStrategy strategy : every_strategy)
    for (unsigned compile_threads : compile_thread_counts) {
      CAPTURE(to_string(strategy));
      CAPTURE(compile_threads);
      body(strategy, compile_threads);
    }
}

}  // namespace

TEST_CASE(
    "several measurers finishing out of order: every strategy accounts for each config "
    "once, loses no measurement and picks the fastest ok one") {
  for_every_strategy([](TuningStrategy strategy, unsigned compile_threads) {
    ThreeMeasurers tune;
    const ptxrt::TuneReport report = tune.tune(tune.options(strategy, compile_threads));
    check_report(report, tune);
    CHECK(report.not_reached == 0);
    CHECK(report.compile_failures.size() == 8);
    CHECK(report.compile_timeouts == 4);
    CHECK(report.pruned_by_resources.size() == 4);
    CHECK(report.results.size() == 33);
    CHECK(tune.measurers_used() > 1);
  });
}

TEST_CASE(
    "several measurers and a budget: every strategy times exactly the budget and counts the "
    "rest as not reached") {
  for_every_strategy([](TuningStrategy strategy, unsigned compile_threads) {
    ThreeMeasurers tune;
    ptxrt::TuneOptions options = tune.options(strategy, compile_threads);
    options.budget = 10;
    const ptxrt::TuneReport report = tune.tune(options);
    check_report(report, tune);
    CHECK(report.results.size() == 10);
    CHECK(report.not_reached > 0);
  });
}

TEST_CASE(
    "several measurers and a stop request mid-tune: every strategy records what the "
    "measurers hold and starts nothing more") {
  for_every_strategy([](TuningStrategy strategy, unsigned compile_threads) {
    ThreeMeasurers tune;
    tune.calls.stop_at = 8;
    const ptxrt::TuneReport report = tune.tune(tune.options(strategy, compile_threads));
    check_report(report, tune);
    // The 8th call asks to stop: what the three measurers hold by then finishes, and nothing
    // starts after it.
    CHECK(report.results.size() >= 8);
    CHECK(report.results.size() <= 8 + 2);
    CHECK(report.not_reached > 0);
  });
}

TEST_CASE(
    "several measurers and a time limit: every strategy records what it started and counts "
    "the rest as not reached") {
  for_every_strategy([](TuningStrategy strategy, unsigned compile_threads) {
    ThreeMeasurers tune;
    ptxrt::TuneOptions options = tune.options(strategy, compile_threads);
    options.time_limit_seconds = 0.005;
    const ptxrt::TuneReport report = tune.tune(options);
    check_report(report, tune);
    CHECK(report.not_reached > 0);
  });
}

TEST_CASE(
    "several measurers and one that throws: every strategy records what the others "
    "finished, then throws") {
  for_every_strategy([](TuningStrategy strategy, unsigned compile_threads) {
    ScratchDirectory scratch;
    ThreeMeasurers tune(scratch.path() / "tuning.json");
    tune.measurer(0).throw_at = 3;
    CHECK_THROWS_WITH_AS(tune.tune(tune.options(strategy, compile_threads)), "device 0 lost",
                         ptxrt::Error);
    CHECK(tune.returned().size() >= 2);
    const std::map<std::string, Measurement> recorded = tune.recorded();
    check_holds_every_returned(recorded, tune);
    // The config the throwing measurer held stays recorded as started: interrupted.
    CHECK(std::count_if(recorded.begin(), recorded.end(),
                        [](const auto& entry) { return !entry.second.finished(); }) == 1);
  });
}

TEST_CASE(
    "several measurers and a resumed tune: every strategy times exactly what the stopped "
    "tune left") {
  for_every_strategy([](TuningStrategy strategy, unsigned compile_threads) {
    ScratchDirectory scratch;
    ThreeMeasurers stopped(scratch.path() / "tuning.json");
    stopped.calls.stop_at = 6;
    const ptxrt::TuneReport first = stopped.tune(stopped.options(strategy, compile_threads));
    check_report(first, stopped);
    ThreeMeasurers resumed(scratch.path() / "tuning.json");
    ptxrt::TuneOptions options = resumed.options(strategy, compile_threads);
    options.resume = true;
    const ptxrt::TuneReport second = resumed.tune(options);
    check_report(second, resumed);
    CHECK(second.not_reached == 0);
    CHECK(second.resumed.size() == first.results.size() + first.compile_failures.size());
    for (const auto& [returned_config, measurement] : resumed.returned()) {
      const auto& config = returned_config;  // clang before 16 captures no binding
      CAPTURE(config);
      CHECK(stopped.returned().count(config) == 0);
    }
    CHECK(first.results.size() + second.results.size() == 33);
  });
}
