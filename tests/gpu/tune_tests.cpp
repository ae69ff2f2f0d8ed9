// The tuner end to end, as a user drives it: `ptxrt tune` (workers and all) on small sizes, a
// kernel file with a planted wrong config and a planted faulting one, and the tuned launch
// reading the database afterwards. About 20 s on an H100.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "host/tune/tune_problems.hpp"
#include "process.hpp"
#include "ptxrt/tuning_database.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "ptxrt-tune-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~Scratch() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs the CLI with its caches in `scratch` and returns the JSON it printed (workers share its
// stderr, so anything before the JSON is skipped).
json cli_json(const Scratch& scratch, std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  const ptxrt::testing::ProcessResult result = ptxrt::testing::run_process(
      arguments, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=error"});
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  std::size_t start = result.output.starts_with("[") ? 0 : result.output.find("\n[");
  REQUIRE(start != std::string::npos);
  return json::parse(result.output.substr(start));
}

const json& result_for(const json& report, const json& config) {
  for (const json& result : report["results"])
    if (result["config"] == config) return result;
  FAIL("no result for " << config.dump());
  return report;
}

}  // namespace

TEST_CASE("tuning matmul_tiled at 256^3 times every TILE_WIDTH and the tuned run uses the winner") {
  Scratch scratch;
  const std::string database = (scratch.path() / "tuning.json").string();
  const json reports = cli_json(scratch, {"tune", "matmul", "--size", "256", "--strategy",
                                          "exhaustive", "--db", database, "--json"});
  REQUIRE(reports.size() == 1);
  const json& report = reports[0];
  CHECK(report["counts"]["space"] == 4);
  CHECK(report["counts"]["compiled"] == 4);
  CHECK(report["counts"]["timed"] == 4);
  CHECK(report["counts"]["ok"].get<int>() + report["counts"]["cut"].get<int>() == 4);
  REQUIRE(report["winner"].is_object());
  const json winner_config = report["winner"]["config"];
  CHECK(report["winner"]["rate"].get<double>() > 0.0);

  // The library's lookup finds the winner for this exact size, the nearest for another.
  const ptxrt::DeviceProperties& device = ptxrt::testing::test_context().device().properties();
  const ptxrt::TuningDatabase tuning(database);
  const auto choice_for = [&](std::vector<std::int64_t> size) {
    return ptxrt::host::choose_tuned(ptxrt::host::make_tune_problem("matmul", size, device), device,
                                     tuning);
  };
  const ptxrt::TunedChoice exact = choice_for({256, 256, 256});
  CHECK(exact.level == ptxrt::ChoiceLevel::exact_size);
  CHECK(exact.config.defines().at(0).value == winner_config["TILE_WIDTH"].get<std::string>());
  CHECK(choice_for({300, 300, 300}).level == ptxrt::ChoiceLevel::nearest_size);

  // So does `ptxrt run --tuned`, and its verified run passes.
  const json runs = cli_json(scratch, {"run", "matmul", "--m", "256", "--n", "256", "--k", "256",
                                       "--tuned", "--db", database, "--verify", "--json"});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["tuned"]["level"] == "exact");
  CHECK(runs[0]["tuned"]["config"] == winner_config);
  CHECK(runs[0]["defines"]["TILE_WIDTH"] == winner_config["TILE_WIDTH"]);
  CHECK(runs[0]["passed"] == true);

  // A second tune with --resume measures nothing again.
  const json resumed = cli_json(
      scratch, {"tune", "matmul", "--size", "256", "--db", database, "--resume", "--json"});
  CHECK(resumed[0]["counts"]["timed"] == 0);
  CHECK(resumed[0]["counts"]["resumed"] == 4);
  CHECK(resumed[0]["winner"]["config"] == winner_config);
}

TEST_CASE(
    "a planted wrong config and a planted faulting config are reported and the tune goes on") {
  Scratch scratch;
  const std::string planted =
      std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/matmul_planted.cu";
  const json reports = cli_json(
      scratch, {"tune", "matmul", "--source", planted, "--size", "256", "--db",
                (scratch.path() / "tuning.json").string(), "--no-parallel-compile", "--json"});
  const json& report = reports.at(0);
  CHECK(report["counts"]["space"] == 6);
  CHECK(report["counts"]["pruned_by_constraints"] == 2);
  CHECK(report["counts"]["timed"] == 4);

  const json& wrong = result_for(report, {{"PLANT", "1"}, {"TILE_WIDTH", "16"}});
  CHECK(wrong["status"] == "wrong");
  CHECK(wrong["detail"].get<std::string>().find("over the tolerance") != std::string::npos);

  const json& fault = result_for(report, {{"PLANT", "2"}, {"TILE_WIDTH", "16"}});
  const std::string status = fault["status"];
  CHECK((status == "failed" || status == "crashed"));
  CAPTURE(fault["detail"].get<std::string>());
  // The configs timed after the fault ran in a fresh worker.
  CHECK(report["workers_started"].get<int>() >= 2);

  CHECK(result_for(report, {{"PLANT", "0"}, {"TILE_WIDTH", "8"}})["status"] != "failed");
  REQUIRE(report["winner"].is_object());
  CHECK(report["winner"]["config"]["PLANT"] == "0");
}

TEST_CASE("tuning with --devices all times the configs on every device, each naming its device") {
  Scratch scratch;
  const int device_count = ptxrt::Device::count();
  MESSAGE("tuning on " << device_count << " device(s)");
  const json reports =
      cli_json(scratch, {"tune", "matmul", "--size", "256", "--devices", "all", "--db",
                         (scratch.path() / "tuning.json").string(), "--json"});
  REQUIRE(reports.size() == 1);
  const json& report = reports[0];
  json all = json::array();
  for (int ordinal = 0; ordinal < device_count; ++ordinal) all.push_back(ordinal);
  CHECK(report["devices"] == all);
  CHECK(report["counts"]["timed"] == 4);
  CHECK(report["counts"]["ok"].get<int>() + report["counts"]["cut"].get<int>() == 4);
  // Workers start on a device's first config: four configs reach at most four devices.
  CHECK(report["workers_started"].get<int>() >= std::min(device_count, 4));
  for (const json& result : report["results"]) {
    REQUIRE(result["device"].is_number_integer());
    CHECK(result["device"].get<int>() >= 0);
    CHECK(result["device"].get<int>() < device_count);
  }
  REQUIRE(report["winner"].is_object());
  CHECK(report["winner"]["rate"].get<double>() > 0.0);
}
