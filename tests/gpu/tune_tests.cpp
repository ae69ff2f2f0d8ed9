// The tuner end to end, as a user drives it: `ptxrt tune` (workers and all) on small sizes, a
// kernel file with a planted wrong config and a planted faulting one, and the tuned runs reading
// the database afterwards (the CLI's, and ptxrt::sgemm's tuned choice). About 20 s on an H100.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "apps/tune/tune_problems.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "tune_cli.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ptxrt::testing::cli_json;
using ptxrt::testing::Scratch;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

const json& result_for(const json& report, const json& config) {
  for (const json& result : report["results"])
    if (result["config"] == config) return result;
  FAIL("no result for " << config.dump());
  return report;
}

json defines_json(const ptxrt::SgemmConfig& config) {
  json defines = json::object();
  for (const ptxrt::Define& define : config.defines()) defines[define.name] = define.value;
  return defines;
}

// The config ptxrt::sgemm() runs for m×n×k with SgemmChoice::tuned on `database`, as defines.
json library_tuned_defines(int m, int n, int k, const std::string& database) {
  const ptxrt::TuningDatabase tunes(database);
  const std::vector<float> a(static_cast<std::size_t>(m) * k, 1.0f);
  const std::vector<float> b(static_cast<std::size_t>(k) * n, 1.0f);
  const ptxrt::DeviceBuffer<float> device_a(test_context(), std::span<const float>(a));
  const ptxrt::DeviceBuffer<float> device_b(test_context(), std::span<const float>(b));
  ptxrt::DeviceBuffer<float> device_c(test_context(), static_cast<std::size_t>(m) * n);
  return defines_json(
      ptxrt::sgemm(test_context(), m, n, k, device_a, device_b, device_c,
                   {.choice = ptxrt::SgemmChoice::tuned, .database = &tunes, .jit = &test_jit()}));
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
  const auto choice_for = [&](std::int64_t side) {
    return ptxrt::apps::choose_tuned(ptxrt::apps::matmul_problem(),
                                     {{"m", side}, {"n", side}, {"k", side}}, device, tuning);
  };
  const ptxrt::TunedChoice exact = choice_for(256);
  CHECK(exact.level == ptxrt::ChoiceLevel::exact_size);
  CHECK(exact.config.defines().at(0).value == winner_config["TILE_WIDTH"].get<std::string>());
  CHECK(choice_for(300).level == ptxrt::ChoiceLevel::nearest_size);

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

  const json wrong = result_for(report, {{"PLANT", "1"}, {"TILE_WIDTH", "16"}});
  CHECK(wrong["status"] == "wrong");
  // The first element off, against the fp64 reference: "c[0] = ..., expected ... (...): outside".
  CHECK_MESSAGE(wrong["detail"].get<std::string>().starts_with("c["), wrong["detail"]);
  CHECK(wrong["detail"].get<std::string>().find("): outside atol") != std::string::npos);

  const json fault = result_for(report, {{"PLANT", "2"}, {"TILE_WIDTH", "16"}});
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

TEST_CASE("run sgemm --tuned and closest-pair --tuned use the winners the tunes recorded") {
  Scratch scratch;
  const std::string database = (scratch.path() / "tuning.json").string();
  // A small budget of the model's order: enough for a winner, quick on any GPU (the model's first
  // wait for compiles is 10 s at most without a time limit).
  const json sgemm = cli_json(scratch, {"tune", "sgemm", "--size", "520x300x130", "--budget", "8",
                                        "--db", database, "--json"});
  REQUIRE(sgemm[0]["winner"].is_object());
  const json sgemm_runs =
      cli_json(scratch, {"run", "sgemm", "--m", "520", "--n", "300", "--k", "130", "--tuned",
                         "--db", database, "--verify", "--json"});
  REQUIRE(sgemm_runs.size() == 1);
  CHECK(sgemm_runs[0]["tuned"]["level"] == "exact");
  CHECK(sgemm_runs[0]["tuned"]["config"] == sgemm[0]["winner"]["config"]);
  for (const auto& [name, value] : sgemm[0]["winner"]["config"].items())
    CHECK(sgemm_runs[0]["defines"][name] == value);
  CHECK(sgemm_runs[0]["passed"] == true);
  // The library's tuned choice is the same lookup.
  CHECK(sgemm_runs[0]["defines"] == library_tuned_defines(520, 300, 130, database));

  const json closest =
      cli_json(scratch, {"tune", "closest-pair", "--size", "100000", "--db", database, "--json"});
  REQUIRE(closest[0]["winner"].is_object());
  const json pair = cli_json(scratch, {"closest-pair", "--n", "100000", "--method", "dc", "--tuned",
                                       "--db", database, "--verify", "--json"});
  CHECK(pair["tuned"]["level"] == "exact");
  CHECK(pair["tuned"]["config"] == closest[0]["winner"]["config"]);
  CHECK(pair["verify"]["agrees"] == true);
}

TEST_CASE("run sgemm --tuned with nothing tuned runs the shape heuristic's config and says so") {
  Scratch scratch;
  const std::string database = (scratch.path() / "tuning.json").string();
  const json runs = cli_json(scratch, {"run", "sgemm", "--m", "77", "--n", "65", "--k", "300",
                                       "--tuned", "--db", database, "--verify", "--json"});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["tuned"]["level"] == "default");
  CHECK(runs[0]["tuned"]["from"].is_null());
  CHECK(runs[0]["note"].get<std::string>().find(
            "chosen by the shape heuristic: the database has no sgemm tune") != std::string::npos);
  CHECK(runs[0]["defines"] == defines_json(ptxrt::sgemm_heuristic_config(
                                  test_context().device().properties(), 77, 65, 300)));
  CHECK(runs[0]["defines"] == library_tuned_defines(77, 65, 300, database));
  CHECK(runs[0]["passed"] == true);
}

TEST_CASE(
    "a tune's report says where its wall time went, and a problem checked by a check kernel "
    "tunes verified") {
  Scratch scratch;
  const fs::path set = fs::path(PTXRT_SOURCE_DIR) / "tests" / "kernel_tuner";
  json report = cli_json(
      scratch, {"tune", (set / "squared_distance.cu").string(), "--problem",
                (set / "squared_distance.json").string(), "--strategy", "exhaustive", "--budget",
                "4", "--json", "--db", (scratch.path() / "tuning.json").string()});
  if (report.is_array()) report = report.at(0);
  REQUIRE(report["counts"]["timed"] == 4);
  for (const json& result : report["results"]) CHECK(result["status"] == "ok");
  const json& phases = report["phases"];
  const double measuring = report["measuring_seconds"];
  CHECK(phases["compile_seconds"].get<double>() > 0.0);
  CHECK(phases["reference_seconds"].get<double>() > 0.0);
  CHECK(phases["worker_start_seconds"].get<double>() >= phases["reference_seconds"].get<double>());
  CHECK(phases["worker_start_wait_seconds"].get<double>() <=
        phases["worker_start_seconds"].get<double>());
  CHECK(phases["verification_seconds"].get<double>() > 0.0);
  CHECK(phases["timing_seconds"].get<double>() > 0.0);
  CHECK(phases["worker_start_wait_seconds"].get<double>() +
            phases["verification_seconds"].get<double>() + phases["timing_seconds"].get<double>() +
            phases["other_measuring_seconds"].get<double>() ==
        doctest::Approx(measuring).epsilon(1e-9));
  CHECK(phases["idle_seconds"].get<double>() + measuring ==
        doctest::Approx(report["wall_seconds"].get<double>()).epsilon(1e-9));
}
