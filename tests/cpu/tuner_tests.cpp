#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "disk_cache_test_support.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuner.hpp"

using ptxrt::Candidate;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;
using ptxrt::testing::ScratchDirectory;

namespace {

ptxrt::DeviceProperties h100() {
  ptxrt::DeviceProperties device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.cc_major = 9;
  device.cc_minor = 0;
  device.max_threads_per_block = 1024;
  device.max_threads_per_sm = 2048;
  device.max_blocks_per_sm = 32;
  device.shared_memory_per_block = 49152;
  device.shared_memory_per_block_optin = 232448;
  device.shared_memory_per_sm = 233472;
  device.registers_per_block = 65536;
  device.registers_per_sm = 65536;
  device.driver_version = 13000;
  return device;
}

ptxrt::KernelResources kernel(int registers, std::size_t shared = 0, int launch_bound = 0) {
  ptxrt::KernelResources resources;
  resources.name = "k";
  resources.registers = registers;
  resources.static_shared_bytes = shared;
  resources.max_threads_per_block = launch_bound;
  return resources;
}

// A = 1..6: A=2 does not compile, A=3 needs too many registers; the rest are ready, with a
// predicted occupancy of A/10.
Candidate fake_compile(const TuningConfig& config) {
  const std::int64_t a = config.at("A");
  if (a == 2) throw ptxrt::Error(ptxrt::ErrorKind::compile, "A=2 does not compile");
  Candidate candidate{config, Candidate::State::ready, {}, kernel(static_cast<int>(10 * a)), {}};
  if (a == 3) {
    candidate.state = Candidate::State::pruned;
    candidate.reason = "too many registers";
    return candidate;
  }
  candidate.occupancy = ptxrt::Occupancy{};
  candidate.occupancy->fraction = static_cast<double>(a) / 10.0;
  return candidate;
}

// Times from a table; A=4 computes wrong, A=5 kills its worker. Remembers what it was asked.
class FakeMeasurer : public ptxrt::Measurer {
 public:
  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    const std::int64_t a = candidate.config.at("A");
    asked.push_back(a);
    bests.push_back(best_ms);
    Measurement measurement;
    measurement.config = candidate.config;
    measurement.status = a == 4   ? MeasurementStatus::wrong
                         : a == 5 ? MeasurementStatus::crashed
                                  : MeasurementStatus::ok;
    measurement.median_ms = times.at(a);
    return measurement;
  }
  std::map<std::int64_t, double> times{{1, 3.0}, {2, 1.0}, {3, 1.0}, {4, 0.5}, {5, 0.5}, {6, 2.0}};
  std::vector<std::int64_t> asked;
  std::vector<std::optional<double>> bests;
};

ptxrt::TuningSpace six() {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2, 3, 4, 5, 6});
  return space;
}

TuningConfig a(std::int64_t value) { return TuningConfig({{"A", std::to_string(value)}}); }

ptxrt::TuningKey test_key() {
  return {"fake", "hash", "A in {1,2,3,4,5,6}", "device", "9.0", 13000, {64}};
}

std::vector<std::string> statuses(const ptxrt::TuneReport& report) {
  std::vector<std::string> texts;
  for (const ptxrt::TuneResult& result : report.results)
    texts.push_back(result.measurement.config.describe() + " " +
                    std::string(ptxrt::to_string(result.measurement.status)));
  return texts;
}

}  // namespace

TEST_CASE("launch_fits names the limit a recorded resource report breaks") {
  const ptxrt::DeviceProperties device = h100();
  CHECK(ptxrt::launch_fits(kernel(64), {1024, 0}, device));
  CHECK(
      ptxrt::launch_fits(kernel(72), {1024, 0}, device) ==
      ptxrt::Verdict::refused("72 registers × 1024 threads exceed the 65536 registers of a block"));
  CHECK(ptxrt::launch_fits(kernel(32), {2048, 0}, device).reason() ==
        "a block of 2048 threads exceeds the device's 1024");
  CHECK(ptxrt::launch_fits(kernel(32, 0, 256), {512, 0}, device).reason() ==
        "a block of 512 threads exceeds the kernel's launch bound of 256");
  CHECK(ptxrt::launch_fits(kernel(32, 200000), {256, 40000}, device).reason() ==
        "240000 bytes of shared memory per block exceed the device's 232448");
  CHECK_FALSE(ptxrt::launch_fits(kernel(32), {0, 0}, device));
  CHECK(ptxrt::launch_fits(kernel(32), {0, 0}, device).reason() ==
        "a block of 0 threads cannot launch");
}

TEST_CASE("a tune records every config's fate, goes on past failures and picks the fastest ok") {
  ScratchDirectory scratch;
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  FakeMeasurer measurer;
  ptxrt::TuneOptions options;
  options.compile_threads = 0;
  options.database = &database;
  options.key = test_key();
  const ptxrt::TuneReport report = ptxrt::tune(six(), fake_compile, measurer, options);
  CHECK(report.space_size == 6);
  REQUIRE(report.compile_failures.size() == 1);
  CHECK(report.compile_failures[0].config == a(2));
  CHECK(report.compile_failures[0].reason == "A=2 does not compile");
  REQUIRE(report.pruned_by_resources.size() == 1);
  CHECK(report.pruned_by_resources[0].reason == "too many registers");
  CHECK(report.compiled == 5);
  CHECK(statuses(report) ==
        std::vector<std::string>{"A=1 ok", "A=4 wrong", "A=5 crashed", "A=6 ok"});
  // Each measurer call knew the best ok time so far.
  CHECK(measurer.bests == std::vector<std::optional<double>>{std::nullopt, 3.0, 3.0, 3.0});
  REQUIRE(report.winner);
  CHECK(report.winner->config == a(6));
  // The database holds every finished measurement, the compile failure included.
  std::set<std::string> recorded;
  for (const Measurement& m : database.measurements(test_key()))
    recorded.insert(m.config.describe() + " " + std::string(ptxrt::to_string(m.status)));
  CHECK(recorded ==
        std::set<std::string>{"A=1 ok", "A=2 failed", "A=4 wrong", "A=5 crashed", "A=6 ok"});
}

TEST_CASE("resume measures only the configs without a finished measurement") {
  ScratchDirectory scratch;
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  Measurement done;
  done.config = a(1);
  done.status = MeasurementStatus::ok;
  done.median_ms = 0.25;
  database.record(test_key(), done);
  Measurement interrupted;  // handed to the GPU when the tune was killed
  interrupted.config = a(6);
  database.record(test_key(), interrupted);
  Measurement failed;
  failed.config = a(2);
  failed.status = MeasurementStatus::failed;
  database.record(test_key(), failed);

  FakeMeasurer measurer;
  ptxrt::TuneOptions options;
  options.compile_threads = 0;
  options.database = &database;
  options.key = test_key();
  options.resume = true;
  const ptxrt::TuneReport report = ptxrt::tune(six(), fake_compile, measurer, options);
  CHECK(measurer.asked == std::vector<std::int64_t>{4, 5, 6});
  CHECK(report.resumed.size() == 2);
  CHECK(report.compile_failures.empty());
  REQUIRE(report.winner);
  CHECK(report.winner->config == a(1));
  CHECK(report.winner->median_ms == 0.25);
  CHECK(measurer.bests.front() == 0.25);
}

TEST_CASE("occupancy ordering times the highest predicted occupancy first, within the budget") {
  FakeMeasurer measurer;
  ptxrt::TuneOptions options;
  options.strategy = ptxrt::TuningStrategy::occupancy;
  options.compile_threads = 3;
  options.budget = 2;
  const ptxrt::TuneReport report = ptxrt::tune(six(), fake_compile, measurer, options);
  CHECK(measurer.asked == std::vector<std::int64_t>{6, 5});
  CHECK(report.compile_failures.size() == 1);
  CHECK(report.pruned_by_resources.size() == 1);
  CHECK(report.not_reached == 2);
}

TEST_CASE("the random strategy with a budget times that many distinct configs") {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 6}).add_parameter("B", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  const auto compile = [](const TuningConfig& config) {
    return Candidate{config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
  };
  const auto order_for = [&](std::uint64_t seed) {
    std::vector<std::string> order;
    struct Recorder : ptxrt::Measurer {
      std::vector<std::string>* order;
      Measurement measure(const Candidate& candidate, std::optional<double>) override {
        order->push_back(candidate.config.describe());
        return Measurement{
            .config = candidate.config, .status = MeasurementStatus::ok, .median_ms = 1.0};
      }
    } recorder;
    recorder.order = &order;
    ptxrt::TuneOptions options;
    options.strategy = ptxrt::TuningStrategy::random;
    options.budget = 5;
    options.seed = seed;
    options.compile_threads = 0;
    ptxrt::tune(space, compile, recorder, options);
    return order;
  };
  const std::vector<std::string> first = order_for(1);
  CHECK(first.size() == 5);
  CHECK(std::set<std::string>(first.begin(), first.end()).size() == 5);
  CHECK(order_for(1) == first);
  CHECK(order_for(2) != first);
}

TEST_CASE("shares deal the configs round robin, each timing its part of the budget") {
  // The random order of seed 3 is dealt: the shares together time what one tune times.
  const auto share_asked = [](std::size_t index, std::size_t count,
                              std::optional<std::size_t> budget) {
    FakeMeasurer measurer;
    ptxrt::TuneOptions options;
    options.strategy = ptxrt::TuningStrategy::random;
    options.seed = 3;
    options.compile_threads = 0;
    options.budget = budget;
    options.share = {index, count};
    const ptxrt::TuneReport report = ptxrt::tune(six(), fake_compile, measurer, options);
    return std::make_pair(measurer.asked, report);
  };
  const auto [whole, whole_report] = share_asked(0, 1, std::nullopt);
  CHECK(whole.size() == 4);  // A=2 does not compile, A=3 is pruned
  std::vector<std::int64_t> dealt;
  std::size_t compile_failures = 0;
  for (std::size_t index = 0; index < 3; ++index) {
    const auto [asked, report] = share_asked(index, 3, std::nullopt);
    dealt.insert(dealt.end(), asked.begin(), asked.end());
    compile_failures += report.compile_failures.size();
    CHECK(report.space_size == 6);
  }
  std::sort(dealt.begin(), dealt.end());
  std::vector<std::int64_t> sorted_whole = whole;
  std::sort(sorted_whole.begin(), sorted_whole.end());
  CHECK(dealt == sorted_whole);
  CHECK(compile_failures == 1);
}

TEST_CASE("a budget dealt over shares: 5 over 2 shares times 3 in the first, 2 in the second") {
  const auto timed = [](std::size_t index) {
    FakeMeasurer measurer;
    ptxrt::TuneOptions options;
    options.compile_threads = 0;
    options.budget = 5;
    options.share = {index, 2};
    const auto ready = [](const TuningConfig& config) {
      return Candidate{config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
    };
    ptxrt::tune(six(), ready, measurer, options);
    return measurer.asked;
  };
  CHECK(timed(0) == std::vector<std::int64_t>{1, 3, 5});
  CHECK(timed(1) == std::vector<std::int64_t>{2, 4});
}

TEST_CASE("a share whose index is not below its count is refused") {
  FakeMeasurer measurer;
  ptxrt::TuneOptions options;
  options.share = {2, 2};
  CHECK_THROWS_WITH_AS(ptxrt::tune(six(), fake_compile, measurer, options),
                       "tune: share 2 of 2 does not exist: the index counts from 0 and must be "
                       "below the count",
                       ptxrt::Error);
  options.share = {0, 0};
  CHECK_THROWS_AS(ptxrt::tune(six(), fake_compile, measurer, options), ptxrt::Error);
  CHECK(measurer.asked.empty());
}

TEST_CASE("parallel compilation hands every config to the measurer exactly once") {
  ptxrt::TuningSpace space;
  std::vector<std::int64_t> values;
  for (std::int64_t v = 0; v < 60; ++v) values.push_back(v);
  space.add_parameter("V", values);
  std::mutex mutex;
  std::set<std::thread::id> compile_threads;
  const auto compile = [&](const TuningConfig& config) {
    {
      std::lock_guard lock(mutex);
      compile_threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Candidate{config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
  };
  struct Collector : ptxrt::Measurer {
    std::multiset<std::int64_t> seen;
    std::thread::id thread;
    bool same_thread = true;
    Measurement measure(const Candidate& candidate, std::optional<double>) override {
      seen.insert(candidate.config.at("V"));
      same_thread = same_thread && std::this_thread::get_id() == thread;
      return Measurement{
          .config = candidate.config, .status = MeasurementStatus::ok, .median_ms = 1.0};
    }
  } collector;
  collector.thread = std::this_thread::get_id();
  ptxrt::TuneOptions options;
  options.compile_threads = 4;
  const ptxrt::TuneReport report = ptxrt::tune(space, compile, collector, options);
  CHECK(collector.seen == std::multiset<std::int64_t>(values.begin(), values.end()));
  CHECK(collector.same_thread);
  CHECK(compile_threads.size() > 1);
  CHECK(compile_threads.count(std::this_thread::get_id()) == 0);
  CHECK(report.results.size() == 60);
}

TEST_CASE("every strategy times the configs of TuneOptions::first first, each once") {
  ptxrt::TuningSpace space;
  std::vector<std::int64_t> values;
  for (std::int64_t v = 0; v < 60; ++v) values.push_back(v);
  space.add_parameter("V", values);
  const auto v = [](std::int64_t value) { return TuningConfig({{"V", std::to_string(value)}}); };
  const auto compile = [](const TuningConfig& config) {
    // On threads, the configs after the leading ones land before the last leading one (V=23).
    std::this_thread::sleep_for(std::chrono::milliseconds(config.at("V") == 23 ? 50 : 1));
    Candidate candidate{config, Candidate::State::ready, {}, kernel(32), ptxrt::Occupancy{}};
    // The occupancy strategy would take V=59 first, the model's first pick likewise.
    candidate.occupancy->fraction = static_cast<double>(config.at("V")) / 60.0;
    return candidate;
  };
  struct Recorder : ptxrt::Measurer {
    std::vector<std::int64_t> timed;
    Measurement measure(const Candidate& candidate, std::optional<double>) override {
      timed.push_back(candidate.config.at("V"));
      return Measurement{.config = candidate.config,
                         .status = MeasurementStatus::ok,
                         .median_ms = 1.0 + static_cast<double>(timed.size())};
    }
  };
  for (const ptxrt::TuningStrategy strategy :
       {ptxrt::TuningStrategy::exhaustive, ptxrt::TuningStrategy::random,
        ptxrt::TuningStrategy::occupancy, ptxrt::TuningStrategy::model})
    for (const unsigned threads : {0u, 3u}) {
      CAPTURE(ptxrt::to_string(strategy));
      CAPTURE(threads);
      Recorder recorder;
      ptxrt::TuneOptions options;
      options.strategy = strategy;
      options.compile_threads = threads;
      options.budget = 6;
      options.first = {v(41), v(7), v(41), v(23)};
      const ptxrt::TuneReport report = ptxrt::tune(space, compile, recorder, options);
      REQUIRE(recorder.timed.size() == 6);
      const std::vector<std::int64_t> leading(recorder.timed.begin(), recorder.timed.begin() + 3);
      // Compiled in this order; on threads they are timed as they land, before any other.
      if (threads == 0)
        CHECK(leading == std::vector<std::int64_t>{41, 7, 23});
      else
        CHECK(std::set<std::int64_t>(leading.begin(), leading.end()) ==
              std::set<std::int64_t>{7, 23, 41});
      CHECK(std::set<std::int64_t>(recorder.timed.begin(), recorder.timed.end()).size() == 6);
      CHECK(report.not_reached == 54);
    }
}

TEST_CASE("a config of TuneOptions::first that the space does not allow is refused, naming it") {
  ptxrt::TuningSpace space = six();
  space.add_constraint("A is not 4", [](const TuningConfig& config) {
    return config.at("A") == 4 ? ptxrt::Verdict::refused("A is 4") : ptxrt::Verdict();
  });
  FakeMeasurer measurer;
  ptxrt::TuneOptions options;
  options.first = {a(1), a(7)};
  CHECK_THROWS_WITH_AS(ptxrt::tune(space, fake_compile, measurer, options),
                       "tune: TuneOptions::first names A=7, which the space does not allow: A=7 "
                       "is not one of {1,2,3,4,5,6}",
                       ptxrt::Error);
  options.first = {a(4)};
  CHECK_THROWS_WITH_AS(ptxrt::tune(space, fake_compile, measurer, options),
                       "tune: TuneOptions::first names A=4, which the space does not allow: A is 4",
                       ptxrt::Error);
  options.first = {TuningConfig({{"A", "1"}, {"B", "2"}})};
  CHECK_THROWS_WITH_AS(ptxrt::tune(space, fake_compile, measurer, options),
                       "tune: TuneOptions::first names A=1 B=2, which the space does not allow: B "
                       "is not a parameter of the space",
                       ptxrt::Error);
  CHECK(measurer.asked.empty());
}

TEST_CASE("time_samples warms up, stops once the spread is small, and cuts slow configs") {
  ptxrt::TimingPolicy policy;
  int calls = 0;
  ptxrt::TimingResult steady = ptxrt::time_samples(policy, std::nullopt, [&] {
    return ++calls == 1 ? 100.0 : 2.0;  // the warm-up is slow and not counted
  });
  CHECK(calls == 6);
  CHECK(steady.runs == 5);
  CHECK(steady.median_ms == 2.0);
  CHECK(steady.converged);
  CHECK_FALSE(steady.cut);

  policy.max_runs = 20;
  int flips = 0;
  const ptxrt::TimingResult noisy =
      ptxrt::time_samples(policy, std::nullopt, [&] { return ++flips % 2 ? 1.0 : 2.0; });
  CHECK(noisy.runs == 20);
  CHECK_FALSE(noisy.converged);
  CHECK(noisy.spread > 0.02);

  const ptxrt::TimingResult slow = ptxrt::time_samples(policy, 1.0, [] { return 1.6; });
  CHECK(slow.cut);
  CHECK(slow.runs == 3);
  const ptxrt::TimingResult close = ptxrt::time_samples(policy, 1.0, [] { return 1.4; });
  CHECK_FALSE(close.cut);
  CHECK(close.runs == 5);
}

TEST_CASE("relative_spread is the interquartile range over the median") {
  CHECK(ptxrt::relative_spread({1.0}) == 0.0);
  CHECK(ptxrt::relative_spread({1.0, 1.0, 1.0}) == 0.0);
  // Quartiles of 1..5 are 2 and 4, the median 3.
  CHECK(ptxrt::relative_spread({5.0, 1.0, 3.0, 2.0, 4.0}) == doctest::Approx(2.0 / 3.0));
}

TEST_CASE("the JIT compiler prunes by the compiled kernel's resources and reports compile errors") {
  ptxrt::Jit jit(ptxrt::JitOptions{.cache_directory = {}});
  ptxrt::CompileOptions base;
  base.target = ptxrt::Target{"sm_90", ptxrt::ImageFormat::cubin, {}};
  ptxrt::DeviceProperties small = h100();
  small.max_threads_per_block = 256;
  const ptxrt::CandidateCompiler compile = ptxrt::jit_candidate_compiler(
      jit, ptxrt::apps::builtin_program("matmul_tiled"), base, "matmul_tiled",
      [](const TuningConfig& config) {
        const std::int64_t tile = config.at("TILE_WIDTH");
        return ptxrt::LaunchShape{static_cast<int>(tile * tile), 0};
      },
      small);
  const Candidate fits = compile(TuningConfig(std::vector<ptxrt::Define>{{"TILE_WIDTH", "16"}}));
  CHECK(fits.state == Candidate::State::ready);
  REQUIRE(fits.resources);
  CHECK(fits.resources->registers > 0);
  CHECK(fits.resources->static_shared_bytes == 2 * 16 * 16 * 4);
  REQUIRE(fits.occupancy);
  CHECK(fits.occupancy->active_blocks_per_sm > 0);
  const Candidate too_big = compile(TuningConfig(std::vector<ptxrt::Define>{{"TILE_WIDTH", "32"}}));
  CHECK(too_big.state == Candidate::State::pruned);
  CHECK(too_big.reason == "a block of 1024 threads exceeds the device's 256");

  const ptxrt::CandidateCompiler broken = ptxrt::jit_candidate_compiler(
      jit,
      ptxrt::Program::from_string("// ptxrt: define X in {1, 2}\n#if X == 2\n#error X=2 is broken\n"
                                  "#endif\nextern \"C\" __global__ void k() {}\n",
                                  "broken.cu"),
      base, "k",
      [](const TuningConfig&) {
        return ptxrt::LaunchShape{32, 0};
      },
      h100());
  CHECK(broken(TuningConfig(std::vector<ptxrt::Define>{{"X", "1"}})).state ==
        Candidate::State::ready);
  const Candidate failed = broken(TuningConfig(std::vector<ptxrt::Define>{{"X", "2"}}));
  CHECK(failed.state == Candidate::State::compile_failed);
  CHECK(failed.reason.find("X=2 is broken") != std::string::npos);
}
