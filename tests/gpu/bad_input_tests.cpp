// The bad-input matrix's rows that need a GPU (the others are in tests/cpu/bad_input_tests.cpp):
// each bad call is one clear Error naming the thing at fault, and a good call in the same process
// works afterwards. A faulting kernel runs in a child process (this binary, one case), so that
// the parent can show that a new context works after it. A case that makes a driver call fail on
// purpose says "the driver refuses" in its name (or "fault"): scripts/sanitize_gpu_tests.py leaves
// those out, since compute-sanitizer reports every failed call.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "error_checks.hpp"
#include "gpu_fixture.hpp"
#include "process.hpp"
#include "ptxrt/tune/tuning_database.hpp"

using namespace ptxrt;
using ptxrt::testing::load_source;
using ptxrt::testing::run_process;
using ptxrt::testing::test_context;

using ptxrt::testing::check_error;
using ptxrt::testing::contains;

namespace {

constexpr std::string_view source = R"(
extern "C" __constant__ float table[16];
extern "C" __global__ void fill(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[i % 16];
}
extern "C" __global__ void __launch_bounds__(128) bounded(float* out) { out[threadIdx.x] = 1.0f; }
extern "C" __global__ void shared_sum(float* out, int n) {
  extern __shared__ float scratch[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) scratch[i] = 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = scratch[n - 1];
}
extern "C" __global__ void fault(float* out) { *reinterpret_cast<float*>(0x10) = out[0]; }
)";

// Set in the child that runs the faulting kernel; the parent checks what the child reported.
constexpr const char* fault_child_variable = "PTXRT_TEST_FAULTING_CHILD";

// The good call after each bad one: fill 16 elements from the table and read them back.
void check_fill_works(const Module& module, const Context& context) {
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i);
  module.symbol<float>("table").set(std::span<const float>(values));
  DeviceBuffer<float> out(context, 16);
  module.kernel("fill").launch({.grid = 1, .block = 16}, out, 16);
  CHECK(out.download() == values);
}

}  // namespace

TEST_CASE(
    "bad inputs: the driver refuses an unknown entry point and symbol (not_found), then the "
    "module works") {
  const Module module = load_source(source, "bad_inputs.cu");
  check_error([&] { module.kernel("fil"); }, ErrorKind::not_found,
              "no kernel named 'fil' in module bad_inputs.cu");
  check_error([&] { module.symbol<float>("tabel"); }, ErrorKind::not_found,
              "no __constant__ or __device__ symbol named 'tabel'");
  check_fill_works(module, test_context());
}

TEST_CASE("bad inputs: the driver refuses a C++ kernel asked for by its bare name, and the error "
          "lists it as written with its symbol, and it runs by that symbol") {
  const Context& context = test_context();
  const Module module = ptxrt::testing::test_jit().module(
      Program::from_file(std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/convolution_1d.cu"), {},
      context);
  check_error([&] { module.kernel("convolution_kernel"); }, ErrorKind::not_found,
              "its entry points are: convolution_kernel(float*, float*, float*) "
              "[_Z18convolution_kernelPfS_S_]");

  // The good call: a ragged length (not a multiple of the block), fresh inputs, a CPU reference.
  const int length = 1001, taps = 5;  // MASK_WIDTH's default
  const unsigned seed = std::random_device{}();
  CAPTURE(seed);
  const std::vector<float> input = ptxrt::testing::random_floats(length, seed);
  const std::vector<float> mask = ptxrt::testing::random_floats(taps, seed + 1);
  module.symbol<int>("length").set(length);
  DeviceBuffer<float> device_input(context, std::span<const float>(input));
  DeviceBuffer<float> device_mask(context, std::span<const float>(mask));
  DeviceBuffer<float> device_output(context, input.size());
  device_output.memory().fill_words(ptxrt::testing::poison_word);
  module.kernel("_Z18convolution_kernelPfS_S_")
      .launch({.grid = blocks_for(length, 128), .block = 128}, device_input, device_mask,
              device_output);
  const std::vector<float> output = device_output.download();
  for (int i = 0; i < length; ++i) {
    float expected = 0.0f;
    for (int j = 0; j < taps; ++j)
      if (const int at = i + j - taps / 2; at >= 0 && at < length)
        expected += input[static_cast<std::size_t>(at)] * mask[static_cast<std::size_t>(j)];
    REQUIRE(output[static_cast<std::size_t>(i)] == doctest::Approx(expected).epsilon(1e-5));
  }
}

TEST_CASE("bad inputs: a symbol copy of the wrong size names both sizes, then a right one works") {
  const Module module = load_source(source, "bad_inputs.cu");
  const std::vector<double> wrong(16, 1.0);
  check_error([&] { module.symbol<double>("table").set(std::span<const double>(wrong)); },
              ErrorKind::invalid_argument, "is 64 bytes, but 128 bytes were given to write");
  check_fill_works(module, test_context());
}

TEST_CASE("bad inputs: wrong argument count and size are refused, then the launch works") {
  const Module module = load_source(source, "bad_inputs.cu");
  DeviceBuffer<float> out(test_context(), 16);
  const Kernel fill = module.kernel("fill");
  check_error([&] { fill.launch({.grid = 1, .block = 16}, out); }, ErrorKind::invalid_argument,
              "takes 2 argument(s), but 1 were given");
  check_error([&] { fill.launch({.grid = 1, .block = 16}, out, std::int64_t{16}); },
              ErrorKind::invalid_argument, "argument 1 is 4 bytes in the kernel, but a 8-byte");
  check_fill_works(module, test_context());
}

TEST_CASE("bad inputs: blocks over the device's or the kernel's limit and smem over the opt-in") {
  const Module module = load_source(source, "bad_inputs.cu");
  const DeviceProperties& device = test_context().device().properties();
  DeviceBuffer<float> out(test_context(), 1024);
  check_error(
      [&] {
        module.kernel("fill").launch({.grid = 1, .block = {64, 32}}, out, 16);
      },
      ErrorKind::invalid_argument,
      "block 64x32x1 = 2048 threads exceeds the kernel's max 1024 threads per block");
  check_error([&] { module.kernel("bounded").launch({.grid = 1, .block = 256}, out); },
              ErrorKind::invalid_argument,
              "block 256x1x1 = 256 threads exceeds the kernel's max 128 threads per block");
  const std::size_t too_much = device.shared_memory_per_block_optin + 4;
  check_error(
      [&] {
        module.kernel("shared_sum")
            .launch({.grid = 1, .block = 128, .dynamic_shared_bytes = too_much}, out, 4);
      },
      ErrorKind::invalid_argument,
      std::to_string(too_much) + " bytes of dynamic shared memory exceed the");
  check_fill_works(module, test_context());
}

TEST_CASE(
    "bad inputs: the driver refuses more device memory than is free, an Error naming the bytes") {
  const auto [free_bytes, total_bytes] = test_context().memory_info();
  const std::size_t asked = total_bytes + (std::size_t{1} << 30);
  check_error([&] { DeviceMemory(test_context(), asked); }, ErrorKind::driver,
              "allocating " + std::to_string(asked) + " bytes on device 0");
  check_error([&] { DeviceBuffer<float>(test_context(), SIZE_MAX / 2); },
              ErrorKind::invalid_argument, " elements of 4 bytes overflow size_t");
  // The failed allocation left nothing behind: a quarter of what was free still fits.
  DeviceMemory fits(test_context(), free_bytes / 4);
  fits.fill_bytes(0);
  test_context().synchronize();
  check_fill_works(load_source(source, "bad_inputs.cu"), test_context());
}

// The parent runs this same case in a child with fault_child_variable set; the child faults.
TEST_CASE("bad inputs: a faulting kernel leaves its context unusable, and a new one works") {
  if (std::getenv(fault_child_variable) != nullptr) {
    const Context faulty = Context::create(test_context().device());
    const Module module = load_source(source, "bad_inputs.cu", faulty);
    DeviceBuffer<float> out(faulty, 4);
    module.kernel("fault").launch({.grid = 1, .block = 1}, out);
    try {
      faulty.synchronize();
      FAIL("the faulting kernel was not reported");
    } catch (const Error& error) {
      CHECK(error.kind() == ErrorKind::sticky);
      std::printf("child: %s\n", error.what());  // for the parent to read
    }
    return;
  }
  const auto child =
      run_process({"/proc/self/exe", "--test-case=bad inputs: a faulting kernel*", "--no-colors"},
                  {std::string(fault_child_variable) + "=1"});
  INFO(child.output);
  CHECK(child.exit_code == 0);
  CHECK(contains(child.output, "child: "));
  CHECK(contains(child.output, "CUDA_ERROR_ILLEGAL_ADDRESS"));
  CHECK(contains(child.output, "sticky error: the context is now unusable"));
  CHECK(contains(child.output, "1 passed"));
  const Context fresh = Context::create(test_context().device());
  check_fill_works(load_source(source, "bad_inputs.cu", fresh), fresh);
}

TEST_CASE(
    "bad inputs: the driver refuses to start with no visible device, and the CLI says so and "
    "exits 1 (devices exits 0)") {
  const std::vector<std::string> hidden{"CUDA_VISIBLE_DEVICES=-1"};
  const auto devices = run_process({PTXRT_CLI_PATH, "devices"}, hidden);
  CHECK(devices.exit_code == 0);
  CHECK_MESSAGE(contains(devices.output, "no CUDA device"), devices.output);
  const auto run = run_process({PTXRT_CLI_PATH, "run", "vecadd", "--n", "100"}, hidden);
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(contains(run.output, "ptxrt: error: no CUDA device"), run.output);
  const auto probe = run_process({PTXRT_DRIVER_PROBE_PATH}, hidden);
  CHECK_MESSAGE(contains(probe.output, "Device::count threw no_device"), probe.output);
}

TEST_CASE("bad inputs: damaged disk-cache entries are recompiled by ptxrt run, which passes") {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("ptxrt-bad-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  const std::vector<std::string> environment{"PTXRT_CACHE_DIR=" + cache.string()};
  const std::vector<std::string> command{PTXRT_CLI_PATH, "run",      "vecadd",   "--n",
                                         "1000",         "--verify", "--repeat", "1"};
  REQUIRE(run_process(command, environment).exit_code == 0);
  std::size_t damaged = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache)) {
    if (!entry.is_regular_file()) continue;
    std::filesystem::resize_file(entry.path(), entry.file_size() / 2);
    ++damaged;
  }
  REQUIRE(damaged > 0);
  const auto rerun = run_process(command, environment);
  INFO(rerun.output);
  CHECK(rerun.exit_code == 0);
  CHECK(contains(rerun.output, "is corrupt or truncated (checksum mismatch); deleted"));
  CHECK(contains(rerun.output, "PASS"));
  std::filesystem::remove_all(cache);
}

// The interrupted-tune row: `ptxrt tune` started as a user starts it and interrupted once the
// database holds a finished measurement. --no-parallel-compile and an empty disk cache make each
// config compile just before it is timed, so that a config lasts long enough (an NVRTC compile)
// for the test to signal between two of matmul's four.
namespace {

namespace fs = std::filesystem;
using ptxrt::testing::BackgroundProcess;
using ptxrt::testing::is_running;
using ptxrt::testing::ProcessResult;
using ptxrt::testing::running_children;

class TuneScratch {
 public:
  TuneScratch() {
    std::string pattern = (fs::temp_directory_path() / "ptxrt-interrupt-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    directory_ = pattern;
  }
  ~TuneScratch() {
    std::error_code error;
    fs::remove_all(directory_, error);
  }
  TuneScratch(const TuneScratch&) = delete;
  TuneScratch& operator=(const TuneScratch&) = delete;

  const fs::path& directory() const { return directory_; }
  std::string database() const { return (directory_ / "tuning.json").string(); }
  std::vector<std::string> command() const {
    return {PTXRT_CLI_PATH,          "tune", "matmul",  "--size", "256",
            "--no-parallel-compile", "--db", database()};
  }
  std::vector<std::string> environment() const {
    return {"PTXRT_CACHE_DIR=" + (directory_ / "cache").string(), "PTXRT_LOG=error"};
  }

 private:
  fs::path directory_;
};

// TILE_WIDTH → status of every config the database holds.
std::map<std::string, std::string> recorded(const std::string& database) {
  std::map<std::string, std::string> statuses;
  for (const TuningRecord& record : TuningDatabase(database).records())
    for (const Measurement& measurement : record.measurements)
      statuses[measurement.config.defines().at(0).value] = to_string(measurement.status);
  return statuses;
}

std::size_t count_finished(const std::map<std::string, std::string>& statuses) {
  std::size_t count = 0;
  for (const auto& [tile, status] : statuses) count += status != "started";
  return count;
}

template <typename Condition>
bool wait_until(Condition condition, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Waits for the database to hold a finished measurement while the tune is still running.
void wait_for_first_measurement(BackgroundProcess& tune, const TuneScratch& scratch) {
  const bool measured = wait_until(
      [&] { return !tune.running() || count_finished(recorded(scratch.database())) > 0; },
      std::chrono::seconds(300));
  INFO(tune.output());
  REQUIRE(measured);
  REQUIRE(tune.running());
}

// `ptxrt tune --resume` after the interruption: it times exactly the configs without a finished
// measurement (the one in progress at a kill included), skips the rest, and its winner is the
// fastest of all four, as an uninterrupted tune's would be. No temporary file is left.
void check_resume(const TuneScratch& scratch, const std::map<std::string, std::string>& before) {
  std::vector<std::string> command = scratch.command();
  command.insert(command.end(), {"--resume", "--json"});
  const ProcessResult resumed = run_process(command, scratch.environment());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const std::size_t start = resumed.output.starts_with("[") ? 0 : resumed.output.find("\n[");
  REQUIRE(start != std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(resumed.output.substr(start)).at(0);
  const std::size_t finished = count_finished(before);
  CHECK(report["counts"]["resumed"] == finished);
  CHECK(report["counts"]["timed"] == 4 - finished);
  for (const nlohmann::json& result : report["results"]) {
    const std::string tile = result["config"]["TILE_WIDTH"];
    CHECK_MESSAGE((!before.contains(tile) || before.at(tile) == "started"), tile);
  }
  const std::vector<TuningRecord> records = TuningDatabase(scratch.database()).records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].measurements.size() == 4);
  CHECK(count_finished(recorded(scratch.database())) == 4);
  REQUIRE(records[0].winner);
  REQUIRE(report["winner"].is_object());
  CHECK(report["winner"]["config"]["TILE_WIDTH"] ==
        records[0].winner->config.defines().at(0).value);
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(scratch.directory()))
    files.insert(entry.path().filename().string());
  CHECK(files == std::set<std::string>{"cache", "tuning.json", "tuning.json.lock"});
}

// `ptxrt tune resume`, as the interrupted tune printed it: the request recorded in the database
// (its --no-parallel-compile included) runs again with --resume, finishes every config, and the
// request is marked finished.
void check_resume_from_database(const TuneScratch& scratch, const std::string& printed) {
  const std::vector<ptxrt::TuneRequest> requests = TuningDatabase(scratch.database()).requests();
  REQUIRE(requests.size() == 1);
  CHECK_FALSE(requests[0].finished);
  CHECK(nlohmann::json::parse(requests[0].request)["no-parallel-compile"] == true);
  CHECK(contains(printed, "ptxrt: resume with: ptxrt tune resume --db " + scratch.database() +
                              " --id " + requests[0].id + "\n"));
  const ProcessResult resumed = run_process(
      {PTXRT_CLI_PATH, "tune", "resume", "--db", scratch.database()}, scratch.environment());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(count_finished(recorded(scratch.database())) == 4);
  CHECK(TuningDatabase(scratch.database()).requests().at(0).finished);
}

}  // namespace

TEST_CASE(
    "bad inputs: Ctrl-C stops a tune after the config in progress with exit 130, and "
    "tune resume times the rest from what the database recorded") {
  test_context();  // skipped (77) without a GPU
  const TuneScratch scratch;
  BackgroundProcess tune(scratch.command(), scratch.environment(), BackgroundProcess::Group::own);
  wait_for_first_measurement(tune, scratch);
  const std::vector<pid_t> workers = running_children(tune.pid());
  CHECK(workers.size() == 1);
  // As a terminal's Ctrl-C: to the whole foreground job, the worker included.
  tune.signal_group(SIGINT);
  const ProcessResult result = tune.wait();
  INFO(result.output);
  CHECK(result.exit_code == 130);
  CHECK(contains(result.output, "ptxrt: stopping after the config in progress"));
  CHECK(contains(result.output,
                 "ptxrt: interrupted by SIGINT: stopped after the config in progress; "));
  CHECK_FALSE(contains(result.output, "ptxrt: error:"));
  for (const pid_t worker : workers) CHECK_FALSE(is_running(worker));
  // Every config it began was finished and recorded (none left 'started'), and the worker lived
  // through the Ctrl-C (none 'crashed'); the rest were not reached.
  const std::map<std::string, std::string> statuses = recorded(scratch.database());
  for (const auto& [tile, status] : statuses) {
    CAPTURE(tile);
    CHECK((status == "ok" || status == "cut"));
  }
  // The 4 configs take about 0.1 s each: beside other GPU tests, the signal may land in the last.
  CHECK(statuses.size() >= 1);
  CHECK(statuses.size() <= 4);
  CHECK(contains(result.output, "not reached " + std::to_string(4 - statuses.size()) + "\n"));
  check_resume_from_database(scratch, result.output);
}

TEST_CASE(
    "bad inputs: a tune killed by SIGKILL keeps its measurements and leaves no worker, and "
    "--resume finishes it") {
  test_context();  // skipped (77) without a GPU
  const TuneScratch scratch;
  BackgroundProcess tune(scratch.command(), scratch.environment(), BackgroundProcess::Group::own);
  wait_for_first_measurement(tune, scratch);
  const std::vector<pid_t> workers = running_children(tune.pid());
  REQUIRE(workers.size() == 1);
  tune.signal(SIGKILL);  // the tune alone: its worker must end by itself
  CHECK(tune.wait().exit_code == 128 + SIGKILL);
  CHECK(wait_until([&] { return !is_running(workers[0]); }, std::chrono::seconds(10)));
  // The database is whole; at most the config in progress is left 'started'.
  const std::map<std::string, std::string> statuses = recorded(scratch.database());
  CHECK(count_finished(statuses) >= 1);
  CHECK(statuses.size() - count_finished(statuses) <= 1);
  check_resume(scratch, statuses);
}
