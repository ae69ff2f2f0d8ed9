// The interrupted-tune row of the bad-input matrix (tests/cpu/bad_input_tests.cpp): a tune stopped
// by request, by a crash or by SIGKILL loses no recorded measurement, and --resume finishes it.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace fs = std::filesystem;
using ptxrt::Error;
using ptxrt::ErrorKind;
using ptxrt::testing::check_error;
using ptxrt::testing::ScratchDirectory;

// The interrupted-tune row (through the CLI, with Ctrl-C and SIGKILL: the GPU suite). Eight
// configs V=1..8, timed from a table whose fastest is V=6, by a measurer that raises the stop
// request (as the CLI's Ctrl-C handler does) or throws (as a crash ends the tuning process) in
// the middle of a config.
namespace {

using ptxrt::Candidate;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;
using ptxrt::TuningDatabase;

constexpr double table_ms[] = {3.0, 2.5, 4.0, 1.5, 2.0, 0.75, 1.25, 5.0};

ptxrt::TuningSpace eight_configs() {
  ptxrt::TuningSpace space;
  space.add_parameter("V", {1, 2, 3, 4, 5, 6, 7, 8});
  return space;
}

Candidate ready(const TuningConfig& config) {
  return {config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
}

class TableMeasurer : public ptxrt::Measurer {
 public:
  Measurement measure(const Candidate& candidate, std::optional<double>) override {
    const std::int64_t value = candidate.config.at("V");
    asked.insert(value);
    if (asked.size() == throw_at)
      throw Error(ErrorKind::driver,
                  "the tuning process died while timing V=" + std::to_string(value));
    if (asked.size() == stop_at) stop.store(true);
    std::this_thread::sleep_for(pause);
    return {.config = candidate.config,
            .status = MeasurementStatus::ok,
            .median_ms = table_ms[static_cast<std::size_t>(value - 1)]};
  }
  std::set<std::int64_t> asked;
  std::size_t stop_at = 0;   // raise `stop` while timing the config with this number (from 1)
  std::size_t throw_at = 0;  // throw while timing the config with this number
  std::chrono::milliseconds pause{0};
  std::atomic<bool> stop{false};
};

ptxrt::TuneReport tune_into(const TuningDatabase& database, TableMeasurer& measurer, bool resume,
                            unsigned compile_threads = 2) {
  ptxrt::TuneOptions options;
  options.compile_threads = compile_threads;
  options.database = &database;
  options.key = {"table", "hash", "V in 1..8", "device", "9.0", 13000, {64}};
  options.resume = resume;
  options.stop = &measurer.stop;
  return ptxrt::tune(eight_configs(), ready, measurer, options);
}

// Every config the database holds, with its status: {1: "ok", 4: "started"}.
std::map<std::int64_t, std::string> recorded(const TuningDatabase& database) {
  std::map<std::int64_t, std::string> statuses;
  for (const ptxrt::TuningRecord& record : database.records())
    for (const Measurement& measurement : record.measurements)
      statuses[measurement.config.at("V")] = ptxrt::to_string(measurement.status);
  return statuses;
}

std::set<std::int64_t> with_status(const std::map<std::int64_t, std::string>& statuses,
                                   std::string_view status) {
  std::set<std::int64_t> values;
  for (const auto& [value, recorded_status] : statuses)
    if (recorded_status == status) values.insert(value);
  return values;
}

std::set<std::int64_t> all_but(const std::set<std::int64_t>& done) {
  std::set<std::int64_t> rest;
  for (std::int64_t value = 1; value <= 8; ++value)
    if (!done.contains(value)) rest.insert(value);
  return rest;
}

std::set<std::string> files_in(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory))
    names.insert(entry.path().filename().string());
  return names;
}

// The winner an uninterrupted tune finds: what a resumed one must find too.
TuningConfig uninterrupted_winner() {
  ScratchDirectory scratch;
  TableMeasurer measurer;
  const ptxrt::TuneReport report =
      tune_into(TuningDatabase(scratch.path() / "tuning.json"), measurer, false);
  REQUIRE(report.winner);
  return report.winner->config;
}

}  // namespace

TEST_CASE(
    "interrupted tune: a stop request ends it after the config in progress, and --resume "
    "times only the rest and finds the same winner") {
  const TuningConfig winner = uninterrupted_winner();
  CHECK(winner == TuningConfig(std::vector<ptxrt::Define>{{"V", "6"}}));
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  TableMeasurer interrupted;
  interrupted.stop_at = 3;
  const ptxrt::TuneReport stopped = tune_into(database, interrupted, false);
  CHECK(interrupted.asked.size() == 3);
  CHECK(stopped.results.size() == 3);
  CHECK(stopped.not_reached == 5);
  // The config in progress when the stop came was finished and recorded, like those before it.
  const std::map<std::int64_t, std::string> after_stop = recorded(database);
  CHECK(after_stop.size() == 3);
  CHECK(with_status(after_stop, "ok") == interrupted.asked);
  CHECK(files_in(scratch.path()) == std::set<std::string>{"tuning.json", "tuning.json.lock"});

  TableMeasurer resumed;
  const ptxrt::TuneReport report = tune_into(database, resumed, true);
  CHECK(resumed.asked == all_but(interrupted.asked));
  CHECK(report.resumed.size() == 3);
  CHECK(report.not_reached == 0);
  REQUIRE(report.winner);
  CHECK(report.winner->config == winner);
  CHECK(with_status(recorded(database), "ok") == all_but({}));
}

TEST_CASE(
    "interrupted tune: a process that dies in a config keeps every finished measurement, "
    "and --resume redoes the one it died in") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  TableMeasurer crashing;
  crashing.throw_at = 4;
  check_error([&] { tune_into(database, crashing, false, 0); }, ErrorKind::driver,
              "the tuning process died while timing V=4");
  const std::map<std::int64_t, std::string> after_crash = recorded(database);
  CHECK(with_status(after_crash, "ok") == std::set<std::int64_t>{1, 2, 3});
  CHECK(with_status(after_crash, "started") == std::set<std::int64_t>{4});

  TableMeasurer resumed;
  const ptxrt::TuneReport report = tune_into(database, resumed, true, 0);
  CHECK(resumed.asked == std::set<std::int64_t>{4, 5, 6, 7, 8});
  CHECK(report.resumed.size() == 3);
  REQUIRE(report.winner);
  CHECK(report.winner->config == uninterrupted_winner());
  CHECK(with_status(recorded(database), "ok") == all_but({}));
}

TEST_CASE(
    "interrupted tune: SIGKILL in the middle leaves a whole database, and --resume "
    "completes it without leaving a temporary file") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Slow enough per config that the parent kills it half-way.
    TableMeasurer slow;
    slow.pause = std::chrono::milliseconds(50);
    try {
      tune_into(TuningDatabase(path), slow, false, 0);
    } catch (...) {
    }
    ::_exit(0);
  }
  const TuningDatabase database(path);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (with_status(recorded(database), "ok").size() < 3 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));

  // Whatever instant the kill came at, the file is a whole database: the old one or the new.
  const std::map<std::int64_t, std::string> after_kill = recorded(database);
  const std::set<std::int64_t> finished = with_status(after_kill, "ok");
  CHECK(finished.size() >= 3);
  CHECK(finished.size() < 8);
  CHECK(with_status(after_kill, "started").size() <= 1);

  TableMeasurer resumed;
  const ptxrt::TuneReport report = tune_into(database, resumed, true, 0);
  CHECK(resumed.asked == all_but(finished));
  REQUIRE(report.winner);
  CHECK(report.winner->config == uninterrupted_winner());
  CHECK(with_status(recorded(database), "ok") == all_but({}));
  CHECK(files_in(scratch.path()) == std::set<std::string>{"tuning.json", "tuning.json.lock"});
}
