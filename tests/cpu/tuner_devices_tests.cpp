// The tuner timing on several measurers at once (one per GPU in `ptxrt tune --devices`), with
// fake measurers: each is used from a thread of its own while the others work, the results are
// the single-measurer tune's, and the best time crosses from one measurer to the others.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuner.hpp"

using ptxrt::Candidate;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;
using namespace std::chrono_literals;

namespace {

Candidate ready(const TuningConfig& config) {
  return {config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
}

ptxrt::TuningSpace space_of(std::int64_t count) {
  std::vector<std::int64_t> values;
  for (std::int64_t a = 1; a <= count; ++a) values.push_back(a);
  ptxrt::TuningSpace space;
  space.add_parameter("A", values);
  return space;
}

// Times A from a table after sleeping a while, cutting what is over 1.5 × the best it is given,
// and names its device. Remembers what it was asked, with which best, from which thread.
class TableMeasurer : public ptxrt::Measurer {
 public:
  TableMeasurer(int device, std::map<std::int64_t, double> times,
                std::chrono::milliseconds sleep = 5ms)
      : device_(device), times_(std::move(times)), sleep_(sleep) {}

  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    std::this_thread::sleep_for(sleep_);
    const std::int64_t a = candidate.config.at("A");
    asked.push_back(a);
    bests[a] = best_ms;
    threads.insert(std::this_thread::get_id());
    Measurement measurement;
    measurement.median_ms = times_.at(a);
    measurement.status = best_ms && measurement.median_ms > *best_ms * 1.5 ? MeasurementStatus::cut
                                                                           : MeasurementStatus::ok;
    measurement.device = device_;
    return measurement;
  }

  std::vector<std::int64_t> asked;
  std::map<std::int64_t, std::optional<double>> bests;
  std::set<std::thread::id> threads;

 private:
  int device_;
  std::map<std::int64_t, double> times_;
  std::chrono::milliseconds sleep_;
};

// Config, status and median of every result, in config order.
std::map<std::int64_t, std::pair<MeasurementStatus, double>> outcomes(
    const ptxrt::TuneReport& report) {
  std::map<std::int64_t, std::pair<MeasurementStatus, double>> by_config;
  for (const ptxrt::TuneResult& result : report.results)
    by_config[result.measurement.config.at("A")] = {result.measurement.status,
                                                    result.measurement.median_ms};
  return by_config;
}

ptxrt::TuneOptions inline_compile() {
  ptxrt::TuneOptions options;
  options.compile_threads = 0;
  return options;
}

}  // namespace

TEST_CASE("two measurers time at once, each from a thread of its own") {
  // Each call waits (up to 5 s) until a call on the other measurer is running beside it.
  struct Meeting {
    std::mutex mutex;
    std::condition_variable changed;
    int running = 0;
    bool met = false;
  } meeting;
  struct MeetingMeasurer : ptxrt::Measurer {
    Meeting* meeting = nullptr;
    std::set<std::thread::id> threads;
    int calls = 0;
    Measurement measure(const Candidate& candidate, std::optional<double>) override {
      threads.insert(std::this_thread::get_id());
      ++calls;
      std::unique_lock lock(meeting->mutex);
      meeting->met = meeting->met || ++meeting->running == 2;
      meeting->changed.notify_all();
      meeting->changed.wait_for(lock, 5s, [&] { return meeting->met; });
      --meeting->running;
      return {.config = candidate.config,
              .status = meeting->met ? MeasurementStatus::ok : MeasurementStatus::failed,
              .median_ms = 1.0};
    }
  } first, second;
  first.meeting = second.meeting = &meeting;
  ptxrt::Measurer* const measurers[] = {&first, &second};
  const ptxrt::TuneReport report = ptxrt::tune(space_of(6), ready, measurers, inline_compile());
  CHECK(meeting.met);
  REQUIRE(report.results.size() == 6);
  for (const ptxrt::TuneResult& result : report.results)
    CHECK(result.measurement.status == MeasurementStatus::ok);
  CHECK(first.calls >= 1);
  CHECK(second.calls >= 1);
  CHECK(first.calls + second.calls == 6);
  REQUIRE(first.threads.size() == 1);
  REQUIRE(second.threads.size() == 1);
  CHECK(*first.threads.begin() != *second.threads.begin());
  CHECK(first.threads.count(std::this_thread::get_id()) == 0);
}

TEST_CASE("a tune on two measurers has the single-measurer tune's results and winner") {
  const std::map<std::int64_t, double> times{{1, 2.9}, {2, 2.5}, {3, 2.7}, {4, 2.0},
                                             {5, 2.6}, {6, 2.2}, {7, 2.1}, {8, 2.05}};
  TableMeasurer alone(0, times);
  const ptxrt::TuneReport one = ptxrt::tune(space_of(8), ready, alone, inline_compile());
  TableMeasurer first(0, times), second(1, times);
  ptxrt::Measurer* const measurers[] = {&first, &second};
  const ptxrt::TuneReport two = ptxrt::tune(space_of(8), ready, measurers, inline_compile());
  // No time here is over 1.5 × another, so nothing is cut, whatever order the results land in.
  CHECK(outcomes(two) == outcomes(one));
  REQUIRE(two.winner);
  CHECK(two.winner->config == one.winner->config);
  CHECK(two.winner->config.at("A") == 4);
  CHECK(two.results.size() == 8);
  CHECK(two.not_reached == 0);
  CHECK(first.asked.size() + second.asked.size() == 8);
  // Each result names the measurer that took it.
  for (const ptxrt::TuneResult& result : two.results) {
    const std::int64_t a = result.measurement.config.at("A");
    const bool by_first = std::count(first.asked.begin(), first.asked.end(), a) == 1;
    CHECK(result.measurement.device == (by_first ? 0 : 1));
  }
}

TEST_CASE("a config handed over after a measurement landed on one measurer is cut by its time") {
  const std::map<std::int64_t, double> times{{1, 1.0}, {2, 1.0}, {3, 5.0},
                                             {4, 5.0}, {5, 5.0}, {6, 5.0}};
  TableMeasurer first(0, times, 20ms), second(1, times, 20ms);
  ptxrt::Measurer* const measurers[] = {&first, &second};
  const ptxrt::TuneReport report = ptxrt::tune(space_of(6), ready, measurers, inline_compile());
  std::map<std::int64_t, std::optional<double>> bests = first.bests;
  bests.insert(second.bests.begin(), second.bests.end());
  CHECK(bests.at(1) == std::nullopt);
  // A=1 and A=2 take 1.0 on both; every later config waited for one of them to land.
  for (std::int64_t a = 3; a <= 6; ++a) {
    CAPTURE(a);
    CHECK(bests.at(a) == 1.0);
    CHECK(outcomes(report).at(a).first == MeasurementStatus::cut);
  }
  REQUIRE(report.winner);
  CHECK(report.winner->median_ms == 1.0);
}

TEST_CASE("with two measurers the budget counts the configs handed over") {
  const std::map<std::int64_t, double> times{{1, 1.0}, {2, 1.0}, {3, 1.0},
                                             {4, 1.0}, {5, 1.0}, {6, 1.0}};
  TableMeasurer first(0, times), second(1, times);
  ptxrt::Measurer* const measurers[] = {&first, &second};
  ptxrt::TuneOptions options = inline_compile();
  options.budget = 3;
  const ptxrt::TuneReport report = ptxrt::tune(space_of(6), ready, measurers, options);
  CHECK(report.results.size() == 3);
  CHECK(first.asked.size() + second.asked.size() == 3);
  CHECK(report.not_reached == 3);
}

TEST_CASE("a measurer's throw ends the tune once the other has finished what it holds") {
  struct Slow : ptxrt::Measurer {
    int started = 0;
    int finished = 0;
    Measurement measure(const Candidate& candidate, std::optional<double>) override {
      ++started;
      std::this_thread::sleep_for(100ms);
      ++finished;
      return {.config = candidate.config, .status = MeasurementStatus::ok, .median_ms = 1.0};
    }
  } slow;
  struct Broken : ptxrt::Measurer {
    Measurement measure(const Candidate&, std::optional<double>) override {
      throw ptxrt::Error(ptxrt::ErrorKind::driver, "the tuning worker could not start: no GPU");
    }
  } broken;
  ptxrt::Measurer* const measurers[] = {&slow, &broken};
  CHECK_THROWS_WITH_AS(ptxrt::tune(space_of(6), ready, measurers, inline_compile()),
                       "the tuning worker could not start: no GPU", ptxrt::Error);
  CHECK(slow.finished >= 1);
  CHECK(slow.finished == slow.started);
}

TEST_CASE("a tune needs at least one measurer, and no null one") {
  TableMeasurer measurer(0, {{1, 1.0}});
  CHECK_THROWS_WITH_AS(
      ptxrt::tune(space_of(1), ready, std::span<ptxrt::Measurer* const>(), inline_compile()),
      "tune: no measurer given", ptxrt::Error);
  ptxrt::Measurer* const with_null[] = {&measurer, nullptr};
  CHECK_THROWS_WITH_AS(ptxrt::tune(space_of(1), ready, with_null, inline_compile()),
                       "tune: measurer 1 is null", ptxrt::Error);
}
