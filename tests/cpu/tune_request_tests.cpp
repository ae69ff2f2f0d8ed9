// What a tune was asked, recorded in its database (TuningDatabase::begin_request), and `ptxrt
// tune resume`, which runs it again from there: the request's fields reach the resumed run
// through the same parser as a command line, and what cannot be resumed is said.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuning_database.hpp"

using nlohmann::json;
using ptxrt::ErrorKind;
using ptxrt::TuningDatabase;
using ptxrt::testing::check_error;
using ptxrt::testing::contains;
using ptxrt::testing::ScratchDirectory;

namespace {

ptxrt::testing::ProcessResult cli(const ScratchDirectory& scratch,
                                  std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  return ptxrt::testing::run_process(
      arguments, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=warning"});
}

ptxrt::TuningKey sample_key() {
  return {"matmul", "hash", "TILE_WIDTH in {8,16}", "NVIDIA H100", "9.0", 13000, {256, 256, 256}};
}

ptxrt::Measurement sample() {
  ptxrt::Measurement measurement;
  measurement.config = ptxrt::TuningConfig(std::vector<ptxrt::Define>{{"TILE_WIDTH", "8"}});
  measurement.status = ptxrt::MeasurementStatus::ok;
  measurement.median_ms = 1.5;
  return measurement;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE(
    "a tune's request is recorded unfinished, survives measurements, and is marked finished") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  const std::string first = database.begin_request(R"({"kernel": ["matmul"], "seed": ["7"]})");
  const std::string second = database.begin_request(R"({"kernel": ["sgemm"]})");
  CHECK(first != second);
  database.record(sample_key(), sample());
  database.finish_request(first);
  const std::vector<ptxrt::TuneRequest> requests = database.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].id == first);
  CHECK(json::parse(requests[0].request) ==
        json::parse(R"({"kernel": ["matmul"], "seed": ["7"]})"));
  CHECK(requests[0].finished);
  CHECK(requests[1].id == second);
  CHECK_FALSE(requests[1].finished);
  CHECK(database.records().size() == 1);
  database.merge_from({});
  CHECK(database.requests().size() == 2);
}

TEST_CASE("a request that is not a JSON object, or an unknown id, is refused") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  check_error([&] { database.begin_request("[1, 2]"); }, ErrorKind::invalid_argument,
              "tune request: expected a JSON object, got a list of 2");
  check_error([&] { database.begin_request("{"); }, ErrorKind::invalid_argument,
              "tune request: expected a JSON object, got column");
  database.begin_request("{}");
  check_error([&] { database.finish_request("nobody"); }, ErrorKind::not_found,
              "holds no tune request 'nobody'");
}

TEST_CASE("a database without requests reads as none; a malformed request is named by its field") {
  ScratchDirectory scratch;
  const std::filesystem::path path = scratch.path() / "tuning.json";
  write_file(path, R"({"format": "ptxrt-tuning-1", "tunes": []})");
  CHECK(TuningDatabase(path).requests().empty());
  const std::vector<std::pair<std::string, std::string>> rows{
      {R"([{"id": "a", "request": [], "finished": false}])",
       "requests[0].request: expected an object"},
      {R"([{"id": "a", "request": {}, "finished": 1}])",
       "requests[0].finished: expected true or false"},
      {R"([{"id": "", "request": {}, "finished": true}])", "requests[0].id: expected 1 to 64"},
      {R"([{"request": {}, "finished": true}])", "requests[0].id: missing"},
      {R"({"id": "a"})", "requests: expected a list"},
  };
  for (const auto& [requests, message] : rows) {
    CAPTURE(requests);
    write_file(path, R"({"format": "ptxrt-tuning-1", "tunes": [], "requests": )" + requests + "}");
    check_error([&] { TuningDatabase(path).requests(); }, ErrorKind::io, message);
  }
}

TEST_CASE("tune resume runs the recorded request: each of its fields reaches the resumed run") {
  ScratchDirectory scratch;
  const std::string path = (scratch.path() / "tuning.json").string();
  // A dry run needs no GPU: what it plans shows the kernel, size, strategy and target that the
  // request recorded; none of them is named by tune resume itself.
  const std::string id = TuningDatabase(path).begin_request(
      R"({"kernel": ["matmul"], "size": ["64"], "strategy": ["random"], "dry-run": true,
          "arch": ["sm_80"], "json": true})");
  const ptxrt::testing::ProcessResult resumed = cli(scratch, {"tune", "resume", "--db", path});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const json plans = json::parse(resumed.output.substr(resumed.output.find('[')));
  REQUIRE(plans.size() == 1);
  CHECK(plans[0]["key"]["kernel"] == "matmul");
  CHECK(plans[0]["key"]["size"] == json::array({64, 64, 64}));
  CHECK(plans[0]["key"]["compute_capability"] == "8.0");
  CHECK(plans[0]["strategy"] == "random");
  const ptxrt::testing::ProcessResult by_id =
      cli(scratch, {"tune", "resume", "--db", path, "--id", id});
  CHECK(by_id.exit_code == 0);
  CHECK(by_id.output == resumed.output);
}

TEST_CASE("tune resume says what is missing: the file, any request, an unfinished one, an option") {
  ScratchDirectory scratch;
  const std::filesystem::path path = scratch.path() / "tuning.json";
  const auto resume = [&](std::vector<std::string> extra = {}) {
    std::vector<std::string> arguments{"tune", "resume", "--db", path.string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return cli(scratch, arguments);
  };
  const auto fails_with = [](const ptxrt::testing::ProcessResult& result,
                             const std::string& message) {
    INFO(result.output);
    CHECK(result.exit_code == 1);
    CHECK(contains(result.output, message));
  };
  fails_with(resume(), "tuning.json' does not exist");
  const TuningDatabase database(path);
  database.record(sample_key(), sample());
  fails_with(resume(),
             "records no tune request (a ptxrt before 'tune resume' wrote it): run the "
             "tune's own command again with --resume");
  database.finish_request(database.begin_request(R"({"kernel": ["matmul"]})"));
  fails_with(resume(), "holds no interrupted tune: every one recorded finished");
  fails_with(resume({"--id", "other"}), "holds no tune request 'other'");
  const std::string later =
      database.begin_request(R"({"kernel": ["matmul"], "warp-drive": ["9"]})");
  fails_with(resume(), "tune request " + later + " in " + path.string() +
                           ": 'warp-drive' is no option a request records (recorded by a later "
                           "ptxrt?)");
  database.finish_request(later);
  const std::string bad = database.begin_request(R"({"kernel": ["matmul"], "budget": ["0"]})");
  fails_with(resume(), "tune request " + bad + " in " + path.string() + ": ");
  fails_with(resume(), "--budget: must be at least 1, got 0");
}
