#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "process.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace fs = std::filesystem;
using ptxrt::ChoiceLevel;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;
using ptxrt::TuningDatabase;
using ptxrt::TuningKey;
using ptxrt::testing::ScratchDirectory;

namespace {

TuningKey key_for(std::vector<std::int64_t> size, std::string device = "NVIDIA H100",
                  std::string cc = "9.0") {
  return {"matmul", "hash-1",       "TILE_WIDTH in {8,16,32}", std::move(device), std::move(cc),
          13000,    std::move(size)};
}

TuningConfig tile(int width) { return TuningConfig({{"TILE_WIDTH", std::to_string(width)}}); }

Measurement measured(int width, double ms, MeasurementStatus status = MeasurementStatus::ok) {
  Measurement measurement;
  measurement.config = tile(width);
  measurement.status = status;
  measurement.median_ms = ms;
  measurement.runs = 5;
  measurement.rate = 100.0 / ms;
  measurement.rate_unit = "GFLOP/s";
  return measurement;
}

}  // namespace

TEST_CASE("a measurement survives the JSON round trip, an infinite error included") {
  Measurement measurement = measured(16, 1.25, MeasurementStatus::wrong);
  measurement.spread = 0.01;
  measurement.max_error = std::numeric_limits<double>::infinity();
  measurement.detail = "NaN in the output";
  const Measurement back = ptxrt::measurement_from_json(ptxrt::measurement_to_json(measurement));
  CHECK(back.config == measurement.config);
  CHECK(back.status == MeasurementStatus::wrong);
  CHECK(back.median_ms == 1.25);
  CHECK(back.spread == 0.01);
  CHECK(back.runs == 5);
  CHECK(back.rate_unit == "GFLOP/s");
  CHECK(std::isinf(back.max_error));
  CHECK(back.detail == "NaN in the output");
  CHECK_THROWS_AS(ptxrt::measurement_from_json("{\"status\": \"ok\"}"), ptxrt::Error);
}

TEST_CASE("a measurement's device ordinal is written when known and read back") {
  Measurement on_device = measured(16, 1.25);
  on_device.device = 1;
  const std::string text = ptxrt::measurement_to_json(on_device);
  CHECK(text.find("\"device\":1") != std::string::npos);
  CHECK(ptxrt::measurement_from_json(text).device == 1);
  const std::string unknown = ptxrt::measurement_to_json(measured(16, 1.25));
  CHECK(unknown.find("device") == std::string::npos);
  CHECK_FALSE(ptxrt::measurement_from_json(unknown).device);
}

TEST_CASE("records are kept per key, one per config, with the fastest ok one as the winner") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "sub" / "tuning.json");
  database.record(key_for({1024, 1024, 1024}), measured(8, 3.0));
  database.record(key_for({1024, 1024, 1024}), measured(16, 2.0));
  database.record(key_for({1024, 1024, 1024}), measured(32, 1.0, MeasurementStatus::wrong));
  database.record(key_for({1024, 1024, 1024}), measured(8, 4.0));  // replaces the first
  database.record(key_for({2048, 2048, 2048}), measured(32, 5.0));
  const std::vector<ptxrt::TuningRecord> records = database.records();
  REQUIRE(records.size() == 2);
  CHECK(records[0].key == key_for({1024, 1024, 1024}));
  REQUIRE(records[0].measurements.size() == 3);
  CHECK(records[0].measurements[0].median_ms == 4.0);
  REQUIRE(records[0].winner);
  CHECK(records[0].winner->config == tile(16));
  CHECK(records[1].winner->config == tile(32));
  CHECK(database.measurements(key_for({4096, 4096, 4096})).empty());
  CHECK(database.measurements(key_for({2048, 2048, 2048})).size() == 1);
}

TEST_CASE("every part of the key keeps tunes apart") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  TuningKey base = key_for({64, 64, 64});
  std::vector<TuningKey> keys(7, base);
  keys[1].kernel = "sgemm";
  keys[2].source_hash = "hash-2";
  keys[3].space = "TILE_WIDTH in {8}";
  keys[4].device = "NVIDIA H200";
  keys[5].compute_capability = "8.0";
  keys[6].nvrtc_version = 12080;
  for (const TuningKey& key : keys) database.record(key, measured(8, 1.0));
  CHECK(database.records().size() == keys.size());
  for (const TuningKey& key : keys) CHECK(database.measurements(key).size() == 1);
}

TEST_CASE("merge keeps every tune, and of a config measured twice the finished, ok, faster one") {
  const TuningKey key = key_for({1024});
  const TuningKey other = key_for({2048});
  Measurement started = measured(8, 0.0, MeasurementStatus::started);
  const std::vector<ptxrt::TuningRecord> first{
      {key,
       {started, measured(16, 2.0), measured(32, 1.0, MeasurementStatus::crashed)},
       std::nullopt}};
  const std::vector<ptxrt::TuningRecord> second{
      {key,
       {measured(8, 3.0, MeasurementStatus::cut), measured(16, 1.5), measured(32, 4.0)},
       std::nullopt},
      {other, {measured(8, 9.0)}, std::nullopt}};
  for (const auto& sources : {std::vector{first, second}, std::vector{second, first}}) {
    const std::vector<ptxrt::TuningRecord> merged = TuningDatabase::merge(sources);
    REQUIRE(merged.size() == 2);
    const ptxrt::TuningRecord& tune = merged[merged[0].key == key ? 0 : 1];
    REQUIRE(tune.measurements.size() == 3);
    const auto kept = [&](int width) {
      return *std::find_if(tune.measurements.begin(), tune.measurements.end(),
                           [&](const Measurement& m) { return m.config == tile(width); });
    };
    CHECK(kept(8).status == MeasurementStatus::cut);  // finished over started
    CHECK(kept(16).median_ms == 1.5);                 // the lower of two ok medians
    CHECK(kept(32).status == MeasurementStatus::ok);  // ok over crashed
    REQUIRE(tune.winner);
    CHECK(tune.winner->config == tile(16));
  }
  // Two failures of one config: the earlier source's.
  const std::vector<ptxrt::TuningRecord> wrong{
      {key, {measured(8, 1.0, MeasurementStatus::wrong)}, std::nullopt}};
  const std::vector<ptxrt::TuningRecord> crashed{
      {key, {measured(8, 1.0, MeasurementStatus::crashed)}, std::nullopt}};
  CHECK(TuningDatabase::merge({wrong, crashed})[0].measurements[0].status ==
        MeasurementStatus::wrong);
  CHECK(TuningDatabase::merge({crashed, wrong})[0].measurements[0].status ==
        MeasurementStatus::crashed);
}

TEST_CASE("merge_from joins records with what the file holds, creating it when missing") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "sub" / "merged.json");
  database.merge_from({{key_for({64}), {measured(8, 2.0)}, std::nullopt}});
  database.merge_from({{key_for({64}), {measured(8, 1.0), measured(16, 3.0)}, std::nullopt}});
  const std::vector<ptxrt::TuningRecord> records = database.records();
  REQUIRE(records.size() == 1);
  REQUIRE(records[0].measurements.size() == 2);
  CHECK(records[0].measurements[0].median_ms == 1.0);
  CHECK(records[0].winner->config == tile(8));
}

TEST_CASE("choose falls back from the exact size to the nearest, to the same CC, to the default") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  database.record(key_for({1024, 1024, 1024}), measured(16, 1.0));
  database.record(key_for({4096, 4096, 4096}), measured(32, 9.0));
  database.record(key_for({512, 512, 512}, "NVIDIA H200"), measured(8, 1.0));
  const std::vector<ptxrt::TuningRecord> records = database.records();
  const TuningConfig fallback = tile(4);

  const ptxrt::TunedChoice exact = ptxrt::choose(records, key_for({4096, 4096, 4096}), fallback);
  CHECK(exact.level == ChoiceLevel::exact_size);
  CHECK(exact.config == tile(32));

  // log2 distances from 3000³: to 4096³ 3·0.45², to 1024³ 3·1.55²: 4096³ is nearer.
  const ptxrt::TunedChoice near = ptxrt::choose(records, key_for({3000, 3000, 3000}), fallback);
  CHECK(near.level == ChoiceLevel::nearest_size);
  CHECK(near.config == tile(32));
  REQUIRE(near.from);
  CHECK(near.from->size == std::vector<std::int64_t>{4096, 4096, 4096});
  // One dimension 4× off is nearer than two.
  CHECK(ptxrt::choose(records, key_for({1024, 1024, 4096}), fallback).config == tile(16));

  const ptxrt::TunedChoice other_device =
      ptxrt::choose(records, key_for({512, 512, 512}, "NVIDIA GH200"), fallback);
  CHECK(other_device.level == ChoiceLevel::same_compute_capability);
  CHECK(other_device.config == tile(8));  // the H200's 512³ is the nearest size at CC 9.0
  REQUIRE(other_device.from);
  CHECK(other_device.from->device == "NVIDIA H200");

  const ptxrt::TunedChoice none =
      ptxrt::choose(records, key_for({1024, 1024, 1024}, "NVIDIA A100", "8.0"), fallback);
  CHECK(none.level == ChoiceLevel::declared_default);
  CHECK(none.config == fallback);
  CHECK_FALSE(none.from);

  TuningKey edited = key_for({1024, 1024, 1024});
  edited.source_hash = "hash-2";
  CHECK(ptxrt::choose(records, edited, fallback).level == ChoiceLevel::declared_default);
  CHECK(exact.describe() ==
        "TILE_WIDTH=32 (exact: tuned for matmul 4096x4096x4096 on NVIDIA H100 (9.0), L2 flush, "
        "objective time)");
}

TEST_CASE("a tune whose configs all failed has no winner and is not chosen") {
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  database.record(key_for({256, 256, 256}), measured(8, 1.0, MeasurementStatus::crashed));
  const std::vector<ptxrt::TuningRecord> records = database.records();
  CHECK_FALSE(records.at(0).winner);
  CHECK(ptxrt::choose(records, key_for({256, 256, 256}), tile(4)).level ==
        ChoiceLevel::declared_default);
}

TEST_CASE("record renames a new file over the old one and leaves no temporary file behind") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  const TuningDatabase database(path);
  database.record(key_for({64, 64, 64}), measured(8, 1.0));
  struct stat before {};
  REQUIRE(::stat(path.c_str(), &before) == 0);
  database.record(key_for({64, 64, 64}), measured(16, 0.5));
  struct stat after {};
  REQUIRE(::stat(path.c_str(), &after) == 0);
  // A reader holding the old file keeps a whole old file: the name now points at a new inode.
  CHECK(after.st_ino != before.st_ino);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(scratch.path()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"tuning.json", "tuning.json.lock"});
}

TEST_CASE("the temporary file of a writer killed half-way is replaced by the next record") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  const TuningDatabase database(path);
  database.record(key_for({64, 64, 64}), measured(8, 1.0));
  std::ofstream(scratch.path() / "tuning.json.tmp") << "{\"format\": \"ptxrt-tun";
  CHECK(database.measurements(key_for({64, 64, 64})).size() == 1);
  database.record(key_for({64, 64, 64}), measured(16, 0.5));
  CHECK(database.measurements(key_for({64, 64, 64})).size() == 2);
  CHECK_FALSE(fs::exists(scratch.path() / "tuning.json.tmp"));
}

TEST_CASE("a corrupt or foreign database file is an io error naming it") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  const TuningDatabase database(path);
  const auto error_of = [&](const std::function<void()>& action) -> std::string {
    try {
      action();
    } catch (const ptxrt::Error& error) {
      CHECK(error.kind() == ptxrt::ErrorKind::io);
      return error.what();
    }
    return "no error";
  };
  std::ofstream(path) << "{\"tunes\": [";
  CHECK(error_of([&] {
          database.records();
        }).starts_with("tuning database '" + path.string() + "' is corrupt: "));
  std::ofstream(path) << "{\"format\": \"other\"}";
  CHECK(error_of([&] { database.record(key_for({1}), measured(8, 1.0)); }) ==
        "'" + path.string() +
            "' is not a tuning database (format 'other', expected "
            "'ptxrt-tuning-1')");
}

TEST_CASE("a field of the wrong shape or out of range is an io error naming the file and field") {
  // Found by fuzz_tuning_database: "runs": 1e300 and a size of 1e300 were undefined behaviour
  // (a double converted to int); 2.5 runs read as 2, an NVRTC version of 3000000000 wrapped, and
  // an unknown status was an invalid_argument that did not name the file.
  using nlohmann::json;
  const json valid = json::parse(
      TuningDatabase::serialize({{key_for({64, 64, 64}), {measured(8, 1.0)}, std::nullopt}}));
  REQUIRE(TuningDatabase::parse(valid.dump(), "db.json").at(0).measurements.at(0).runs == 5);
  const auto key = [](json& file) -> json& { return file["tunes"][0]["key"]; };
  const auto measurement = [](json& file) -> json& { return file["tunes"][0]["measurements"][0]; };
  struct Row {
    std::function<void(json&)> damage;
    std::string message;
  };
  const std::vector<Row> rows{
      {[&](json& file) { measurement(file)["runs"] = 1e300; },
       "tunes[0].measurements[0].runs: 1e+300 is not an integer from -2147483648 to 2147483647"},
      {[&](json& file) { measurement(file)["runs"] = 2.5; },
       "tunes[0].measurements[0].runs: 2.5 is not an integer from"},
      {[&](json& file) { key(file)["nvrtc_version"] = 3000000000u; },
       "tunes[0].key.nvrtc_version: 3000000000 is not an integer from -2147483648 to 2147483647"},
      {[&](json& file) {
         key(file)["size"] = {64, 1e300, 64};
       },
       "tunes[0].key.size[1]: 1e+300 is not an integer from -9223372036854775808 to "
       "9223372036854775807"},
      {[&](json& file) { key(file)["size"] = "64x64x64"; },
       "tunes[0].key.size: expected a list, got '64x64x64'"},
      {[](json& file) { file["tunes"] = 5; }, "tunes: expected a list, got 5"},
      {[](json& file) {
         file["tunes"][0]["measurements"] = {{"config", 1}};
       },
       "tunes[0].measurements: expected a list, got an object of 1 field(s)"},
      {[&](json& file) { measurement(file)["config"] = {"TILE_WIDTH"}; },
       "tunes[0].measurements[0].config: expected an object, got a list of 1 item(s)"},
      {[&](json& file) { measurement(file)["config"]["TILE_WIDTH"] = 8; },
       "tunes[0].measurements[0].config.TILE_WIDTH: expected a string, got 8"},
      {[&](json& file) { measurement(file)["status"] = "done"; },
       "tunes[0].measurements[0].status: unknown measurement status 'done'"},
      {[&](json& file) { measurement(file)["median_ms"] = "fast"; },
       "tunes[0].measurements[0].median_ms: expected a number, got 'fast'"},
      {[&](json& file) { measurement(file)["rate_unit"] = 5; },
       "tunes[0].measurements[0].rate_unit: expected a string, got 5"},
      // An ok measurement without a time would read as 0 ms and win every choice.
      {[&](json& file) { measurement(file).erase("median_ms"); },
       "tunes[0].measurements[0].median_ms: an ok measurement needs a positive median_ms"},
      {[&](json& file) { measurement(file)["median_ms"] = nullptr; },
       "an ok measurement needs a positive median_ms"},
      {[&](json& file) { measurement(file)["device"] = 1e300; },
       "tunes[0].measurements[0].device: 1e+300 is not an integer from"},
      // What nlohmann's own errors said without naming the field ("cannot use at() with array",
      // "type must be string").
      {[](json& file) { file["tunes"][0] = json::array(); },
       "tunes[0]: expected an object, got a list of 0 item(s)"},
      {[&](json& file) { key(file)["kernel"] = 5; },
       "tunes[0].key.kernel: expected a string, got 5"},
      {[&](json& file) { key(file).erase("device"); }, "tunes[0].key.device: missing"},
  };
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  for (const Row& row : rows) {
    CAPTURE(row.message);
    json damaged = valid;
    row.damage(damaged);
    const std::string text = damaged.dump();
    try {
      TuningDatabase::parse(text, "db.json");
      FAIL("accepted: " << text);
    } catch (const ptxrt::Error& error) {
      CHECK(error.kind() == ptxrt::ErrorKind::io);
      CHECK_MESSAGE(std::string(error.what()).starts_with("tuning database 'db.json' is corrupt: "),
                    error.what());
      CHECK_MESSAGE(std::string(error.what()).find(row.message) != std::string::npos, error.what());
    }
    // record() reads through the same parse, and leaves a file it cannot read as it was.
    std::ofstream(path, std::ios::trunc) << text;
    CHECK_THROWS_AS(TuningDatabase(path).record(key_for({64, 64, 64}), measured(16, 1.0)),
                    ptxrt::Error);
    std::ifstream in(path);
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == text);
  }
}

TEST_CASE("a file that is not an object with the format is not a tuning database, whatever it is") {
  for (const auto& [database_text, format] :
       {std::pair{"[1, 2]", "missing"}, std::pair{"{\"format\": 5}", "5"},
        std::pair{"{\"format\": [[1]]}", "a list of 1 item(s)"}, std::pair{"7", "missing"}}) {
    const auto& text = database_text;  // clang before 16 captures no binding
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(TuningDatabase::parse(text, "db.json"),
                         ("'db.json' is not a tuning database (format " + std::string(format) +
                          ", expected 'ptxrt-tuning-1')")
                             .c_str(),
                         ptxrt::Error);
  }
}

TEST_CASE("merge is linear: 150,000 measurements of one tune merge in seconds, not minutes") {
  // Each config is looked up once: a search of the kept list per measurement, as merge once did,
  // took over a minute at this size.
  const auto tune_of = [](int first, int count, double ms) {
    ptxrt::TuningRecord record{key_for({4096}), {}, std::nullopt};
    record.measurements.reserve(static_cast<std::size_t>(count));
    for (int i = first; i < first + count; ++i) {
      Measurement measurement = measured(8, ms);
      measurement.config = TuningConfig({{"BLOCK", std::to_string(i)}, {"ITEMS", "4"}});
      record.measurements.push_back(std::move(measurement));
    }
    return std::vector<ptxrt::TuningRecord>{std::move(record)};
  };
  const std::vector<ptxrt::TuningRecord> slower = tune_of(0, 100000, 2.0);
  const std::vector<ptxrt::TuningRecord> faster = tune_of(50000, 100000, 1.0);
  // CPU time, which other processes on a busy machine do not stretch.
  const double start = ptxrt::testing::cpu_seconds();
  const std::vector<ptxrt::TuningRecord> merged = TuningDatabase::merge({slower, faster});
  const double took = ptxrt::testing::cpu_seconds() - start;
  CHECK_MESSAGE(took < 10.0, took << " CPU s");
  REQUIRE(merged.size() == 1);
  const std::vector<Measurement>& kept = merged[0].measurements;
  REQUIRE(kept.size() == 150000);
  CHECK(kept[0].median_ms == 2.0);
  CHECK(kept[50000].median_ms == 1.0);  // measured in both: the lower median
  CHECK(kept[149999].config.at("BLOCK") == 149999);
  CHECK(merged[0].winner->median_ms == 1.0);
}

TEST_CASE("a detail that is not UTF-8 is recorded with replacement characters") {
  // A compile log or an exception message may hold any bytes; nlohmann's dump threw its own
  // type_error on them, out of record() and out of the worker's answer.
  ScratchDirectory scratch;
  const TuningDatabase database(scratch.path() / "tuning.json");
  Measurement failed = measured(8, 0.0, MeasurementStatus::failed);
  failed.detail = "compile: caf\xe9.cu(3): error";
  database.record(key_for({64}), failed);
  CHECK(database.measurements(key_for({64})).at(0).detail == "compile: caf\uFFFD.cu(3): error");
  CHECK(ptxrt::measurement_from_json(ptxrt::measurement_to_json(failed)).detail ==
        "compile: caf\uFFFD.cu(3): error");
}

TEST_CASE("a number too large for a double is corrupt, not infinity") {
  const std::string text =
      TuningDatabase::serialize({{key_for({64, 64, 64}), {measured(8, 1.0)}, std::nullopt}});
  const std::size_t at = text.find("\"median_ms\": 1.0");
  REQUIRE(at != std::string::npos);
  const std::string overflowing = std::string(text).replace(at, 17, "\"median_ms\": 1e999");
  CHECK_THROWS_WITH_AS(TuningDatabase::parse(overflowing, "db.json"),
                       doctest::Contains("number overflow parsing '1e999'"), ptxrt::Error);
}

TEST_CASE("two processes recording into one database at once both land every record") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  constexpr int records_per_process = 40;
  std::vector<pid_t> children;
  for (int process = 0; process < 2; ++process) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        const TuningDatabase database(path);
        for (int i = 0; i < records_per_process; ++i) {
          // One key shared by both, one key each: both kinds of merge must hold.
          database.record(key_for({64, 64, 64}), measured(process * 1000 + i, 1.0 + i));
          database.record(key_for({128 + process}), measured(i, 1.0));
        }
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const TuningDatabase database(path);
  CHECK(database.measurements(key_for({64, 64, 64})).size() == 2 * records_per_process);
  CHECK(database.measurements(key_for({128})).size() == records_per_process);
  CHECK(database.measurements(key_for({129})).size() == records_per_process);
}

namespace {

// Sets an environment variable for a scope and restores what was there.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedVariable() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("the default database lives in the cache directory unless PTXRT_TUNING_DB names one") {
  {
    ScopedVariable database("PTXRT_TUNING_DB", "/tmp/elsewhere/tuning.json");
    CHECK(TuningDatabase::default_path() == "/tmp/elsewhere/tuning.json");
  }
  ScopedVariable database("PTXRT_TUNING_DB", nullptr);
  ScopedVariable cache("PTXRT_CACHE_DIR", "/tmp/ptxrt-cache-for-test");
  CHECK(TuningDatabase::default_path() == "/tmp/ptxrt-cache-for-test/tuning.json");
}
