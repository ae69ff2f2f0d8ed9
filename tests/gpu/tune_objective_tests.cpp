// How a tune times and what it chooses by, on the GPU: warm runs against flushed ones for data
// that fit in L2, warm samples free of the host's submission time, power observed through NVML,
// the winner by energy, and a problem's metric in the report. The tunes are small (the
// convolution at 512x512, a few configs): under a minute.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "ptxrt/tune/launch_timer.hpp"
#include "tune_cli.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ptxrt::testing::cli_json;
using ptxrt::testing::Scratch;

namespace {

const fs::path kernels = fs::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";

constexpr const char* sum_source = R"(
extern "C" __global__ void add_into(float* out, const float* in, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] += in[i];
}
)";

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// The convolution problem with a small space and `metrics`, written into `scratch`.
std::string convolution_problem(const Scratch& scratch, const json& metrics) {
  std::ifstream in(kernels / "convolution.json");
  json problem = json::parse(in);
  problem["tune"] = {{"block_size_x", {16, 32, 64}}, {"block_size_y", {4, 8}}, {"tile_size_x", {1}},
                     {"tile_size_y", {1}},           {"use_padding", {0}},     {"read_only", {1}}};
  if (!metrics.is_null()) problem["metrics"] = metrics;
  const fs::path path = scratch.path() / "problem.json";
  std::ofstream(path) << problem.dump(1);
  return path.string();
}

// One tune's report (--json) of the convolution at 512x512, exhaustive, with `extra` options.
json tune_convolution(const Scratch& scratch, const json& metrics,
                      const std::vector<std::string>& extra) {
  std::vector<std::string> arguments{"tune",       (kernels / "convolution.cu").string(),
                                     "--problem",  convolution_problem(scratch, metrics),
                                     "--size",     "W=512,H=512",
                                     "--strategy", "exhaustive",
                                     "--db",       (scratch.path() / "tuning.json").string(),
                                     "--json"};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  const json reports = cli_json(scratch, arguments);
  REQUIRE(reports.size() == 1);
  return reports[0];
}

std::vector<json> ok_results(const json& report) {
  std::vector<json> ok;
  for (const json& result : report["results"])
    if (result["status"] == "ok") ok.push_back(result);
  return ok;
}

}  // namespace

TEST_CASE("a kernel whose data fit in L2 times faster warm than with the L2 flushed") {
  const ptxrt::Context& context = ptxrt::testing::test_context();
  ptxrt::Module module = ptxrt::testing::load_source(sum_source, "add_into.cu");
  ptxrt::Kernel kernel = module.kernel("add_into");
  // 2 x 8 MiB: a third of an H100's L2 (50 MB), so that a warm run reads it all from L2, and
  // enough that reading it from memory takes several microseconds more than from L2.
  const int n = 1 << 21;
  ptxrt::DeviceBuffer<float> out(context, static_cast<std::size_t>(n));
  ptxrt::DeviceBuffer<float> in(context, static_cast<std::size_t>(n));
  const auto launch = [&] { kernel.launch({.grid = 264, .block = 256}, out, in, n); };
  ptxrt::LaunchTimer timer(context);
  std::vector<double> flushed, warm;
  launch();
  for (int run = 0; run < 50; ++run) {
    flushed.push_back(timer.sample(launch, ptxrt::L2Mode::flush));
    warm.push_back(timer.sample(launch, ptxrt::L2Mode::warm));
  }
  CAPTURE(median(flushed));
  CAPTURE(median(warm));
  CHECK(median(warm) < median(flushed));
}

TEST_CASE("a warm sample times the kernel, not the host's time to submit it") {
  const ptxrt::Context& context = ptxrt::testing::test_context();
  ptxrt::Module module = ptxrt::testing::load_source(sum_source, "add_into.cu");
  ptxrt::Kernel kernel = module.kernel("add_into");
  const int n = 1 << 16;  // a few microseconds a run
  ptxrt::DeviceBuffer<float> out(context, static_cast<std::size_t>(n));
  ptxrt::DeviceBuffer<float> in(context, static_cast<std::size_t>(n));
  const auto launch = [&] { kernel.launch({.grid = 64, .block = 256}, out, in, n); };
  // A host slow to submit, as a tuner's is while its other threads compile: 30 µs of its own work
  // between the start event and the launch.
  const auto slow_launch = [&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(30);
    while (std::chrono::steady_clock::now() < until) {
    }
    launch();
  };
  ptxrt::LaunchTimer timer(context);
  launch();
  const double back_to_back_ms = timer.time_back_to_back(launch, 200) / 200;
  std::vector<double> warm;
  for (int run = 0; run < 50; ++run) warm.push_back(timer.sample(slow_launch, ptxrt::L2Mode::warm));
  CAPTURE(back_to_back_ms);
  CAPTURE(median(warm));
  CHECK(median(warm) < back_to_back_ms + 0.015);
}

TEST_CASE("a tune that observes power records energy, power and clocks of each ok config") {
  Scratch scratch;
  const json report = tune_convolution(scratch, nullptr, {"--observe", "power", "--l2", "warm"});
  CHECK(report["key"]["l2"] == "warm");
  const std::vector<json> ok = ok_results(report);
  REQUIRE_FALSE(ok.empty());
  for (const json& result : ok) {
    INFO(result.dump());
    REQUIRE(result.contains("power"));
    CHECK(result["power"]["energy_j"].get<double>() > 0.0);
    CHECK(result["power"]["power_w"].get<double>() >= 10.0);
    CHECK(result["power"]["power_w"].get<double>() <= 1000.0);
    CHECK(result["power"]["sm_clock_mhz"].get<double>() > 0.0);
    CHECK(result["power"]["temperature_c"].get<double>() > 0.0);
  }
}

TEST_CASE("a tune for energy wins with the ok config of the least energy per run") {
  Scratch scratch;
  const json report = tune_convolution(scratch, nullptr, {"--objective", "energy"});
  CHECK(report["key"]["objective"]["name"] == "energy");
  CHECK(report["counts"]["cut"] == 0);  // a slower config may take less energy: none is cut
  const std::vector<json> ok = ok_results(report);
  REQUIRE_FALSE(ok.empty());
  double least = std::numeric_limits<double>::infinity();
  for (const json& result : ok) least = std::min(least, result["power"]["energy_j"].get<double>());
  REQUIRE(report["winner"].is_object());
  CHECK(report["winner"]["power"]["energy_j"].get<double>() == least);
}

TEST_CASE("a problem's GFLOP/s metric is in the report, and wins as the objective") {
  Scratch scratch;
  const json metrics{
      {"GFLOP/s", {{"work", "2 * W * H * 17 * 17"}, {"per", "time_s"}, {"scale", 1e9}}}};
  const json report = tune_convolution(scratch, metrics, {"--objective", "GFLOP/s"});
  CHECK(report["key"]["objective"] == json{{"name", "GFLOP/s"}, {"higher_is_better", true}});
  const std::vector<json> ok = ok_results(report);
  REQUIRE_FALSE(ok.empty());
  double most = 0.0;
  for (const json& result : ok) {
    // The metric is the rate the problem's flops give: the same work per second.
    CHECK(result["metrics"]["GFLOP/s"].get<double>() ==
          doctest::Approx(result["rate"].get<double>()).epsilon(1e-6));
    most = std::max(most, result["metrics"]["GFLOP/s"].get<double>());
  }
  CHECK(report["winner"]["metrics"]["GFLOP/s"].get<double>() == most);
}
