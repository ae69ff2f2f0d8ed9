// Kernel files tuned as their users wrote them (tests/data/kernels: Kernel Tuner-style, bare
// macro tunables, a C++ entry, a template, constant memory), through the CLI and from C++: every
// config verified against the reference, the winner picked by `run --tuned` and TunedKernel, and
// wrong or faulting configs recorded without stopping the tune. About a minute on an H100.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/tune/device_selection.hpp"
#include "ptxrt/tune/problem_session.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tuned_kernel.hpp"
#include "tune_cli.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ptxrt::testing::cli_json;
using ptxrt::testing::Scratch;

namespace {

const fs::path kernels = fs::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";

nlohmann::ordered_json problem_json(const std::string& name) {
  std::ifstream in(kernels / (name + ".json"));
  return nlohmann::ordered_json::parse(in);
}

std::string write(const Scratch& scratch, const std::string& name, const std::string& text) {
  const fs::path path = scratch.path() / name;
  std::ofstream(path) << text;
  return path.string();
}

// Tunes `kernel` with `problem` exhaustively at `size`, then checks that every config passed
// verification and that `run --tuned` picks the winner and passes its own verification.
json tune_and_run_tuned(const Scratch& scratch, const fs::path& kernel,
                        const nlohmann::ordered_json& problem, const std::string& size) {
  const std::string file = write(scratch, "problem.json", problem.dump(1));
  const std::string database = (scratch.path() / "tuning.json").string();
  const json reports =
      cli_json(scratch, {"tune", kernel.string(), "--problem", file, "--size", size, "--strategy",
                         "exhaustive", "--db", database, "--json"});
  REQUIRE(reports.size() == 1);
  const json& report = reports[0];
  const json& counts = report["counts"];
  CHECK(counts["timed"].get<int>() > 0);
  CHECK(counts["timed"].get<int>() ==
        counts["compiled"].get<int>() - counts["pruned_by_resources"].get<int>());
  CHECK(counts["ok"].get<int>() + counts["cut"].get<int>() == counts["timed"].get<int>());
  REQUIRE(report["winner"].is_object());
  CHECK(report["winner"]["rate"].get<double>() > 0.0);
  CHECK(report["default"]["config"].is_object());

  const json runs = cli_json(scratch, {"run", kernel.string(), "--problem", file, "--size", size,
                                       "--tuned", "--db", database, "--verify", "--json"});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["tuned"]["level"] == "exact");
  CHECK(runs[0]["tuned"]["config"] == report["winner"]["config"]);
  for (const auto& [name, value] : report["winner"]["config"].items())
    CHECK(runs[0]["defines"][name] == value);
  CHECK(runs[0]["verified"] == true);
  CHECK(runs[0]["passed"] == true);
  return report;
}

}  // namespace

TEST_CASE("the constant-memory convolution tunes verified and run --tuned picks its winner") {
  Scratch scratch;
  nlohmann::ordered_json problem = problem_json("convolution");
  problem["tune"] = {{"block_size_x", {16, 32, 48}}, {"block_size_y", {4, 8}},
                     {"tile_size_x", {1, 2}},        {"tile_size_y", {1, 2}},
                     {"use_padding", {0, 1}},        {"read_only", {1}}};
  // Sizes that no tile divides: every edge guard runs.
  tune_and_run_tuned(scratch, kernels / "convolution.cu", problem, "W=1000,H=700");
  // The untuned run of another size verifies against the naive kernel too.
  const json run = cli_json(scratch, {"run", (kernels / "convolution.cu").string(), "--problem",
                                      write(scratch, "problem.json", problem.dump(1)), "--size",
                                      "W=333,H=257", "--verify", "--json"});
  CHECK(run[0]["passed"] == true);
  CHECK(run[0]["rate_unit"] == "GFLOP/s");
}

TEST_CASE("the Gaussian sum's algorithm switches tune verified and run --tuned picks its winner") {
  Scratch scratch;
  nlohmann::ordered_json problem = problem_json("gaussian_sum");
  problem["tune"] = {{"block_size_x", {128, 256}},
                     {"ITEMS_PER_THREAD", {1, 4}},
                     {"UNROLL", {1, 8}},
                     {"ALGORITHM", {0, 1, 2}}};
  const json report = tune_and_run_tuned(scratch, kernels / "gaussian_sum.cu", problem, "n=100003");
  CHECK(report["counts"]["timed"] == 24);
  CHECK(report["winner"]["rate_unit"] == "Gexp/s");
}

TEST_CASE("a planted wrong config and a planted fault are recorded and never win") {
  Scratch scratch;
  // PLANT=1 adds 2 instead of 1; PLANT=2 writes far past y (a sticky fault). The reference is
  // the config PLANT=0 BLOCK=128; a second check reads the expected output from a file.
  const std::string kernel = write(scratch, "add_one.cu",
                                   "__global__ void add_one(float* y, const float* x, int n) {\n"
                                   "  const int i = blockIdx.x * BLOCK + threadIdx.x;\n"
                                   "  if (i >= n) return;\n"
                                   "#if PLANT == 1\n  y[i] = x[i] + 2.0f;\n"
                                   "#elif PLANT == 2\n  y[i + (1LL << 40)] = x[i] + 1.0f;\n"
                                   "#else\n  y[i] = x[i] + 1.0f;\n#endif\n}\n");
  nlohmann::ordered_json problem{
      {"kernel", "add_one"},
      {"sizes", {{"n", 10007}}},
      {"tune", {{"PLANT", {2, 1, 0}}, {"BLOCK", {128, 256}}}},
      {"block", {"BLOCK"}},
      {"grid", {"ceil_div(n, BLOCK)"}},
      {"arguments",
       {{{"name", "y"}, {"type", "float"}, {"count", "n"}, {"role", "output"}},
        {{"name", "x"}, {"type", "float"}, {"count", "n"}, {"init", "iota"}},
        {{"name", "n"}, {"type", "int"}, {"value", "n"}}}},
      {"verify", {{"config", {{"PLANT", 0}, {"BLOCK", 128}}}, {"atol", 0}, {"rtol", 0}}}};
  const std::string database = (scratch.path() / "tuning.json").string();
  const auto tune = [&](const nlohmann::ordered_json& description) {
    return cli_json(
        scratch,
        {"tune", kernel, "--problem", write(scratch, "add_one.json", description.dump(1)),
         "--strategy", "exhaustive", "--no-parallel-compile", "--db", database, "--json"})[0];
  };
  const auto check = [](const json& report) {
    CHECK(report["counts"]["timed"] == 6);
    CHECK(report["workers_started"].get<int>() >= 2);  // the fault cost a worker
    for (const json& result : report["results"]) {
      const std::string plant = result["config"]["PLANT"];
      const std::string status = result["status"];
      if (plant == "1") CHECK(status == "wrong");
      if (plant == "2") CHECK((status == "failed" || status == "crashed"));
      if (plant == "0") CHECK((status == "ok" || status == "cut"));
    }
    CHECK(report["winner"]["config"]["PLANT"] == "0");
  };
  check(tune(problem));

  std::vector<float> expected(10007);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<float>(i) + 1.0f;
  std::ofstream(scratch.path() / "expected.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(expected.data()),
             static_cast<std::streamsize>(expected.size() * sizeof(float)));
  problem["verify"] = {{"files", {{"y", (scratch.path() / "expected.bin").string()}}}};
  fs::remove(database);
  check(tune(problem));
}

TEST_CASE("a problem that verifies nothing times its configs on its inputs as made") {
  Scratch scratch;
  // A fresh allocation holds no iota: a config timed on buffers never filled traps.
  const std::string kernel = write(scratch, "read_iota.cu",
                                   "__global__ void read_iota(float* y, const float* x, int n) {\n"
                                   "  const int i = blockIdx.x * BLOCK + threadIdx.x;\n"
                                   "  if (i >= n) return;\n"
                                   "  if (x[i] != static_cast<float>(i)) __trap();\n"
                                   "  y[i] = x[i];\n}\n");
  const nlohmann::ordered_json problem{
      {"kernel", "read_iota"},
      {"sizes", {{"n", 10007}}},
      {"tune", {{"BLOCK", {128, 256}}}},
      {"block", {"BLOCK"}},
      {"grid", {"ceil_div(n, BLOCK)"}},
      {"arguments",
       {{{"name", "y"}, {"type", "float"}, {"count", "n"}, {"role", "output"}},
        {{"name", "x"}, {"type", "float"}, {"count", "n"}, {"init", "iota"}},
        {{"name", "n"}, {"type", "int"}, {"value", "n"}}}}};
  const json report = cli_json(
      scratch,
      {"tune", kernel, "--problem", write(scratch, "read_iota.json", problem.dump(1)), "--strategy",
       "exhaustive", "--db", (scratch.path() / "tuning.json").string(), "--json"})[0];
  CHECK(report["counts"]["timed"] == 2);
  CHECK(report["workers_started"] == 1);
  for (const json& result : report["results"])  // never failed: no config trapped
    CHECK((result["status"] == "ok" || result["status"] == "cut"));
}

TEST_CASE(
    "a reference that fails and an argument the driver's layout refuses stop the tune "
    "before anything is timed") {
  Scratch scratch;
  nlohmann::ordered_json problem = problem_json("gaussian_sum");
  problem["tune"] = {
      {"block_size_x", {128}}, {"ITEMS_PER_THREAD", {1}}, {"UNROLL", {1}}, {"ALGORITHM", {0}}};
  // The reference covers half the elements: the rest stay NaN.
  problem["verify"]["reference"]["grid"] = {"ceil_div(n, 512)"};
  const ptxrt::testing::ProcessResult half = ptxrt::testing::run_cli(
      scratch, {"tune", (kernels / "gaussian_sum.cu").string(), "--problem",
                write(scratch, "half.json", problem.dump(1)), "--size", "n=4096"});
  CHECK(half.exit_code == 1);
  CHECK(ptxrt::testing::contains(half.output,
                                 "the tuning worker could not start: gaussian_sum: "
                                 "the reference (kernel gaussian_sum_reference) "
                                 "failed: it left y[2048] NaN"));

  // (float*, double) and (float*, int, int) both take 16 bytes: the CUBIN's total cannot tell
  // them apart, the driver's parameter layout can.
  const std::string kernel = write(scratch, "shift.cu",
                                   "extern \"C\" __global__ void shift(float* y, double by) {\n"
                                   "  y[blockIdx.x * B + threadIdx.x] += by;\n}\n");
  const nlohmann::ordered_json shift{
      {"kernel", "shift"},
      {"tune", {{"B", {32}}}},
      {"block", {"B"}},
      {"grid", {"4"}},
      {"arguments",
       {{{"name", "y"}, {"type", "float"}, {"count", "128"}, {"role", "output"}},
        {{"name", "by"}, {"type", "int"}, {"value", "1"}},
        {{"name", "pad"}, {"type", "int"}, {"value", "0"}}}}};
  const ptxrt::testing::ProcessResult refused = ptxrt::testing::run_cli(
      scratch, {"tune", kernel, "--problem", write(scratch, "shift.json", shift.dump(1))});
  CHECK(refused.exit_code == 1);
  CHECK(ptxrt::testing::contains(refused.output, "takes 2 parameter(s), but the problem gives 3"));
}

TEST_CASE("a problem whose data passes the device's memory is refused before any is made") {
  Scratch scratch;
  const std::uint64_t memory =
      ptxrt::testing::test_context().device().properties().global_memory_bytes;
  nlohmann::ordered_json problem = problem_json("gaussian_sum");
  problem["tune"] = {
      {"block_size_x", {128}}, {"ITEMS_PER_THREAD", {1}}, {"UNROLL", {1}}, {"ALGORITHM", {0}}};
  // One float more than the device holds, in the input alone.
  const std::uint64_t count = memory / sizeof(float) + 1;
  problem["arguments"][0]["count"] = std::to_string(count);
  const ptxrt::testing::ProcessResult refused = ptxrt::testing::run_cli(
      scratch, {"tune", (kernels / "gaussian_sum.cu").string(), "--problem",
                write(scratch, "big.json", problem.dump(1)), "--size", "n=4096"});
  CHECK(refused.exit_code == 1);
  CHECK_MESSAGE(
      ptxrt::testing::contains(
          refused.output, "big.json: arguments[0].count: " + std::to_string(count) +
                              " float element(s) take " + std::to_string(count * sizeof(float)) +
                              " bytes, which brings the problem's data to more than "
                              "the " +
                              std::to_string(memory) + " bytes it may take"),
      refused.output);
}

TEST_CASE("a problem built in C++ tunes in worker processes and TunedKernel launches the winner") {
  Scratch scratch;
  const int n = 50021;
  ptxrt::KernelProblem problem(ptxrt::Program::from_file(kernels / "gaussian_sum.cu"),
                               "gaussian_sum<float>");
  problem.name("gaussian_sum (C++)")
      .size("n")
      .define("steps", "64")
      .tune("block_size_x", {128, 256}, 256)
      .tune("ITEMS_PER_THREAD", {1, 2})
      .tune("UNROLL", {4})
      .tune("ALGORITHM", {0, 1, 2})
      .block("block_size_x")
      .grid("ceil_div(n, block_size_x * ITEMS_PER_THREAD)")
      .buffer("x", ptxrt::ElementType::float32, "n", ptxrt::DataInit::uniform(-1, 1))
      .buffer("y", ptxrt::ElementType::float32, "n", ptxrt::DataInit::zeros(),
              ptxrt::ArgumentRole::output)
      .scalar("n", ptxrt::ElementType::int32, "n")
      .verify_with_kernel({.entry = "gaussian_sum_reference",
                           .geometry = ptxrt::LaunchGeometry::of({"256"}, {"ceil_div(n, 256)"})})
      .tolerance(1e-6, 1e-4)
      .rate("n * steps", "Gexp/s", 1e9);
  problem.validate();
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  ptxrt::ProblemTuneOptions options;
  options.tune.database = &database;
  const ptxrt::TuneReport report = ptxrt::tune_problem(problem, {{"n", n}}, options).report;
  CHECK(report.results.size() == 2 * 2 * 1 * 3);  // every config of the space is timed
  for (const ptxrt::TuneResult& result : report.results)
    CHECK(result.measurement.device == 0);  // measured by a worker on device 0
  REQUIRE(report.winner);

  const ptxrt::Context& context = ptxrt::testing::test_context();
  const ptxrt::TunedKernel tuned(problem, {{"n", n}}, context, database);
  CHECK(tuned.choice().level == ptxrt::ChoiceLevel::exact_size);
  CHECK(tuned.choice().config == report.winner->config);
  const std::vector<float> x = ptxrt::testing::random_floats(n, 11);
  const ptxrt::DeviceBuffer<float> device_x(context, std::span<const float>(x));
  const std::vector<float> poison(n, std::numeric_limits<float>::quiet_NaN());
  ptxrt::DeviceBuffer<float> device_y(context, std::span<const float>(poison));
  tuned.launch(device_x, device_y, n);
  const std::vector<float> y = device_y.download();
  for (int i = 0; i < n; i += 97) {
    double sum = 0.0;
    for (int k = 0; k < 64; ++k) sum += std::exp(-std::pow(x[i] + k / 64.0, 2));
    CHECK(y[i] == doctest::Approx(sum / 64.0).epsilon(1e-4));
  }
  // Another size takes the nearest tuned one's config.
  CHECK(ptxrt::TunedKernel(problem, {{"n", 2 * n}}, context, database).choice().level ==
        ptxrt::ChoiceLevel::nearest_size);
  // An argument list the kernel does not take is refused before the driver sees it.
  ptxrt::testing::check_error([&] { tuned.launch(device_x, device_y); },
                              ptxrt::ErrorKind::invalid_argument, "takes 3 argument(s)");
}

TEST_CASE("a problem with a C++ reference callback is measured in this process") {
  const int n = 4099;
  ptxrt::KernelProblem problem(ptxrt::Program::from_file(kernels / "gaussian_sum.cu"),
                               "gaussian_sum<float>");
  problem.size("n")
      .define("steps", "16")
      .tune("block_size_x", {128})
      .tune("ITEMS_PER_THREAD", {1})
      .tune("UNROLL", {1})
      .tune("ALGORITHM", {0, 1})
      .block("block_size_x")
      .grid("ceil_div(n, block_size_x)")
      .buffer("x", ptxrt::ElementType::float32, "n", ptxrt::DataInit::iota(-1, 1.0 / 4096))
      .buffer("y", ptxrt::ElementType::float32, "n", ptxrt::DataInit::zeros(),
              ptxrt::ArgumentRole::output)
      .scalar("n", ptxrt::ElementType::int32, "n")
      .verify_with([](ptxrt::ProblemData& data) {
        const std::span<const float> x = data.span<float>("x");
        const std::span<float> y = data.span<float>("y");
        for (std::size_t i = 0; i < x.size(); ++i) {
          double sum = 0.0;
          for (int k = 0; k < 16; ++k) sum += std::exp(-std::pow(x[i] + k / 16.0, 2));
          y[i] = static_cast<float>(sum / 16.0);
        }
      })
      .tolerance(1e-6, 1e-4);
  problem.validate();
  CHECK_FALSE(problem.is_declarative());
  const ptxrt::TuneReport report = ptxrt::tune_problem(problem, {{"n", n}}, {}).report;
  REQUIRE(report.results.size() == 2);
  for (const ptxrt::TuneResult& result : report.results) {
    CHECK(result.measurement.status == ptxrt::MeasurementStatus::ok);
    CHECK_FALSE(result.measurement.device.has_value());  // no worker: this process
  }
}

namespace {

// gaussian_sum over 4096 values fixed in the problem: it declares no sizes.
ptxrt::KernelProblem fixed_size_problem() {
  ptxrt::KernelProblem problem(ptxrt::Program::from_file(kernels / "gaussian_sum.cu"),
                               "gaussian_sum<float>");
  problem.name("gaussian_sum (no sizes)")
      .define("steps", "16")
      .tune("block_size_x", {128, 256})
      .tune("ITEMS_PER_THREAD", {1})
      .tune("UNROLL", {1})
      .tune("ALGORITHM", {0, 1})
      .block("block_size_x")
      .grid("ceil_div(4096, block_size_x)")
      .buffer("x", ptxrt::ElementType::float32, "4096", ptxrt::DataInit::uniform(-1, 1))
      .buffer("y", ptxrt::ElementType::float32, "4096", ptxrt::DataInit::zeros(),
              ptxrt::ArgumentRole::output)
      .scalar("n", ptxrt::ElementType::int32, "4096")
      .verify_with_kernel({.entry = "gaussian_sum_reference",
                           .geometry = ptxrt::LaunchGeometry::of({"256"}, {"16"})})
      .tolerance(1e-6, 1e-4);
  problem.validate();
  return problem;
}

}  // namespace

TEST_CASE("a problem that declares no sizes tunes from C++ in worker processes") {
  Scratch scratch;
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  ptxrt::ProblemTuneOptions options;
  options.tune.database = &database;
  const ptxrt::TuneOutcome outcome = ptxrt::tune_problem(fixed_size_problem(), {}, options);
  REQUIRE(outcome.report.results.size() == 4);
  for (const ptxrt::TuneResult& result : outcome.report.results) {
    // Verified either way; a config clearly slower than the best so far is cut after a few runs.
    CHECK((result.measurement.status == ptxrt::MeasurementStatus::ok ||
           result.measurement.status == ptxrt::MeasurementStatus::cut));
    CHECK(result.measurement.device == 0);  // timed by a worker, which took no --size
  }
  CHECK(outcome.key.size.empty());
  CHECK(database.measurements(outcome.key).size() == 4);
}

TEST_CASE("tune_problem times on every device at once, and a stop request leaves the rest") {
  Scratch scratch;
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  ptxrt::ProblemTuneOptions options;
  options.tune.database = &database;
  options.devices = ptxrt::all_devices();
  const ptxrt::TuneOutcome outcome = ptxrt::tune_problem(fixed_size_problem(), {}, options);
  CHECK(outcome.devices == options.devices);
  CHECK(outcome.workers_started >= 1);
  CHECK(outcome.report.results.size() == 4);
  CHECK_FALSE(outcome.stopped);

  std::atomic<bool> stop{true};
  options.tune.stop = &stop;
  options.tune.resume = false;
  const ptxrt::TuneOutcome stopped = ptxrt::tune_problem(fixed_size_problem(), {}, options);
  CHECK(stopped.stopped);
  CHECK(stopped.report.results.empty());
  CHECK(stopped.report.not_reached == 4);
  CHECK_FALSE(stopped.peer);
}
