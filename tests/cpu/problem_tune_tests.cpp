// Tuning a kernel file's problem without a GPU: the dry run's plan of a Kernel Tuner-style
// kernel for sm_90, the mistakes found before anything is timed (through the CLI), a stand-in
// measurer driving a compiled problem through the tuner (wrong outputs never win, resume,
// interrupt), the database round trip of its key, and a compile cancelled by its timeout.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ptxrt::Candidate;
using ptxrt::KernelProblem;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path kernels = fs::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";

nlohmann::ordered_json problem_json(const std::string& name) {
  std::ifstream in(kernels / (name + ".json"));
  return nlohmann::ordered_json::parse(in);
}

fs::path write(const ScratchDirectory& scratch, const std::string& name, const std::string& text) {
  const fs::path path = scratch.path() / name;
  std::ofstream(path) << text;
  return path;
}

ptxrt::testing::ProcessResult cli(const ScratchDirectory& scratch,
                                  std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  return ptxrt::testing::run_process(
      arguments, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=warning"});
}

// The dry run of `kernel` with `problem` for sm_90: exit 1 and its one message, for a mistake.
std::string dry_run_error(const ScratchDirectory& scratch, const fs::path& kernel,
                          const nlohmann::ordered_json& problem,
                          std::vector<std::string> more = {}) {
  std::vector<std::string> arguments{
      "tune",   kernel.string(), "--problem", write(scratch, "p.json", problem.dump(1)).string(),
      "--arch", "sm_90",         "--dry-run"};
  arguments.insert(arguments.end(), more.begin(), more.end());
  const ptxrt::testing::ProcessResult result = cli(scratch, arguments);
  CHECK(result.exit_code == 1);
  return result.output;
}

// A few configs of the Gaussian sum: ALGORITHM 0..2 at two block sizes and two item counts.
KernelProblem small_gaussian_sum() {
  nlohmann::ordered_json document = problem_json("gaussian_sum");
  document["tune"] = {{"block_size_x", {64, 128}},
                      {"ITEMS_PER_THREAD", {1, 2}},
                      {"UNROLL", {4}},
                      {"ALGORITHM", {0, 1, 2}}};
  return KernelProblem::from_json(document.dump(),
                                  ptxrt::Program::from_file(kernels / "gaussian_sum.cu"),
                                  "small.json", kernels);
}

// Times from the config (ALGORITHM 1 fastest, more items faster); ALGORITHM=1 with two items, the
// fastest of all, computes wrong. Stops the tune at the config numbered stop_at.
class TableMeasurer : public ptxrt::Measurer {
 public:
  Measurement measure(const Candidate& candidate, std::optional<double>) override {
    asked.push_back(candidate.config.describe());
    if (asked.size() == stop_at) stop.store(true);
    const std::int64_t algorithm = candidate.config.at("ALGORITHM");
    const std::int64_t items = candidate.config.at("ITEMS_PER_THREAD");
    const double ms = (algorithm == 1   ? 1.0
                       : algorithm == 2 ? 1.5
                                        : 2.0) /
                          static_cast<double>(items) +
                      0.001 * static_cast<double>(candidate.config.at("block_size_x"));
    const bool wrong = algorithm == 1 && items == 2;
    return {.config = candidate.config,
            .status = wrong ? MeasurementStatus::wrong : MeasurementStatus::ok,
            .median_ms = ms};
  }
  std::vector<std::string> asked;
  std::size_t stop_at = 0;
  std::atomic<bool> stop{false};
};

ptxrt::DeviceProperties h100() {
  ptxrt::DeviceProperties device = ptxrt::device_model(9, 0);
  device.name = "NVIDIA H100 80GB HBM3";
  return device;
}

}  // namespace

TEST_CASE("the dry run plans a Kernel Tuner-style convolution for sm_90 with its prune list") {
  ScratchDirectory scratch;
  nlohmann::ordered_json problem = problem_json("convolution");
  problem["tune"] = {{"block_size_x", {64, 1024}}, {"block_size_y", {2, 8}}, {"tile_size_x", {1}},
                     {"tile_size_y", {1, 2}},      {"use_padding", {0}},     {"read_only", {1}}};
  problem["constraints"] = {"tile_size_y == 1 || block_size_y == 8"};
  const fs::path file = write(scratch, "small.json", problem.dump(1));
  const ptxrt::testing::ProcessResult result =
      cli(scratch, {"tune", (kernels / "convolution.cu").string(), "--problem", file.string(),
                    "--size", "W=1000,H=700", "--arch", "sm_90", "--dry-run", "--json"});
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const json plans = json::parse(result.output);
  REQUIRE(plans.size() == 1);
  const json& plan = plans[0];
  CHECK(plan["key"]["kernel"] == "convolution");
  CHECK(plan["key"]["size"] == json{1000, 700});
  CHECK(plan["counts"]["space"] == 8);
  CHECK(plan["counts"]["compile_failures"] == 0);
  std::size_t by_constraint = 0, by_geometry = 0, by_resources = 0;
  for (const json& pruned : plan["pruned"]) {
    const std::string reason = pruned["reason"];
    if (pruned["stage"] == "constraint") {
      // Either the file's constraint, or a 2048- or 8192-thread block no device launches.
      const bool geometry = reason.starts_with("launch geometry: ");
      CHECK((geometry ? reason.find("exceeds the kernel's max 1024 threads per block") !=
                            std::string::npos
                      : reason == "breaks constraint tile_size_y == 1 || block_size_y == 8"));
      CHECK((geometry || pruned["config"]["tile_size_y"] == "2"));
      CHECK((!geometry || pruned["config"]["block_size_x"] == "1024"));
      ++(geometry ? by_geometry : by_constraint);
    } else {
      REQUIRE(pruned["stage"] == "resources");
      CHECK(reason.find(" registers × 512 threads exceed the 65536 registers of a block") !=
            std::string::npos);
      ++by_resources;
    }
  }
  CHECK(by_constraint == 2);  // 64x2 and 1024x2 with two tiles
  CHECK(by_geometry == 3);    // the rest of the 1024-wide blocks
  // What compiled is pruned exactly when its registers do not fit a block: the prune list and
  // the plan agree with the CUBIN's resource report, whatever the compiler allocates.
  CHECK(plan["to_time"].size() + by_resources == 3);
  for (const json& ready : plan["to_time"]) {
    CHECK(ready["registers"].get<int>() * ready["block_threads"].get<int>() <= 65536);
    CHECK(ready["occupancy"].get<double>() > 0.0);
    CHECK(ready["static_shared_bytes"].get<int>() > 0);  // the input tile
  }

  const ptxrt::testing::ProcessResult text =
      cli(scratch, {"tune", (kernels / "convolution.cu").string(), "--problem", file.string(),
                    "--size", "W=1000,H=700", "--arch", "sm_90", "--dry-run"});
  REQUIRE(text.exit_code == 0);
  CHECK(
      text.output.starts_with("plan for convolution 1000x700 on sm_90 model (9.0), strategy "
                              "model (dry run: nothing timed)\n  space 8 configs: 5 pruned by "
                              "constraints, "));
  CHECK(ptxrt::testing::contains(
      text.output, "would time " + std::to_string(plan["to_time"].size()) + " configs"));
  CHECK(ptxrt::testing::contains(
      text.output,
      "block_size_x=64 block_size_y=2 read_only=1 tile_size_x=1 tile_size_y=2 "
      "use_padding=0: breaks constraint tile_size_y == 1 || block_size_y == 8"));
}

TEST_CASE("a kernel file's problem mistakes are one error each, before anything is timed") {
  ScratchDirectory scratch;
  const fs::path convolution = kernels / "convolution.cu";
  const nlohmann::ordered_json good = problem_json("convolution");
  const auto edited = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json document = good;
    edit(document);
    return document;
  };
  CHECK(dry_run_error(scratch, convolution, edited([](auto& d) { d["kernel"] = "convolve"; })) ==
        "ptxrt: error: convolution: convolution.cu has no kernel 'convolve' (its kernels: "
        "convolution_naive(float*, float const*, float const*), convolution_kernel(float*, "
        "float const*, float const*))\n");
  CHECK(
      dry_run_error(scratch, convolution, edited([](auto& d) {
                      d["arguments"].push_back({{"name", "n"}, {"type", "int32"}, {"value", "W"}});
                    })) ==
      "ptxrt: error: convolution: convolution_kernel(float*, float const*, float const*) takes "
      "3 parameter(s), but the problem gives 4 argument(s) (output, input, filter, n)\n");
  CHECK(
      dry_run_error(scratch, convolution, edited([](auto& d) {
                      d["arguments"][2] = {{"name", "filter"}, {"type", "int32"}, {"value", "17"}};
                      d.erase("symbols");
                    })) ==
      "ptxrt: error: convolution: argument 2 'filter' is 4 bytes, but parameter 2 of "
      "convolution_kernel(float*, float const*, float const*) is a float const* of 8\n");
  CHECK(dry_run_error(scratch, convolution,
                      edited([](auto& d) { d["block"][0] = "block_size_x * 0"; }))
            .starts_with("ptxrt: error: convolution: the launch geometry fits sm_90 model for none "
                         "of the 276 configs the constraints allow at H=4096,W=4096 ("));
  CHECK(dry_run_error(scratch, convolution, edited([](auto& d) {
                        d["sizes"] = {"W", "H"};
                      }),
                      {"--size", "W=512"}) ==
        "ptxrt: error: size H of convolution is not given and has no default (its sizes: W, H; "
        "on the command line: --size H=N)\n");
  CHECK(dry_run_error(scratch, convolution,
                      edited([](auto& d) { d["symbols"][0]["name"] = "h_filter"; })) ==
        "ptxrt: error: convolution: convolution.cu has no __constant__ or __device__ variable "
        "'h_filter'\n");

  // A reference kernel in a file of its own that does not compile.
  write(scratch, "reference.cu",
        "__global__ void reference(float* out, const float* in, const float* f) { undeclared; }\n");
  const std::string broken_reference =
      dry_run_error(scratch, convolution, edited([&](auto& d) {
                      d["verify"]["reference"]["kernel"] = "reference";
                      d["verify"]["reference"]["file"] = (scratch.path() / "reference.cu").string();
                    }));
  CHECK(broken_reference.starts_with(
      "ptxrt: error: convolution: the reference kernel reference does not compile: compiling "
      "reference.cu to CUBIN for sm_90 failed"));
  CHECK(ptxrt::testing::contains(broken_reference, "identifier \"undeclared\" is undefined"));

  // An extern "C" entry has no C++ signature: the CUBIN's parameter bytes catch a missing one.
  const fs::path scale = write(scratch, "scale.cu",
                               "extern \"C\" __global__ void scale(float* y, float a, int n) {\n"
                               "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
                               "  if (i < n) y[i] *= a;\n}\n");
  const nlohmann::ordered_json scale_problem{
      {"kernel", "scale"},
      {"sizes", {{"n", 1000}}},
      {"tune", {{"BLOCK", {128, 256}}}},
      {"block", {"BLOCK"}},
      {"grid", {"ceil_div(n, BLOCK)"}},
      {"arguments",
       {{{"name", "y"}, {"type", "float"}, {"count", "n"}, {"role", "output"}},
        {{"name", "n"}, {"type", "int32"}, {"value", "n"}}}}};
  CHECK(dry_run_error(scratch, scale, scale_problem) ==
        "ptxrt: error: scale: the 2 argument(s) (y, n) take 12 bytes of parameters, but scale "
        "takes 16 (from its CUBIN): check their number and types\n");

  CHECK(dry_run_error(scratch, convolution, edited([](auto&) {}), {"--size", "W=12x"}) ==
        "ptxrt: error: size 'W=12x': '12x' is not a whole number from 1 to 2^62\n");
  const ptxrt::testing::ProcessResult not_json = cli(
      scratch, {"tune", convolution.string(), "--problem",
                write(scratch, "broken.json", "{\"kernel\": \"convolution_kernel\",,}").string(),
                "--dry-run"});
  CHECK(not_json.exit_code == 1);
  CHECK(not_json.output ==
        "ptxrt: error: broken.json:1:33: not valid JSON: syntax error while parsing object key - "
        "unexpected ','; expected string literal\n");
  const ptxrt::testing::ProcessResult builtin_with_problem =
      cli(scratch, {"tune", "matmul", "--problem", (kernels / "convolution.json").string()});
  CHECK(builtin_with_problem.exit_code == 1);
  CHECK(ptxrt::testing::contains(builtin_with_problem.output,
                                 "--problem describes a kernel file's problem"));
}

TEST_CASE("the dry run refuses counts that overflow or pass the memory cap, and makes no data") {
  ScratchDirectory scratch;
  const fs::path scale = kernels / "scale.cu";
  write(scratch, "d.bin", std::string(4000, '\0'));
  const auto problem = [](const std::string& count, nlohmann::ordered_json init) {
    nlohmann::ordered_json buffer{{"name", "x"}, {"type", "float"}, {"count", count}};
    buffer.update(init);
    return nlohmann::ordered_json{
        {"kernel", "scale"},
        {"sizes", {{"n", 1000}}},
        {"tune", {{"BLOCK", {64, 128}}}},
        {"block", {"BLOCK"}},
        {"grid", {"ceil_div(n, BLOCK)"}},
        {"arguments",
         {buffer,
          {{"name", "y"}, {"type", "float"}, {"count", "n"}, {"role", "output"}},
          {{"name", "f"}, {"type", "float"}, {"value", 2.0}},
          {{"name", "n"}, {"type", "int32"}, {"value", "n"}}}}};
  };
  const nlohmann::ordered_json zeros{{"init", "zeros"}};
  const nlohmann::ordered_json from_file{{"init", "file"}, {"file", "d.bin"}};
  CHECK(dry_run_error(scratch, scale, problem("4611686018427387904", zeros)) ==
        "ptxrt: error: p.json: arguments[0].count: 4611686018427387904 float element(s) take more "
        "than 2^64 bytes\n");
  // 2^62 + 1000 floats are 4000 bytes modulo 2^64: the size of the data file, which once passed.
  CHECK(dry_run_error(scratch, scale, problem("4611686018427387904 + 1000", from_file)) ==
        "ptxrt: error: p.json: arguments[0].count: 4611686018427388904 float element(s) take more "
        "than 2^64 bytes\n");
  CHECK(dry_run_error(scratch, scale, problem("1000000000000", {{"init", "uniform"}})) ==
        "ptxrt: error: p.json: arguments[0].count: 1000000000000 float element(s) take "
        "4000000000000 bytes, which brings the problem's data to more than the 274877906944 bytes "
        "it may take (the device's memory, else 256 GiB)\n");
  // 200 GB of random floats, under the cap: the dry run checks them and makes none.
  const ptxrt::testing::ProcessResult planned =
      cli(scratch,
          {"tune", scale.string(), "--problem",
           write(scratch, "p.json", problem("50000000000", {{"init", "uniform"}}).dump()).string(),
           "--arch", "sm_90", "--dry-run"});
  CHECK_MESSAGE(planned.exit_code == 0, planned.output);
}

TEST_CASE("a space over the config limit is refused in one short line, not with every value") {
  ScratchDirectory scratch;
  std::vector<std::int64_t> values(10000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>(i + 1);
  nlohmann::ordered_json document = problem_json("gaussian_sum");
  document["tune"] = {{"block_size_x", {64, 128}},
                      {"ITEMS_PER_THREAD", values},
                      {"UNROLL", values},
                      {"ALGORITHM", {0}}};
  const std::string message =
      dry_run_error(scratch, kernels / "gaussian_sum.cu", document, {"--size", "n=4096"});
  CHECK(message ==
        "ptxrt: error: the tuning space has 200000000 configs, over the limit of 1000000 "
        "(block_size_x: 2 values, ITEMS_PER_THREAD: 10000 values, UNROLL: 10000 values, "
        "ALGORITHM: 1 values)\n");
}

TEST_CASE("a dry run of a large space reports progress on stderr and stops at --time or Ctrl-C") {
  ScratchDirectory scratch;
  std::vector<std::int64_t> ignored(200);
  for (std::size_t i = 0; i < ignored.size(); ++i) ignored[i] = static_cast<std::int64_t>(i);
  // 600 configs, each a compile of its own (IGNORED is a define the kernel does not read).
  const nlohmann::ordered_json problem{
      {"kernel", "scale"},
      {"sizes", {{"n", 1000}}},
      {"tune", {{"BLOCK", {64, 128, 256}}, {"IGNORED", ignored}}},
      {"block", {"BLOCK"}},
      {"grid", {"ceil_div(n, BLOCK)"}},
      {"arguments",
       {{{"name", "x"}, {"type", "float"}, {"count", "n"}},
        {{"name", "y"}, {"type", "float"}, {"count", "n"}, {"role", "output"}},
        {{"name", "f"}, {"type", "float"}, {"value", 2.0}},
        {{"name", "n"}, {"type", "int32"}, {"value", "n"}}}}};
  const std::vector<std::string> dry_run{PTXRT_CLI_PATH,
                                         "tune",
                                         (kernels / "scale.cu").string(),
                                         "--problem",
                                         write(scratch, "p.json", problem.dump()).string(),
                                         "--arch",
                                         "sm_90",
                                         "--dry-run"};
  const std::vector<std::string> environment{
      "PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=warning"};

  std::vector<std::string> timed = dry_run;
  timed.insert(timed.end(), {"--time", "1"});
  const std::optional<ptxrt::testing::ProcessResult> limited =
      ptxrt::testing::run_process_within(timed, 60, environment);
  REQUIRE(limited);
  INFO(limited->output);
  CHECK(limited->exit_code == 0);
  CHECK(ptxrt::testing::contains(limited->output,
                                 " configs (the dry run was stopped before their "
                                 "compile)\n"));

  ptxrt::testing::BackgroundProcess interrupted(dry_run, environment,
                                                ptxrt::testing::BackgroundProcess::Group::own);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ptxrt::testing::contains(interrupted.output(), "ptxrt: dry run: compiled ") &&
         interrupted.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE_MESSAGE(interrupted.running(), interrupted.output());
  interrupted.signal_group(SIGINT);  // as a terminal's Ctrl-C reaches the job
  while (interrupted.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE_MESSAGE(!interrupted.running(), "still running a minute after Ctrl-C");
  const ptxrt::testing::ProcessResult stopped = interrupted.wait();
  INFO(stopped.output);
  CHECK(stopped.exit_code == 130);
  CHECK(ptxrt::testing::contains(stopped.output, "ptxrt: dry run interrupted by SIGINT: "));
  CHECK(ptxrt::testing::contains(stopped.output, "would time "));
}

TEST_CASE("a problem's first configs are those its space allows, each once, in their order") {
  KernelProblem problem = small_gaussian_sum();
  const ptxrt::ProblemSizes sizes = problem.complete_sizes({{"n", 100000}});
  const ptxrt::TuningSpace space = ptxrt::problem_space(problem, sizes, h100());
  CHECK(ptxrt::problem_first_configs(problem, sizes, space).empty());
  const auto config = [](std::int64_t algorithm, std::int64_t block, std::int64_t items) {
    return ptxrt::TuningConfig({{"ALGORITHM", std::to_string(algorithm)},
                                {"ITEMS_PER_THREAD", std::to_string(items)},
                                {"UNROLL", "4"},
                                {"block_size_x", std::to_string(block)}});
  };
  ptxrt::ProblemSizes asked;
  problem.try_first([&](const ptxrt::ProblemSizes& at) {
    asked = at;
    return std::vector<ptxrt::TuningConfig>{
        config(2, 128, 2), config(5, 128, 2),
        config(0, 96, 1),  config(2, 128, 2),
        config(1, 64, 1),  ptxrt::TuningConfig(std::vector<ptxrt::Define>{{"ALGORITHM", "1"}})};
  });
  CHECK(problem.is_declarative());  // the workers never ask for them
  CHECK(ptxrt::problem_first_configs(problem, sizes, space) ==
        std::vector<ptxrt::TuningConfig>{config(2, 128, 2), config(1, 64, 1)});
  CHECK(asked == sizes);
}

TEST_CASE(
    "a stand-in measurer drives a compiled problem through the tuner: wrong never wins, "
    "an interrupted tune resumes, and the database answers for the problem's key") {
  ScratchDirectory scratch;
  const KernelProblem problem = small_gaussian_sum();
  const ptxrt::ProblemSizes sizes = problem.complete_sizes({{"n", 100000}});
  const ptxrt::DeviceProperties device = h100();
  ptxrt::Jit jit(ptxrt::JitOptions{.cache_directory = scratch.path() / "cache"});
  const ptxrt::CandidateCompiler compiler = ptxrt::problem_compiler(
      jit, problem, sizes, {"sm_90", ptxrt::ImageFormat::cubin, {}}, device);
  const ptxrt::TuningSpace space = ptxrt::problem_space(problem, sizes, device);
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  const ptxrt::TuningKey key = ptxrt::problem_key(problem, sizes, device);
  CHECK(key.kernel == "gaussian_sum");
  CHECK(key.size == std::vector<std::int64_t>{100000});
  CHECK(key.source_hash == problem.key_hash());

  const auto run = [&](TableMeasurer& measurer, bool resume) {
    ptxrt::TuneOptions options;
    options.strategy = ptxrt::TuningStrategy::model;
    options.compile_threads = 2;
    options.database = &database;
    options.key = key;
    options.resume = resume;
    options.stop = &measurer.stop;
    return ptxrt::tune(space, compiler, measurer, options);
  };
  TableMeasurer interrupted;
  interrupted.stop_at = 5;
  const ptxrt::TuneReport stopped = run(interrupted, false);
  CHECK(stopped.results.size() == 5);
  CHECK(stopped.not_reached == 7);
  for (const ptxrt::TuneResult& result : stopped.results) {
    REQUIRE(result.resources);  // the compiled entry, found by its mangled name
    CHECK(result.resources->registers > 0);
    REQUIRE(result.shape);
    CHECK(result.shape->block_threads == result.measurement.config.at("block_size_x"));
  }

  TableMeasurer resumed;
  const ptxrt::TuneReport report = run(resumed, true);
  CHECK(report.resumed.size() == 5);
  CHECK(resumed.asked.size() == 7);
  std::set<std::string> all(interrupted.asked.begin(), interrupted.asked.end());
  all.insert(resumed.asked.begin(), resumed.asked.end());
  CHECK(all.size() == 12);
  REQUIRE(report.winner);
  // ALGORITHM=1 with two items per thread is the fastest but wrong: the fastest right one wins.
  CHECK(report.winner->config.describe() ==
        "ALGORITHM=2 ITEMS_PER_THREAD=2 UNROLL=4 block_size_x=64");

  // The database holds the problem's tune under its key; choose() finds it at this size, the
  // nearest size, another device of the same capability, and falls back to the problem's
  // default config on another capability.
  const std::vector<ptxrt::TuningRecord> records = database.records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].key == key);
  CHECK(records[0].measurements.size() == 12);
  CHECK(records[0].winner->config == report.winner->config);
  const auto choice = [&](std::int64_t n, const ptxrt::DeviceProperties& on) {
    return ptxrt::choose(records, ptxrt::problem_key(problem, {{"n", n}}, on),
                         problem.fallback_config(problem.complete_sizes({{"n", n}})));
  };
  CHECK(choice(100000, device).level == ptxrt::ChoiceLevel::exact_size);
  CHECK(choice(150000, device).level == ptxrt::ChoiceLevel::nearest_size);
  CHECK(choice(150000, device).config == report.winner->config);
  ptxrt::DeviceProperties h200 = device;
  h200.name = "NVIDIA H200";
  CHECK(choice(100000, h200).level == ptxrt::ChoiceLevel::same_compute_capability);
  const ptxrt::TunedChoice elsewhere = choice(100000, ptxrt::device_model(8, 0));
  CHECK(elsewhere.level == ptxrt::ChoiceLevel::declared_default);
  CHECK(elsewhere.config.describe() == "ALGORITHM=0 ITEMS_PER_THREAD=1 UNROLL=4 block_size_x=64");
}

namespace {

// A kernel whose HEAVY unrolls HEAVY x HEAVY x 8 shared-memory multiply-adds, tuned over HEAVY = 1
// (quick to compile) and `heavy_value`: 24 takes seconds of NVRTC, 40 half a minute.
KernelProblem heavy_problem(ScratchDirectory& scratch, std::int64_t heavy_value) {
  // NVRTC would answer a repeated compile from the CUDA compute cache where a driver is installed.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  const fs::path source =
      write(scratch, "heavy.cu",
            "__constant__ float w[4096];\n"
            "extern \"C\" __global__ void heavy(float* out, const float* in) {\n"
            "  __shared__ float sh[64][65];\n"
            "  for (int i = threadIdx.y; i < 64; i += blockDim.y)\n"
            "    for (int j = threadIdx.x; j < 64; j += blockDim.x) sh[i][j] = in[i * 64 + j];\n"
            "  __syncthreads();\n"
            "  float sum[8][8];\n"
            "  for (int a = 0; a < 8; ++a) for (int b = 0; b < 8; ++b) sum[a][b] = 0;\n"
            "#pragma unroll\n"
            "  for (int i = 0; i < HEAVY; ++i)\n"
            "#pragma unroll\n"
            "    for (int j = 0; j < HEAVY; ++j)\n"
            "#pragma unroll\n"
            "      for (int t = 0; t < 8; ++t)\n"
            "        sum[t][(i + j) % 8] += sh[(threadIdx.y + i + t) % 64][(threadIdx.x + j) % 64] "
            "* w[i * HEAVY + j];\n"
            "  float total = 0;\n"
            "  for (int a = 0; a < 8; ++a) for (int b = 0; b < 8; ++b) total += sum[a][b];\n"
            "  out[threadIdx.y * blockDim.x + threadIdx.x] = total;\n}\n");
  KernelProblem problem(ptxrt::Program::from_file(source), "heavy");
  problem.tune("HEAVY", {1, heavy_value})
      .block("32", "8")
      .buffer("out", ptxrt::ElementType::float32, "256", ptxrt::DataInit::zeros(),
              ptxrt::ArgumentRole::output)
      .buffer("in", ptxrt::ElementType::float32, "4096");
  problem.validate();
  return problem;
}

// Every config "runs" in 1 ms: the tests below time nothing.
struct OneMillisecond : ptxrt::Measurer {
  Measurement measure(const Candidate& candidate, std::optional<double>) override {
    return {.config = candidate.config, .status = MeasurementStatus::ok, .median_ms = 1.0};
  }
};

}  // namespace

TEST_CASE("a compile past the compile timeout is cancelled and recorded, and the tune goes on") {
  ScratchDirectory scratch;
  const KernelProblem problem = heavy_problem(scratch, 24);
  ptxrt::Jit jit(ptxrt::JitOptions{.cache_directory = {}});
  const ptxrt::DeviceProperties device = h100();
  const ptxrt::CandidateCompiler compiler = ptxrt::problem_compiler(
      jit, problem, {}, {"sm_90", ptxrt::ImageFormat::cubin, {}}, device, std::chrono::seconds(2));
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  OneMillisecond measurer;
  ptxrt::TuneOptions options;
  options.compile_threads = 0;
  options.database = &database;
  options.key = ptxrt::problem_key(problem, {}, device);
  const ptxrt::TuneReport report =
      ptxrt::tune(ptxrt::problem_space(problem, {}, device), compiler, measurer, options);
  CHECK(report.compile_timeouts == 1);
  REQUIRE(report.compile_failures.size() == 1);
  CHECK(report.compile_failures[0].config.describe() == "HEAVY=24");
  CHECK(ptxrt::testing::contains(report.compile_failures[0].reason,
                                 "took longer than the compile timeout of 2 s: cancelled"));
  REQUIRE(report.winner);
  CHECK(report.winner->config.describe() == "HEAVY=1");
  std::map<std::string, std::string> recorded;
  for (const Measurement& m : database.measurements(options.key))
    recorded[m.config.describe()] = ptxrt::to_string(m.status);
  CHECK(recorded ==
        std::map<std::string, std::string>{{"HEAVY=1", "ok"}, {"HEAVY=24", "compile_timeout"}});
}

TEST_CASE(
    "a tune that ends with a compile in flight cancels it instead of waiting for it, and "
    "its wall time counts the cancelling") {
  ScratchDirectory scratch;
  const KernelProblem problem = heavy_problem(scratch, 40);
  ptxrt::Jit jit(ptxrt::JitOptions{.cache_directory = {}});
  const ptxrt::DeviceProperties device = h100();
  // No compile timeout: only the tune's end can stop HEAVY=40, which compiles on the second
  // thread while HEAVY=1, the budget's one config, is timed.
  const ptxrt::CandidateCompiler compiler =
      ptxrt::problem_compiler(jit, problem, {}, {"sm_90", ptxrt::ImageFormat::cubin, {}}, device);
  OneMillisecond measurer;
  ptxrt::TuneOptions options;
  options.strategy = ptxrt::TuningStrategy::exhaustive;
  options.compile_threads = 2;
  options.budget = 1;
  const ptxrt::TuningSpace space = ptxrt::problem_space(problem, {}, device);
  const auto before = std::chrono::steady_clock::now();
  const ptxrt::TuneReport report = ptxrt::tune(space, compiler, measurer, options);
  const double call_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  REQUIRE(report.winner);
  CHECK(report.winner->config.describe() == "HEAVY=1");
  CHECK(report.results.size() == 1);
  // Waited for, HEAVY=40's compile would have finished and been counted.
  CHECK(jit.stats().compiles == 1);
  // The tune returns only once HEAVY=40's compile has been cancelled and its thread joined, which
  // can take seconds: that wait is part of what the tune cost, and a wall time read before it
  // would fall short of the call by all of it. The tolerance is for the call and return around
  // the tune's own clock.
  CHECK(report.wall_seconds >= call_seconds - 0.005);
}

TEST_CASE(
    "a problem that declares no sizes plans through the C++ API: its checks, space, key "
    "and every config compiled, at no sizes") {
  ScratchDirectory scratch;
  nlohmann::ordered_json document = problem_json("gaussian_sum");
  // 4096 values, fixed where the file says n.
  document.erase("sizes");
  document["problem_size"] = {"4096"};
  for (auto& argument : document["arguments"])
    argument[argument.contains("count") ? "count" : "value"] = "4096";
  document["verify"]["reference"]["grid"] = {"ceil_div(4096, 256)"};
  document["rate"]["work"] = "4096 * steps";
  document["tune"] = {{"block_size_x", {128, 256}},
                      {"ITEMS_PER_THREAD", {1}},
                      {"UNROLL", {1}},
                      {"ALGORITHM", {0, 1}}};
  const KernelProblem problem = KernelProblem::from_json(
      document.dump(), ptxrt::Program::from_file(kernels / "gaussian_sum.cu"), "fixed.json",
      kernels);
  const ptxrt::ProblemSizes sizes = problem.complete_sizes({});
  CHECK(sizes.empty());
  const ptxrt::DeviceProperties device = ptxrt::device_model(9, 0);
  const ptxrt::Target target{"sm_90", ptxrt::ImageFormat::cubin, {}};
  ptxrt::Jit jit(ptxrt::JitOptions{.cache_directory = scratch.path() / "cache"});
  ptxrt::check_problem(jit, problem, sizes, target, device);
  const ptxrt::TuningKey key = ptxrt::problem_key(problem, sizes, device);
  CHECK(key.kernel == "gaussian_sum");
  CHECK(key.size.empty());
  const ptxrt::TunePlan plan =
      ptxrt::plan_tune(ptxrt::problem_space(problem, sizes, device),
                       ptxrt::problem_compiler(jit, problem, sizes, target, device), {});
  CHECK(plan.space_size == 4);
  CHECK(plan.compile_failures.empty());
  CHECK(plan.ready.size() == 4);
}
