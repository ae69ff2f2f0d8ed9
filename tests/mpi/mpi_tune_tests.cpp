// ptxrt::mpi::tune with a stand-in measurer (tests/mpi/tune_probe.cpp) under mpirun: 1, 2 and 4
// ranks time what one process times and find its winner; a time found on one rank cuts a slower
// config on another; a rank that dies loses only its config in progress while the others finish,
// and --resume finishes the tune; --shard runs one share each and `ptxrt tune merge` joins them.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "mpirun.hpp"
#include "ptxrt/tune/tuning_database.hpp"

using nlohmann::json;
using ptxrt::testing::contains;
using ptxrt::testing::mpirun;
using ptxrt::testing::printed_json;
using ptxrt::testing::ProcessResult;
using ptxrt::testing::ScratchDirectory;

namespace {

const std::set<std::string> all_allowed{"V=1", "V=2", "V=3", "V=4",  "V=5",  "V=6",
                                        "V=7", "V=8", "V=9", "V=10", "V=11", "V=12"};

json local_tune(const std::filesystem::path& database, std::vector<std::string> extra = {}) {
  std::vector<std::string> arguments{PTXRT_TUNE_PROBE_PATH, "--db", database.string()};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  const ProcessResult result = ptxrt::testing::run_process(arguments);
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  return printed_json(result);
}

ProcessResult distributed_tune(int ranks, const std::filesystem::path& database,
                               std::vector<std::string> extra = {},
                               std::vector<std::string> environment = {}) {
  std::vector<std::string> arguments{PTXRT_TUNE_PROBE_PATH, "--db", database.string()};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  return mpirun(ranks, arguments, std::move(environment));
}

// {config: status} of a report's results.
std::map<std::string, std::string> statuses(const json& report) {
  std::map<std::string, std::string> found;
  for (const json& result : report["results"])
    found[result["config"].get<std::string>()] = result["status"].get<std::string>();
  return found;
}

// {config: status} of what the database holds.
std::map<std::string, std::string> recorded(const std::filesystem::path& path) {
  std::map<std::string, std::string> found;
  for (const ptxrt::TuningRecord& record : ptxrt::TuningDatabase(path).records())
    for (const ptxrt::Measurement& measurement : record.measurements)
      found[measurement.config.describe()] = std::string(ptxrt::to_string(measurement.status));
  return found;
}

std::set<std::string> configs_of(const std::map<std::string, std::string>& statuses,
                                 bool finished) {
  std::set<std::string> configs;
  for (const auto& [config, status] : statuses)
    if ((status != "started") == finished) configs.insert(config);
  return configs;
}

std::set<std::string> strings_of(const json& list) {
  std::set<std::string> values;
  for (const json& value : list) values.insert(value.get<std::string>());
  return values;
}

// What does not depend on the order the configs were timed in (which decides what is cut).
void check_same_tune(const json& expected, const json& found) {
  INFO("expected: " << expected.dump() << "\nfound: " << found.dump());
  CHECK(found["winner"] == expected["winner"]);
  CHECK(found["space"] == expected["space"]);
  CHECK(found["compile_failures"] == expected["compile_failures"]);
  CHECK(found["pruned_by_resources"] == expected["pruned_by_resources"]);
  std::set<std::string> timed;
  for (const auto& [config, status] : statuses(found)) timed.insert(config);
  std::set<std::string> timed_alone;
  for (const auto& [config, status] : statuses(expected)) timed_alone.insert(config);
  CHECK(timed == timed_alone);
  CHECK(statuses(found).at("V=7") == "wrong");
  CHECK(statuses(found).at("V=9") == "ok");
}

}  // namespace

TEST_CASE("distributed tune: 1, 2 and 4 ranks time what one process times and find its winner") {
  ScratchDirectory scratch;
  const json alone = local_tune(scratch.path() / "alone.json", {"--local"});
  REQUIRE(alone["winner"] == "V=9");
  CHECK(alone["compile_failures"] == json{"V=2"});
  CHECK(alone["pruned_by_resources"] == json{"V=3"});
  for (int ranks : {1, 2, 4}) {
    const std::filesystem::path database =
        scratch.path() / ("ranks" + std::to_string(ranks) + ".json");
    const ProcessResult run = distributed_tune(ranks, database);
    REQUIRE_MESSAGE(run.exit_code == 0, run.output);
    const json report = printed_json(run);
    check_same_tune(alone, report);
    // Each result carries its candidate's resources across the gather.
    for (const json& result : report["results"]) {
      const std::string value = result["config"].get<std::string>().substr(2);
      CHECK(result["registers"] == 8 * std::stoi(value));
      CHECK(result["occupancy_reason"] == result["config"]);
      CHECK(contains(result["detail"].get<std::string>(), "spills " + value + " bytes stored, 0"));
    }
    // Every rank recorded into the one database: it holds the whole tune.
    const std::map<std::string, std::string> in_database = recorded(database);
    CHECK(configs_of(in_database, true).size() == 11);  // all but V=3, pruned before any record
    CHECK(configs_of(in_database, false).empty());
    CHECK(ptxrt::TuningDatabase(database).records().front().winner->config.describe() == "V=9");
  }
}

TEST_CASE("distributed tune: a best time found on one rank cuts a slower config on another") {
  ScratchDirectory scratch;
  // Rank 1 holds its first config (V=4) until rank 0 starts its last (V=11), by which time rank 0
  // has timed V=9 (0.75 ms) and sent it; rank 1's next config, V=6 (1.5 ms), is then handed that
  // best and cut, though rank 1 itself times nothing below 2.5 ms before it.
  const ProcessResult run = distributed_tune(2, scratch.path() / "tuning.json",
                                             {"--hold-rank1", (scratch.path() / "go").string()});
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  const json report = printed_json(run);
  std::map<std::string, std::string> details;
  for (const json& result : report["results"])
    details[result["config"].get<std::string>()] = result["detail"].get<std::string>();
  CHECK(details.at("V=6").starts_with("given best 0.750000;"));
  CHECK(statuses(report).at("V=6") == "cut");
  CHECK(report["winner"] == "V=9");
}

TEST_CASE(
    "distributed tune: a rank that dies loses only its config in progress: the other rank "
    "finishes its share, the job ends non-zero naming the lost rank, and --resume finishes the "
    "tune with the same winner") {
  ScratchDirectory scratch;
  const std::filesystem::path database = scratch.path() / "tuning.json";
  // V=8 is rank 1's fourth config: it dies there, recorded as started. Open MPI would end the
  // job at the death unless told not to.
  const ProcessResult killed =
      distributed_tune(2, database, {"--die-at", "8", "--silence-limit", "2"},
                       {"OMPI_MCA_orte_abort_on_non_zero_status=0"});
  CHECK(killed.exit_code != 0);
  CHECK_MESSAGE(contains(killed.output, "rank(s) 1 fell silent (nothing heard for 2 s)"),
                killed.output);
  const std::map<std::string, std::string> after_death = recorded(database);
  CHECK(configs_of(after_death, false) == std::set<std::string>{"V=8"});
  const std::set<std::string> landed = configs_of(after_death, true);
  // Rank 0 timed its whole share (the odd V) after rank 1 died; rank 1 its configs before V=8.
  for (const char* config : {"V=1", "V=5", "V=7", "V=9", "V=11", "V=4", "V=6"})
    CHECK_MESSAGE(landed.contains(config), config);
  CHECK_FALSE(landed.contains("V=10"));
  CHECK_FALSE(landed.contains("V=12"));

  const ProcessResult resumed = distributed_tune(2, database, {"--resume"});
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  const json report = printed_json(resumed);
  CHECK(strings_of(report["resumed"]) == landed);
  std::set<std::string> timed_now;
  for (const auto& [config, status] : statuses(report)) timed_now.insert(config);
  CHECK(timed_now == std::set<std::string>{"V=8", "V=10", "V=12"});
  CHECK(report["winner"] == local_tune(scratch.path() / "alone.json", {"--local"})["winner"]);
  const std::map<std::string, std::string> after_resume = recorded(database);
  CHECK(configs_of(after_resume, false).empty());
  CHECK(configs_of(after_resume, true).size() == 11);
}

TEST_CASE(
    "tune shards: --shard I/N tunes one share each, and tune merge joins their databases into "
    "the one-process tune") {
  ScratchDirectory scratch;
  const json alone = local_tune(scratch.path() / "alone.json", {"--local"});
  std::vector<std::string> merge{PTXRT_CLI_PATH, "tune", "merge"};
  std::set<std::string> timed;
  for (int share = 0; share < 3; ++share) {
    const std::filesystem::path part = scratch.path() / ("shard" + std::to_string(share) + ".json");
    const json report = local_tune(part, {"--shard", std::to_string(share) + "/3"});
    for (const auto& [config, status] : statuses(report)) CHECK(timed.insert(config).second);
    merge.push_back(part.string());
  }
  const std::filesystem::path merged = scratch.path() / "merged.json";
  merge.insert(merge.end(), {"-o", merged.string()});
  const ProcessResult joined = ptxrt::testing::run_process(
      merge, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string()});
  REQUIRE_MESSAGE(joined.exit_code == 0, joined.output);
  CHECK(contains(joined.output, "merged 3 database(s) into " + merged.string() +
                                    ": 1 tune(s), 11 measurement(s)"));
  std::set<std::string> timed_alone;
  for (const auto& [config, status] : statuses(alone)) timed_alone.insert(config);
  CHECK(timed == timed_alone);
  const std::vector<ptxrt::TuningRecord> records = ptxrt::TuningDatabase(merged).records();
  REQUIRE(records.size() == 1);
  REQUIRE(records.front().winner);
  CHECK(records.front().winner->config.describe() == alone["winner"].get<std::string>());
  CHECK(configs_of(recorded(merged), true) ==
        configs_of(recorded(scratch.path() / "alone.json"), true));
}
