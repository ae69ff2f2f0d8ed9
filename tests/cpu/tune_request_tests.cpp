// What a tune was asked, recorded in its database (TuningDatabase::begin_request) with whether
// it finished; `ptxrt tune resume`, which runs it again from there, is in tune_cli_tests.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuning_database.hpp"

using nlohmann::json;
using ptxrt::ErrorKind;
using ptxrt::TuningDatabase;
using ptxrt::testing::check_error;
using ptxrt::testing::ScratchDirectory;

namespace {

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
  for (const auto& [requests_text, message] : rows) {
    const auto& requests = requests_text;  // clang before 16 captures no binding
    CAPTURE(requests);
    write_file(path, R"({"format": "ptxrt-tuning-1", "tunes": [], "requests": )" + requests + "}");
    check_error([&] { TuningDatabase(path).requests(); }, ErrorKind::io, message);
  }
}
