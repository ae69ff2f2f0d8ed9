// The tuner's process plumbing and kernel problems, without a GPU: the child process a worker runs
// in, the worker's line protocol driven through streams with a fake session, the problems' spaces
// and sizes, and a worker that cannot get ready.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "apps/tune/tune_problems.hpp"
#include "process.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "support/child_process.hpp"

using nlohmann::json;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;
using namespace std::chrono_literals;

namespace {

ptxrt::DeviceProperties h100() {
  ptxrt::DeviceProperties device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.cc_major = 9;
  device.max_threads_per_block = 1024;
  device.max_threads_per_sm = 2048;
  device.shared_memory_per_block_optin = 232448;
  device.shared_memory_per_sm = 233472;
  device.registers_per_block = 65536;
  device.registers_per_sm = 65536;
  return device;
}

// Answers by config: X=1 is fine, X=2 is wrong, X=3 throws as a faulting kernel would.
class FakeSession : public ptxrt::TuneSession {
 public:
  Measurement measure(const TuningConfig& config, const ptxrt::TimingPolicy&,
                      std::optional<double> best_ms) override {
    const std::int64_t x = config.at("X");
    if (x == 3)
      throw ptxrt::Error(ptxrt::ErrorKind::sticky, "an illegal memory access was encountered");
    Measurement measurement;
    measurement.status = x == 2 ? MeasurementStatus::wrong : MeasurementStatus::ok;
    measurement.median_ms = best_ms.value_or(7.0);
    return measurement;
  }
  std::optional<Measurement> peer(const ptxrt::TimingPolicy&) override { return std::nullopt; }
};

std::vector<json> worker_replies(
    const std::string& requests,
    const std::function<std::unique_ptr<ptxrt::TuneSession>()>& open, int& code) {
  std::istringstream in(requests);
  std::ostringstream out;
  code = ptxrt::run_tune_worker(open, ptxrt::TimingPolicy{}, in, out);
  std::vector<json> replies;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) replies.push_back(json::parse(line));
  return replies;
}

}  // namespace

TEST_CASE("a child process answers lines, and a dead or silent one is told apart") {
  ptxrt::detail::ChildProcess cat({"/bin/cat"});
  REQUIRE(cat.send_line("{\"ready\": true}"));
  CHECK(cat.read_line(5s) == "{\"ready\": true}");
  CHECK_FALSE(cat.read_line(50ms));  // nothing more to say
  CHECK_FALSE(cat.closed());
  CHECK(cat.terminate() == "exited with code 0");  // our end closed: cat reads EOF and ends

  ptxrt::detail::ChildProcess failing({"/bin/false"});
  CHECK_FALSE(failing.read_line(5s));
  CHECK(failing.closed());
  CHECK(failing.terminate() == "exited with code 1");

  CHECK_THROWS_AS(ptxrt::detail::ChildProcess({"/no/such/program"}), ptxrt::Error);
}

TEST_CASE("the worker answers each config, and exits after one that throws") {
  int code = -1;
  const std::vector<json> replies = worker_replies(
      "{\"config\": {\"X\": \"1\"}, \"best_ms\": null}\n"
      "{\"config\": {\"X\": \"2\"}, \"best_ms\": 2.5}\n"
      "{\"peer\": true}\n"
      "{\"config\": {\"X\": \"3\"}, \"best_ms\": 2.5}\n"
      "{\"config\": {\"X\": \"1\"}, \"best_ms\": 2.5}\n",
      [] { return std::make_unique<FakeSession>(); }, code);
  CHECK(code == 1);
  REQUIRE(replies.size() == 5);
  CHECK(replies[0] == json{{"ready", true}});
  CHECK(replies[1]["measurement"]["status"] == "ok");
  CHECK(replies[1]["measurement"]["median_ms"] == 7.0);
  CHECK(replies[1]["measurement"]["config"] == json{{"X", "1"}});
  CHECK(replies[1]["restart"] == false);
  CHECK(replies[2]["measurement"]["status"] == "wrong");
  CHECK(replies[3] == json{{"peer", nullptr}});
  CHECK(replies[4]["measurement"]["status"] == "failed");
  CHECK(replies[4]["measurement"]["detail"] == "an illegal memory access was encountered");
  CHECK(replies[4]["restart"] == true);
}

TEST_CASE("a worker whose setup fails says why and exits") {
  int code = -1;
  const std::vector<json> replies = worker_replies(
      "",
      []() -> std::unique_ptr<ptxrt::TuneSession> {
        throw ptxrt::Error(ptxrt::ErrorKind::no_device, "no CUDA device");
      },
      code);
  CHECK(code == 1);
  REQUIRE(replies.size() == 1);
  CHECK(replies[0] == json{{"error", "no CUDA device"}});
}

TEST_CASE("the worker measurer refuses to go on when its worker cannot get ready") {
  if (ptxrt::driver_status().usable) return;  // this is about the machine without a GPU
  ptxrt::WorkerMeasurer measurer(
      {PTXRT_CLI_PATH, "tune", "matmul", "--worker", "--size", "64"}, std::nullopt, 30s, 60s);
  const ptxrt::Candidate candidate{TuningConfig(std::vector<ptxrt::Define>{{"TILE_WIDTH", "16"}}),
                                   ptxrt::Candidate::State::ready,
                                   {},
                                   std::nullopt,
                                   std::nullopt};
  try {
    measurer.measure(candidate, std::nullopt);
    FAIL("expected an error");
  } catch (const ptxrt::Error& error) {
    CHECK(std::string(error.what()).starts_with("the tuning worker could not start: "));
  }
  CHECK(measurer.workers_started() == 1);
}

// A stand-in worker speaking the protocol: X=2 asks for a restart, X=3 dies, X=4 hangs.
constexpr const char* fake_worker = R"(
import json, sys, time
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    x = request["config"]["X"]
    if x == "3":
        sys.exit(3)
    if x == "4":
        time.sleep(60)
    measurement = {"config": request["config"], "status": "ok", "median_ms": float(x),
                   "spread": 0.0, "runs": 5, "rate": 1.0, "rate_unit": "op/s", "max_error": 0.0,
                   "detail": "best so far %s" % request["best_ms"]}
    print(json.dumps({"measurement": measurement, "restart": x == "2"}), flush=True)
    if x == "2":
        sys.exit(1)
)";

TEST_CASE(
    "the worker measurer replaces a worker that restarts, dies or hangs, goes on, and names its "
    "device in every measurement") {
  if (!std::filesystem::exists("/usr/bin/python3")) {
    MESSAGE("skipped: the stand-in worker needs /usr/bin/python3");
    return;
  }
  ptxrt::WorkerMeasurer measurer({"/usr/bin/python3", "-c", fake_worker}, 3, 2s, 30s);
  ptxrt::TuningSpace space;
  space.add_parameter("X", {1, 2, 3, 4, 5});
  ptxrt::TuneOptions options;
  options.compile_threads = 0;
  const ptxrt::TuneReport report = ptxrt::tune(
      space,
      [](const TuningConfig& config) {
        return ptxrt::Candidate{
            config, ptxrt::Candidate::State::ready, {}, std::nullopt, std::nullopt};
      },
      measurer, options);
  REQUIRE(report.results.size() == 5);
  const auto& results = report.results;
  CHECK(results[0].measurement.status == MeasurementStatus::ok);
  CHECK(results[0].measurement.detail == "best so far None");
  CHECK(results[1].measurement.status == MeasurementStatus::ok);
  CHECK(results[1].measurement.detail == "best so far 1.0");
  CHECK(results[2].measurement.status == MeasurementStatus::crashed);
  CHECK(results[2].measurement.detail == "the worker exited with code 3 while running it");
  CHECK(results[3].measurement.status == MeasurementStatus::crashed);
  CHECK(results[3].measurement.detail ==
        "no answer within 2 s: the worker was stopped (killed by signal 9 (Killed))");
  CHECK(results[4].measurement.status == MeasurementStatus::ok);
  for (const ptxrt::TuneResult& result : results) CHECK(result.measurement.device == 3);
  CHECK(measurer.workers_started() == 4);
  REQUIRE(report.winner);
  CHECK(report.winner->config.describe() == "X=1");
}

// A session that spent 0.5 s on its reference and, on each config, 0.25 s verifying and 1 s timing.
class PhasedSession : public FakeSession {
 public:
  Measurement measure(const TuningConfig& config, const ptxrt::TimingPolicy& policy,
                      std::optional<double> best_ms) override {
    phases_.verification_seconds += 0.25;
    phases_.timing_seconds += 1.0;
    return FakeSession::measure(config, policy, best_ms);
  }
  ptxrt::TunePhases phases() const override { return phases_; }

 private:
  ptxrt::TunePhases phases_{.reference_seconds = 0.5};
};

TEST_CASE(
    "each worker answer carries the seconds its session spent since the answer before, "
    "the reference's with the first") {
  int code = -1;
  const std::vector<json> replies = worker_replies(
      "{\"config\": {\"X\": \"1\"}, \"best_ms\": null}\n"
      "{\"config\": {\"X\": \"1\"}, \"best_ms\": 7.0}\n",
      [] { return std::make_unique<PhasedSession>(); }, code);
  CHECK(code == 0);
  REQUIRE(replies.size() == 3);
  CHECK(replies[1]["phases"] ==
        json{{"reference_seconds", 0.5}, {"verification_seconds", 0.25}, {"timing_seconds", 1.0}});
  CHECK(replies[2]["phases"] ==
        json{{"reference_seconds", 0.0}, {"verification_seconds", 0.25}, {"timing_seconds", 1.0}});
}

// A stand-in worker that takes a while to get ready and reports the phases of each config.
constexpr const char* slow_worker = R"(
import json, sys, time
time.sleep(0.3)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    measurement = {"config": request["config"], "status": "ok", "median_ms": 1.0, "spread": 0.0,
                   "runs": 5, "rate": 0.0, "rate_unit": "", "max_error": 0.0, "detail": ""}
    phases = {"reference_seconds": 0.5, "verification_seconds": 0.25, "timing_seconds": 1.0}
    print(json.dumps({"measurement": measurement, "restart": False, "phases": phases}), flush=True)
)";

TEST_CASE(
    "a started worker gets ready while its caller works: the first config waits only for "
    "what is left of the start-up, and the workers' phases add up") {
  if (!std::filesystem::exists("/usr/bin/python3")) {
    MESSAGE("skipped: the stand-in worker needs /usr/bin/python3");
    return;
  }
  ptxrt::WorkerMeasurer measurer({"/usr/bin/python3", "-c", slow_worker}, 0, 30s, 30s);
  measurer.start();
  std::this_thread::sleep_for(500ms);  // the compiles a tune runs meanwhile
  const ptxrt::Candidate candidate{TuningConfig(std::vector<ptxrt::Define>{{"X", "1"}}),
                                   ptxrt::Candidate::State::ready,
                                   {},
                                   std::nullopt,
                                   std::nullopt};
  CHECK(measurer.measure(candidate, std::nullopt).status == MeasurementStatus::ok);
  CHECK(measurer.measure(candidate, 1.0).status == MeasurementStatus::ok);
  CHECK(measurer.workers_started() == 1);
  const ptxrt::TunePhases& phases = measurer.phases();
  // Started 500 ms before the first config asked for it, whenever it got ready.
  CHECK(phases.worker_start_seconds - phases.worker_start_wait_seconds >= 0.5);
  CHECK(phases.reference_seconds == 1.0);
  CHECK(phases.verification_seconds == 0.5);
  CHECK(phases.timing_seconds == 2.0);
  CHECK(phases.compile_seconds == 0.0);
}

TEST_CASE("a worker ignores Ctrl-C and SIGTERM, and dies when its parent is killed") {
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  // parent (this test) → tune (killed below) → worker, which tells us its pid.
  const pid_t tune = ::fork();
  REQUIRE(tune >= 0);
  if (tune == 0) {
    if (::fork() == 0) {
      ptxrt::tie_worker_to_parent();
      const pid_t self = ::getpid();
      [[maybe_unused]] const ssize_t written = ::write(ends[1], &self, sizeof self);
      ::sleep(30);
      ::_exit(0);
    }
    ::sleep(30);
    ::_exit(0);
  }
  ::close(ends[1]);
  pid_t worker = 0;
  REQUIRE(::read(ends[0], &worker, sizeof worker) == static_cast<ssize_t>(sizeof worker));
  ::close(ends[0]);
  ::kill(worker, SIGINT);
  ::kill(worker, SIGTERM);
  std::this_thread::sleep_for(200ms);
  CHECK(ptxrt::testing::is_running(worker));
  CHECK(ptxrt::testing::running_children(tune) == std::vector<pid_t>{worker});
  ::kill(tune, SIGKILL);
  REQUIRE(::waitpid(tune, nullptr, 0) == tune);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (ptxrt::testing::is_running(worker) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  CHECK_FALSE(ptxrt::testing::is_running(worker));
}

TEST_CASE("tune sizes read N, MxNxK, a point count or sizes by name, and reject the rest") {
  using ptxrt::apps::parse_tune_size;
  using Sizes = ptxrt::ProblemSizes;
  CHECK(parse_tune_size("matmul", "256") == Sizes{{"m", 256}, {"n", 256}, {"k", 256}});
  CHECK(parse_tune_size("sgemm", "4096x1024x512") == Sizes{{"m", 4096}, {"n", 1024}, {"k", 512}});
  CHECK(parse_tune_size("sgemm", "m=4096,k=512") == Sizes{{"m", 4096}, {"k", 512}});
  CHECK(parse_tune_size("closest-pair", "1000000") == Sizes{{"n", 1000000}});
  CHECK(parse_tune_size("closest-pair", "n=1000") == Sizes{{"n", 1000}});
  CHECK(parse_tune_size("matmul", "").empty());
  CHECK_THROWS_WITH_AS(parse_tune_size("matmul", "12x3"), "matmul size '12x3': expected N or MxNxK",
                       ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_tune_size("matmul", "0"),
                       "size '0': '0' is not a whole number from 1 to 2^31-1", ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_tune_size("closest-pair", "1x2"),
                       "closest-pair size '1x2': expected a number of points, at least 2",
                       ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_tune_size("matmul", "w=5"),
                       "matmul size 'w=5': no size w (matmul's sizes: m, n, k)", ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_tune_size("matmul", "m=3000000000"),
                       "matmul size 'm=3000000000': m is over 2^31-1", ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_tune_size("closest-pair", "n=1"),
                       "closest-pair size 'n=1': expected a number of points, at least 2",
                       ptxrt::Error);
}

TEST_CASE("the builtin tune problems are KernelProblems with the kernels' manifest spaces") {
  const ptxrt::DeviceProperties device = h100();
  const ptxrt::ProblemSizes cube{{"m", 1024}, {"n", 1024}, {"k", 1024}};
  const ptxrt::KernelProblem matmul = ptxrt::apps::builtin_tune_problem("matmul", device);
  CHECK(matmul.complete_sizes({}) == cube);
  CHECK(matmul.space_at(cube).enumerate().allowed.size() == 4);
  const ptxrt::LaunchConfig tile_32 =
      matmul.launch_at(TuningConfig(std::vector<ptxrt::Define>{{"TILE_WIDTH", "32"}}),
                       {{"m", 1000}, {"n", 2000}, {"k", 1}});
  CHECK(tile_32.block.count() == 1024);
  CHECK(tile_32.grid.x == 63);  // along n
  CHECK(tile_32.grid.y == 32);  // along m
  CHECK(matmul.rate().unit == "GFLOP/s");
  CHECK(matmul.verification().kind == ptxrt::ProblemVerification::Kind::device_callback);
  CHECK(matmul.verification().relative_to == ptxrt::ProblemVerification::RelativeTo::largest);
  CHECK(matmul.peer());
  CHECK_FALSE(matmul.launcher());

  const ptxrt::KernelProblem closest = ptxrt::apps::builtin_tune_problem("closest-pair", device);
  CHECK(closest.complete_sizes({}) == ptxrt::ProblemSizes{{"n", 1 << 20}});
  CHECK(closest.space_at({{"n", 1 << 20}}).enumerate().allowed.size() == 6);
  CHECK(closest.rate().unit == "Mpoint/s");
  CHECK(closest.verification().kind == ptxrt::ProblemVerification::Kind::callback);
  CHECK(closest.launcher());

  // Every sgemm config the space allows passes the host's own rules on this device, and its
  // launch is the one sgemm_launch makes.
  const ptxrt::KernelProblem sgemm = ptxrt::apps::builtin_tune_problem("sgemm", device);
  const ptxrt::ProblemSizes large{{"m", 4096}, {"n", 4096}, {"k", 4096}};
  const ptxrt::SpaceEnumeration configs = sgemm.space_at(large).enumerate();
  // No splits or small tiles at 4096³; FFMA or tensor cores.
  CHECK(configs.allowed.size() == 788);
  for (const TuningConfig& config : configs.allowed) {
    const ptxrt::SgemmConfig sgemm_config = ptxrt::sgemm_config_with({}, config.defines());
    const ptxrt::LaunchConfig launch = sgemm.launch_at(config, large);
    CHECK(launch.block.count() == static_cast<unsigned>(sgemm_config.threads()));
    CHECK(launch.dynamic_shared_bytes == sgemm_config.shared_bytes());
    CHECK(launch.grid.x == static_cast<unsigned>(4096 / sgemm_config.block_n()));
  }
  CHECK(std::find(configs.allowed.begin(), configs.allowed.end(), sgemm.default_config()) !=
        configs.allowed.end());
  CHECK(sgemm.launcher());
  CHECK(sgemm.peer());
  CHECK_FALSE(sgemm.is_declarative());

  CHECK_THROWS_WITH_AS(ptxrt::apps::builtin_tune_problem("conv", device),
                       "no tuning problem 'conv': expected matmul, sgemm or closest-pair",
                       ptxrt::Error);
  CHECK_FALSE(ptxrt::apps::find_builtin_tune_problem("conv", device));
  CHECK_THROWS_AS(ptxrt::apps::builtin_tune_problem("sgemm", device, "other.cu"), ptxrt::Error);
}

TEST_CASE("the tuning key changes with the size and the device but not between calls") {
  const ptxrt::DeviceProperties device = h100();
  const auto key = [&](std::int64_t m, const ptxrt::DeviceProperties& on) {
    return ptxrt::problem_key(ptxrt::apps::matmul_problem(), {{"m", m}, {"n", 256}, {"k", 256}},
                              on);
  };
  const ptxrt::TuningKey first = key(256, device);
  CHECK(first == key(256, device));
  CHECK(first.kernel == "matmul");
  CHECK(first.space == "TILE_WIDTH in {4,8,16,32}");
  CHECK(first.compute_capability == "9.0");
  // The source's hash alone, as tunes recorded before the builtins were KernelProblems have it.
  CHECK(first.source_hash == ptxrt::source_hash(ptxrt::apps::builtin_program("matmul_tiled")));
  CHECK(first.size == std::vector<std::int64_t>{256, 256, 256});
  CHECK_FALSE(first == key(512, device));
  ptxrt::DeviceProperties other = device;
  other.name = "NVIDIA H200";
  CHECK(key(256, other).device == "NVIDIA H200");
}

TEST_CASE("tune_problem refuses a worker program that is not an executable file, before any GPU") {
  const ptxrt::KernelProblem problem(
      ptxrt::Program::from_string("extern \"C\" __global__ void k(float* x) {}", "k.cu"), "k");
  const std::filesystem::path folder = std::filesystem::temp_directory_path() /
                                       ("ptxrt-worker-program-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const std::filesystem::path plain_file = folder / "worker";
  std::ofstream(plain_file) << "#!/bin/sh\n";
  for (const std::filesystem::path& program : {folder, plain_file, folder / "absent"}) {
    CAPTURE(program);
    ptxrt::ProblemTuneOptions options;
    options.worker_program = program;
    try {
      ptxrt::tune_problem(problem, {}, options);
      FAIL("tune_problem took " << program);
    } catch (const ptxrt::Error& error) {
      CHECK(error.kind() == ptxrt::ErrorKind::not_found);
      CHECK(std::string(error.what()) == "ProblemTuneOptions::worker_program '" + program.string() +
                                             "' is not an executable file");
    }
  }
  std::filesystem::remove_all(folder);
}
