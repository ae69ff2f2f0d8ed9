// `ptxrt tune show`, `tune merge` and `tune resume`, and the tune and run --tuned arguments that
// are checked before any GPU work, driven through the built binary.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

using nlohmann::json;

namespace {

ptxrt::testing::ProcessResult cli(const ptxrt::testing::ScratchDirectory& scratch,
                                  std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  return ptxrt::testing::run_process(
      arguments, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=warning"});
}

ptxrt::TuningKey sample_key() {
  return {"matmul", "hash", "TILE_WIDTH in {8,16}", "NVIDIA H100",
          "9.0",    13000,  {1024, 1024, 1024}};
}

ptxrt::Measurement sample(const std::string& tile_width, double median_ms, double rate) {
  ptxrt::Measurement measurement;
  measurement.config = ptxrt::TuningConfig(std::vector<ptxrt::Define>{{"TILE_WIDTH", tile_width}});
  measurement.status = ptxrt::MeasurementStatus::ok;
  measurement.median_ms = median_ms;
  measurement.rate = rate;
  measurement.rate_unit = "GFLOP/s";
  return measurement;
}

void record_sample(const ptxrt::TuningDatabase& database) {
  database.record(sample_key(), sample("8", 4.0, 537.0));
  database.record(sample_key(), sample("16", 2.0, 1074.0));
}

}  // namespace

TEST_CASE("tune show lists each tune with its winner, as a table or JSON") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::string path = (scratch.path() / "tuning.json").string();
  const ptxrt::testing::ProcessResult empty = cli(scratch, {"tune", "show", "--db", path});
  CHECK(empty.exit_code == 0);
  CHECK(empty.output == "no tunes recorded in " + path + "\n");

  record_sample(ptxrt::TuningDatabase(path));
  const ptxrt::testing::ProcessResult table = cli(scratch, {"tune", "show", "--db", path});
  REQUIRE(table.exit_code == 0);
  CHECK(table.output ==
        "kernel  size            device       cc   l2     objective  measured  winner         "
        "median ms  rate\n"
        "matmul  1024x1024x1024  NVIDIA H100  9.0  flush  time       2         TILE_WIDTH=16  "
        "2.0000     1074.0 GFLOP/s\n");

  const ptxrt::testing::ProcessResult listed =
      cli(scratch, {"tune", "show", "--db", path, "--json"});
  REQUIRE(listed.exit_code == 0);
  const json records = json::parse(listed.output);
  REQUIRE(records.size() == 1);
  CHECK(records[0]["key"]["size"] == json{1024, 1024, 1024});
  CHECK(records[0]["measured"] == 2);
  CHECK(records[0]["winner"]["config"] == json{{"TILE_WIDTH", "16"}});
}

TEST_CASE("tune and run --tuned reject bad arguments before touching the GPU") {
  ptxrt::testing::ScratchDirectory scratch;
  const auto failure = [&](std::vector<std::string> arguments) {
    const ptxrt::testing::ProcessResult result = cli(scratch, std::move(arguments));
    CHECK(result.exit_code == 1);
    return result.output;
  };
  const ptxrt::testing::ProcessResult strategy =
      cli(scratch, {"tune", "matmul", "--strategy", "fastest"});
  CHECK(strategy.exit_code == 2);
  CHECK(strategy.output ==
        "ptxrt: error: tune: --strategy: fastest not in {exhaustive,random,occupancy,model}\n");
  CHECK(failure({"tune", "closest-pair", "--size", "1x2"}) ==
        "ptxrt: error: closest-pair size '1x2': expected a number of points, at least 2\n");
  CHECK(failure({"run", "vecadd", "--tuned"}) ==
        "ptxrt: error: --tuned applies to matmul (tiled), sgemm and kernel files with a problem "
        "(closest-pair: `ptxrt closest-pair --tuned`)\n");
  CHECK(failure({"run", "matmul", "--tuned", "-D", "TILE_WIDTH=8"}) ==
        "ptxrt: error: --tuned picks the defines itself: drop -D\n");
  CHECK(failure({"run", "matmul", "--db", "x.json"}) ==
        "ptxrt: error: --db applies with --tuned\n");
  CHECK(failure({"tune", "matmul", "--devices", "0,x"}) ==
        "ptxrt: error: --devices '0,x': 'x' is not a device ordinal; expected 'all' or ordinals "
        "such as 0,1\n");
  CHECK(failure({"tune", "matmul", "--devices", "1,1"}) ==
        "ptxrt: error: --devices '1,1': device 1 is listed twice\n");
  CHECK(failure({"tune", "matmul", "--shard", "4/4"}) ==
        "ptxrt: error: --shard '4/4': expected I/N, share I of N counted from 0 (0/4, 1/4, 2/4 "
        "and 3/4 make a whole tune)\n");
  CHECK(failure({"tune", "matmul", "--shard", "1"}) ==
        "ptxrt: error: --shard '1': expected I/N, share I of N counted from 0 (0/4, 1/4, 2/4 "
        "and 3/4 make a whole tune)\n");
  CHECK(failure({"tune", "matmul", "--sm-count", "132"}) ==
        "ptxrt: error: --sm-count applies with --dry-run (a tune plans for the device it times "
        "on)\n");
  CHECK(cli(scratch, {"tune", "matmul", "--dry-run", "--sm-count", "0"}).exit_code == 2);
  CHECK(cli(scratch, {"tune"}).exit_code == 2);
  CHECK(cli(scratch, {"tune", "matmul", "--device", "0", "--devices", "all"}).exit_code == 2);
  CHECK(cli(scratch, {"tune", "matmul", "--mpi", "--shard", "0/2"}).exit_code == 2);
  const ptxrt::testing::ProcessResult silence_alone =
      cli(scratch, {"tune", "matmul", "--silence-limit", "60"});
  CHECK(silence_alone.exit_code == 2);
  CHECK(ptxrt::testing::contains(silence_alone.output, "--silence-limit requires --mpi"));
  CHECK(cli(scratch, {"tune", "matmul", "--mpi", "--silence-limit", "0"}).exit_code == 2);
}

TEST_CASE("tune --dry-run --sm-count plans sgemm's tiles and splits as a tune on such a GPU") {
  // The shape constraint of sgemm weighs tiles and splits against the SMs they fill.
  ptxrt::testing::ScratchDirectory scratch;
  ptxrt::DeviceProperties model = ptxrt::device_model(9, 0);
  model.sm_count = 132;
  const std::vector<ptxrt::PrunedConfig> pruned_configs =
      ptxrt::sgemm_tuning_space(model, 1299, 1603, 825).enumerate().pruned;
  const std::size_t pruned = pruned_configs.size();
  // Hundreds of thousands of configs break a few constraints: the plan counts them by reason.
  std::map<std::string, std::size_t> by_reason;
  for (const ptxrt::PrunedConfig& config : pruned_configs) ++by_reason[config.reason];
  const auto commonest =
      std::max_element(by_reason.begin(), by_reason.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  REQUIRE(commonest != by_reason.end());
  const auto plan = [&](std::vector<std::string> more) {
    std::vector<std::string> arguments{"tune",          "sgemm",     "--size",
                                       "1299x1603x825", "--dry-run", "--arch",
                                       "sm_90",         "--time",    "0.1"};
    arguments.insert(arguments.end(), more.begin(), more.end());
    const ptxrt::testing::ProcessResult result = cli(scratch, arguments);
    CHECK(result.exit_code == 0);
    return result.output;
  };
  const std::string counted = " " + std::to_string(pruned) + " pruned by constraints";
  const std::string planned = plan({"--sm-count", "132"});
  CHECK(ptxrt::testing::contains(planned, "on sm_90 model with 132 SMs (9.0)"));
  CHECK(ptxrt::testing::contains(planned, counted));
  CHECK(ptxrt::testing::contains(planned, "\n  " + std::to_string(commonest->second) + " × " +
                                              commonest->first + "  (first "));
  CHECK(std::count(planned.begin(), planned.end(), '\n') < 100);
  // Without it the constraint sees 1 SM: few splits and no small tiles pass.
  CHECK_FALSE(ptxrt::testing::contains(plan({}), counted));
}

TEST_CASE(
    "a numeric option out of range names its bound as its type would, not as 2^64 or DBL_MAX") {
  ptxrt::testing::ScratchDirectory scratch;
  struct Row {
    std::vector<std::string> arguments;
    std::string message;
  };
  const std::vector<Row> rows{
      {{"tune", "matmul", "--device", "-1"}, "--device: must be 0 or more, got -1"},
      {{"run", "vecadd", "--device", "-1"}, "--device: must be 0 or more, got -1"},
      {{"bench", "--device", "-2"}, "--device: must be 0 or more, got -2"},
      {{"tune", "matmul", "--budget", "0"}, "--budget: must be at least 1, got 0"},
      {{"tune", "matmul", "--budget", "-1"}, "--budget: must be at least 1, got -1"},
      {{"tune", "matmul", "--budget", "many"}, "--budget: must be a whole number, at least 1"},
      {{"tune", "matmul", "--time", "-1"}, "--time: must be more than 0 seconds, got -1"},
      {{"tune", "matmul", "--time", "nan"}, "--time: must be a number of seconds, more than 0"},
      {{"tune", "matmul", "--compile-timeout", "1e300"},
       "--compile-timeout: must be at most 1e+09 seconds, got 1e+300"},
      {{"tune", "matmul", "--mpi", "--silence-limit", "0"},
       "--silence-limit: must be at least 1, got 0"},
      {{"closest-pair", "--block", "0"}, "--block: must be at least 1, got 0"},
      {{"compile", "vector_add", "--timeout", "0"},
       "--timeout: must be more than 0 seconds, got 0"},
  };
  for (const Row& row : rows) {
    const ptxrt::testing::ProcessResult result = cli(scratch, row.arguments);
    CAPTURE(row.arguments);
    INFO(result.output);
    CHECK(result.exit_code == 2);
    CHECK(result.output.starts_with("ptxrt: error: " + row.arguments.front() + ": " + row.message +
                                    "\n"));
    CHECK(result.output.size() < 200);
  }
}

TEST_CASE(
    "an argument echoed in an error is cut and escaped: a 100,000-byte share, kernel, command") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::string huge = std::string(100000, 'x') + "\n";
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"tune", "matmul", "--shard", huge},
        std::vector<std::string>{"compile", huge, "--arch", "sm_90"},
        std::vector<std::string>{"resources", "matmul_tiled", "--arch", huge},
        std::vector<std::string>{huge}}) {
    const ptxrt::testing::ProcessResult result = cli(scratch, arguments);
    INFO(result.output.substr(0, 300));
    CHECK(result.exit_code != 0);
    CHECK(ptxrt::testing::contains(result.output,
                                   "'" + std::string(100, 'x') + "... (100001 bytes)'"));
    CHECK(result.output.size() < 600);
  }
}

TEST_CASE("--json prints file names and defines that are not UTF-8, as U+FFFD") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::string file = (scratch.path() / "caf\xe9.cu").string();
  std::ofstream(file) << "extern \"C\" __global__ void k(float* x) { x[0] = V; }\n";
  const ptxrt::testing::ProcessResult listed =
      cli(scratch, {"resources", file, "--arch", "sm_90", "-D", "V=1.0f/*\xff*/", "--json"});
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.output);
  const json rows = json::parse(listed.output);
  CHECK(ptxrt::testing::contains(rows.dump(), "\xef\xbf\xbd"));  // U+FFFD, in UTF-8
}

TEST_CASE("tune merge of two databases of 50,000 measurements each takes seconds, not minutes") {
  ptxrt::testing::ScratchDirectory scratch;
  const auto database = [&](const std::string& name, int first, double median_ms) {
    ptxrt::TuningRecord record{sample_key(), {}, std::nullopt};
    for (int i = first; i < first + 50000; ++i)
      record.measurements.push_back(sample(std::to_string(i), median_ms, 1.0));
    const std::string path = (scratch.path() / name).string();
    std::ofstream(path) << ptxrt::TuningDatabase::serialize({record});
    return path;
  };
  const std::string first = database("first.json", 0, 2.0);
  const std::string second = database("second.json", 25000, 1.0);
  const std::string merged = (scratch.path() / "merged.json").string();
  // The merge's CPU time, which other processes on a busy machine do not stretch; the wall clock
  // only bounds a hang.
  const double before = ptxrt::testing::children_cpu_seconds();
  const std::optional<ptxrt::testing::ProcessResult> joined = ptxrt::testing::run_process_within(
      {PTXRT_CLI_PATH, "tune", "merge", first, second, "-o", merged}, 300);
  REQUIRE_MESSAGE(joined, "still merging after 5 minutes");
  const double took = ptxrt::testing::children_cpu_seconds() - before;
  INFO(joined->output);
  CHECK(joined->exit_code == 0);
  CHECK(joined->output.starts_with("merged 2 database(s) into " + merged +
                                   ": 1 tune(s), 75000 measurement(s)\n"));
  CHECK_MESSAGE(took < 30.0, took << " CPU s");
}

TEST_CASE("tune merge joins databases, keeping the better measurement of a config in several") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::string first = (scratch.path() / "first.json").string();
  const std::string second = (scratch.path() / "second.json").string();
  const std::string merged = (scratch.path() / "merged.json").string();
  record_sample(ptxrt::TuningDatabase(first));
  ptxrt::TuningDatabase(second).record(sample_key(), sample("8", 1.0, 2148.0));

  const ptxrt::testing::ProcessResult joined =
      cli(scratch, {"tune", "merge", first, second, "-o", merged});
  REQUIRE(joined.exit_code == 0);
  CHECK(joined.output ==
        "merged 2 database(s) into " + merged +
            ": 1 tune(s), 2 measurement(s)\n"
            "kernel  size            device       cc   l2     objective  measured  winner        "
            "median ms  rate\n"
            "matmul  1024x1024x1024  NVIDIA H100  9.0  flush  time       2         TILE_WIDTH=8  "
            "1.0000     2148.0 GFLOP/s\n");
  const ptxrt::testing::ProcessResult missing =
      cli(scratch, {"tune", "merge", first, (scratch.path() / "none.json").string(), "-o", merged});
  CHECK(missing.exit_code == 1);
  CHECK(missing.output == "ptxrt: error: tune merge: '" + (scratch.path() / "none.json").string() +
                              "' does not exist\n");
  CHECK(cli(scratch, {"tune", "merge", first}).exit_code == 2);
}

TEST_CASE("tune resume runs the recorded request: each of its fields reaches the resumed run") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::string path = (scratch.path() / "tuning.json").string();
  // A dry run needs no GPU: what it plans shows the kernel, size, strategy and target that the
  // request recorded; none of them is named by tune resume itself.
  const std::string id = ptxrt::TuningDatabase(path).begin_request(
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
  ptxrt::testing::ScratchDirectory scratch;
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
    CHECK(ptxrt::testing::contains(result.output, message));
  };
  fails_with(resume(), "tuning.json' does not exist");
  const ptxrt::TuningDatabase database(path);
  record_sample(database);
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
  const std::string worker = database.begin_request(R"({"kernel": ["matmul"], "worker": true})");
  fails_with(resume(), "'worker' is no option a request records");
  database.finish_request(worker);
  const std::string bad = database.begin_request(R"({"kernel": ["matmul"], "budget": ["0"]})");
  fails_with(resume(), "tune request " + bad + " in " + path.string() + ": ");
  fails_with(resume(), "--budget: must be at least 1, got 0");
}
