// Kernel Tuner's files (ptxrt/tune/kernel_tuner_files.hpp): its cache (closed, and left open
// while a tune runs), results and T4 results files read, hostile ones refused naming the file and
// the field, replayed through the strategies, imported into a tuning database and exported back.
// The files in tests/data/kernel_tuner/ were written for these tests in Kernel Tuner's formats
// (its cache's layout included: a header, then one line per config).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/tune/kernel_tuner_files.hpp"
#include "ptxrt/tune/tune_replay.hpp"
#include "ptxrt/tune/tuning_database.hpp"

using ptxrt::ErrorKind;
using ptxrt::KernelTunerFile;
using ptxrt::KernelTunerFormat;
using ptxrt::KernelTunerTune;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;
using ptxrt::testing::check_error;
using ptxrt::testing::contains;

namespace {

const std::filesystem::path samples =
    std::filesystem::path(PTXRT_SOURCE_DIR) / "tests/data/kernel_tuner";

KernelTunerFile parse(const std::string& text) {
  return ptxrt::parse_kernel_tuner_file(text, "kt.json");
}

const Measurement& measurement_of(const KernelTunerTune& tune, const std::string& described) {
  const auto found =
      std::find_if(tune.measurements.begin(), tune.measurements.end(),
                   [&](const Measurement& m) { return m.config.describe() == described; });
  REQUIRE(found != tune.measurements.end());
  return *found;
}

std::size_t count_status(const KernelTunerTune& tune, MeasurementStatus status) {
  return static_cast<std::size_t>(
      std::count_if(tune.measurements.begin(), tune.measurements.end(),
                    [&](const Measurement& m) { return m.status == status; }));
}

// The smallest cache Kernel Tuner writes, closed, with `entries` in its cache object.
std::string small_cache(const std::string& entries, const std::string& header_extra = "") {
  return "{\n\"device_name\": \"GPU\",\n\"kernel_name\": \"k\",\n\"problem_size\": [64],\n" +
         header_extra +
         "\"tune_params_keys\": [\"block\"],\n\"tune_params\": {\"block\": [32, 64]},\n"
         "\"objective\": \"time\",\n\"cache\": {" +
         entries + "}\n}";
}

const std::string good_entry = "\n\"32\": {\"block\": 32, \"time\": 1.5, \"times\": [1.5]}";

ptxrt::testing::ProcessResult cli(const ptxrt::testing::ScratchDirectory& scratch,
                                  std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  return ptxrt::testing::run_process(
      arguments, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=warning"});
}

}  // namespace

TEST_CASE("a Kernel Tuner cache file is read with every config, its run times and its failures") {
  const KernelTunerFile file = ptxrt::read_kernel_tuner_file(samples / "vector_add_cache.json");
  CHECK(file.format == KernelTunerFormat::cache);
  CHECK_FALSE(file.left_open);
  REQUIRE(file.tunes.size() == 1);
  const KernelTunerTune& tune = file.tunes[0];
  CHECK(tune.kernel == "vector_add");
  CHECK(tune.device == "NVIDIA A100-PCIE-40GB");
  CHECK(tune.size == std::vector<std::int64_t>{10000000});
  CHECK(tune.objective == "time");
  REQUIRE(tune.parameters.size() == 3);
  CHECK(tune.parameters[0].name == "block_size_x");
  CHECK(tune.parameters[0].values == std::vector<std::string>{"32", "64", "128", "256", "512"});
  CHECK(tune.parameters[2].values == std::vector<std::string>{"False", "True"});
  CHECK(tune.whole);
  CHECK(tune.measurements.size() == 30);
  CHECK(count_status(tune, MeasurementStatus::ok) == 27);
  CHECK(count_status(tune, MeasurementStatus::failed) == 3);

  // The median of its seven runs, not Kernel Tuner's mean of them.
  const Measurement& best = measurement_of(tune, "block_size_x=128 tile_size_x=2 use_shared=False");
  CHECK(best.median_ms == doctest::Approx(0.911494));
  CHECK(best.runs == 7);
  CHECK(best.spread > 0.0);
  CHECK(measurement_of(tune, "block_size_x=512 tile_size_x=4 use_shared=False").detail ==
        "invalid: Kernel Tuner's InvalidConfig");
  CHECK(measurement_of(tune, "block_size_x=32 tile_size_x=4 use_shared=True").detail ==
        "compile: Kernel Tuner's CompilationFailedConfig");
  CHECK(measurement_of(tune, "block_size_x=512 tile_size_x=4 use_shared=True").detail ==
        "runtime: Kernel Tuner's RuntimeFailedConfig");

  // Older Kernel Tuner versions wrote a failure's time as 1e20 ms.
  const KernelTunerFile legacy = parse(small_cache("\n\"32\": {\"block\": 32, \"time\": 1e20}"));
  REQUIRE(legacy.tunes[0].measurements.size() == 1);
  CHECK(legacy.tunes[0].measurements[0].status == MeasurementStatus::failed);
}

TEST_CASE("a cache Kernel Tuner left open while tuning is read closed, with the configs so far") {
  const KernelTunerFile open =
      ptxrt::read_kernel_tuner_file(samples / "vector_add_cache_open.json");
  CHECK(open.left_open);
  REQUIRE(open.tunes.size() == 1);
  CHECK(open.tunes[0].measurements.size() == 11);

  // Just started: the header alone, its cache object open and empty.
  const std::string header = small_cache("");
  const KernelTunerFile started = parse(header.substr(0, header.size() - 3) + "\n");
  CHECK(started.left_open);
  CHECK(started.tunes[0].measurements.empty());

  // An entry cut short by a kill is damage, not a config.
  const std::string cut = header.substr(0, header.size() - 3) + good_entry + ",\n\"64\": {\"blo";
  check_error([&] { parse(cut); }, ErrorKind::invalid_argument, "not valid JSON");
}

TEST_CASE("a Kernel Tuner results file gives one tune per device and problem size, not whole") {
  const KernelTunerFile file = ptxrt::read_kernel_tuner_file(samples / "vector_add_results.json");
  CHECK(file.format == KernelTunerFormat::results);
  REQUIRE(file.tunes.size() == 2);
  CHECK(file.tunes[0].device == "NVIDIA_A100_PCIE_40GB");
  CHECK(file.tunes[0].size == std::vector<std::int64_t>{10000000});
  CHECK(file.tunes[1].size == std::vector<std::int64_t>{100000000});
  CHECK_FALSE(file.tunes[0].whole);
  REQUIRE(file.tunes[1].measurements.size() == 1);
  CHECK(file.tunes[1].measurements[0].median_ms == doctest::Approx(8.78005));
}

TEST_CASE("a T4 results file reads as the cache it was written from, without the names") {
  const KernelTunerFile t4 = ptxrt::read_kernel_tuner_file(samples / "vector_add_t4.json");
  const KernelTunerFile cache = ptxrt::read_kernel_tuner_file(samples / "vector_add_cache.json");
  CHECK(t4.format == KernelTunerFormat::t4_results);
  REQUIRE(t4.tunes.size() == 1);
  CHECK(t4.tunes[0].kernel.empty());
  CHECK(t4.tunes[0].device.empty());
  REQUIRE(t4.tunes[0].measurements.size() == cache.tunes[0].measurements.size());
  for (const Measurement& measurement : cache.tunes[0].measurements) {
    const Measurement& read = measurement_of(t4.tunes[0], measurement.config.describe());
    CHECK(read.status == measurement.status);
    CHECK(read.median_ms == measurement.median_ms);
  }
  CHECK(measurement_of(t4.tunes[0], "block_size_x=512 tile_size_x=4 use_shared=False").detail ==
        "invalid: Kernel Tuner's InvalidConfig");
}

TEST_CASE("a hostile Kernel Tuner file is refused naming the file and the field at fault") {
  struct Case {
    const char* what;
    std::string text;
    const char* fragment;
  };
  const std::string many_brackets(100, '[');
  const std::vector<Case> cases{
      {"a time of the wrong type", small_cache("\n\"32\": {\"block\": 32, \"time\": true}"),
       "cache['32'].time: expected a time in ms or InvalidConfig"},
      {"an unknown error marker", small_cache("\n\"32\": {\"block\": 32, \"time\": \"Oops\"}"),
       "got 'Oops'"},
      {"a time of 0", small_cache("\n\"32\": {\"block\": 32, \"time\": 0}"),
       "cache['32'].time: expected a finite number above 0, got 0"},
      {"a negative run time",
       small_cache("\n\"32\": {\"block\": 32, \"time\": 1, \"times\": [-1]}"),
       "cache['32'].times[0]: expected a finite number above 0"},
      {"NaN, which Python writes", small_cache("\n\"32\": {\"block\": 32, \"time\": NaN}"),
       "not valid JSON: syntax error while parsing value - invalid literal"},
      {"a number beyond a double", small_cache("\n\"32\": {\"block\": 32, \"time\": 1e400}"),
       "not valid JSON: number overflow"},
      {"a key that does not match", small_cache("\n\"64\": {\"block\": 32, \"time\": 1}"),
       "cache['64']: the key does not match the entry's values ('32')"},
      {"a value outside tune_params", small_cache("\n\"16\": {\"block\": 16, \"time\": 1}"),
       "cache['16'].block: '16' is not among tune_params' values"},
      {"a missing parameter", small_cache("\n\"32\": {\"time\": 1}"), "cache['32'].block: missing"},
      {"a config twice", small_cache(good_entry + "," + good_entry),
       "key '32': appears twice in one object"},
      {"a missing kernel name",
       "{\"device_name\": \"GPU\", \"tune_params_keys\": [], \"cache\": {}}",
       "kernel_name: missing"},
      {"a parameter list that is not one",
       "{\"kernel_name\": \"k\", \"device_name\": \"GPU\", \"problem_size\": 1, "
       "\"tune_params_keys\": {}, \"tune_params\": {}, \"cache\": {}}",
       "tune_params_keys: expected a list, got an object of 0 field(s)"},
      {"a negative problem size", small_cache("").replace(small_cache("").find("[64]"), 4, "[-1]"),
       "problem_size[0]: expected a count of 0 or more, got -1"},
      {"deep nesting",
       small_cache("\n\"32\": {\"block\": 32, \"time\": 1, \"x\": " + many_brackets),
       "nested deeper than 64 levels"},
      {"a kernel name that would write to the terminal",
       small_cache("").replace(small_cache("").find("\"k\""), 3, "\"k\\u001b[2J\""),
       "kernel_name: expected a name of 1 to 256 bytes without control characters"},
      {"a T4 parameter name past the cap",
       "{\"results\": [{\"configuration\": {\"" + std::string(300, 'b') +
           "\": 1}, \"invalidity\": \"compile\"}]}",
       "results[0].configuration: expected a name of 1 to 256 bytes"},
      {"no format at all", "{\"hello\": 1}", "the file: neither a Kernel Tuner cache"},
      {"not an object", "[1, 2]", "the file: expected an object"},
      {"a results file of another version",
       "{\"version_number\": \"2.0\", \"kernel_name\": \"k\", \"data\": []}",
       "version_number: expected \"1.0\""},
      {"a T4 result of unknown validity",
       "{\"results\": [{\"configuration\": {\"b\": 1}, \"invalidity\": \"fine\"}]}",
       "results[0].invalidity: expected correct"},
      {"a T4 config twice",
       "{\"results\": [{\"configuration\": {\"b\": 1}, \"invalidity\": \"compile\"}, "
       "{\"configuration\": {\"b\": 1}, \"invalidity\": \"runtime\"}]}",
       "results: 'b=1' is listed twice"},
      {"a T4 config with a parameter the first lacks",
       "{\"results\": [{\"configuration\": {\"b\": 1}, \"invalidity\": \"compile\"}, "
       "{\"configuration\": {\"b\": 2, \"c\": 1}, \"invalidity\": \"runtime\"}]}",
       "results[1].configuration.c: is not a tuned parameter"},
      {"a T4 correct config without a time",
       "{\"results\": [{\"configuration\": {\"b\": 1}, \"invalidity\": \"correct\"}]}",
       "results[0]: a correct config needs times.runtimes or a time measurement"},
  };
  for (const Case& hostile : cases) {
    const std::string what = hostile.what;
    CAPTURE(what);
    check_error([&] { parse(hostile.text); }, ErrorKind::invalid_argument, hostile.fragment);
    check_error([&] { parse(hostile.text); }, ErrorKind::invalid_argument,
                "Kernel Tuner file 'kt.json': ");
  }
}

TEST_CASE("a Kernel Tuner file larger than its cap, or not a regular file, is refused unread") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::filesystem::path huge = scratch.path() / "huge.json";
  std::ofstream(huge).put('{');
  std::filesystem::resize_file(huge, ptxrt::max_kernel_tuner_file_bytes + 1);
  check_error([&] { ptxrt::read_kernel_tuner_file(huge); }, ErrorKind::io, "huge.json");

  const std::filesystem::path fifo = scratch.path() / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  check_error([&] { ptxrt::read_kernel_tuner_file(fifo); }, ErrorKind::io, "a FIFO");
}

TEST_CASE("a Kernel Tuner brute-force tune replays through the strategies to its recorded best") {
  const KernelTunerTune tune =
      ptxrt::read_kernel_tuner_file(samples / "vector_add_cache.json").tunes[0];
  const ptxrt::RecordedTune recorded = ptxrt::recorded_tune(tune);
  REQUIRE(recorded.configs.size() == 30);
  // use_shared's False and True become their positions, 0 and 1; integers stay themselves.
  CHECK(recorded.configs[1].config.describe() == "block_size_x=32 tile_size_x=1 use_shared=1");
  CHECK(recorded.best_ms() == doctest::Approx(0.911494));

  const ptxrt::ReplayScore exhaustive = ptxrt::replay(recorded, {}, {0.01});
  CHECK(exhaustive.timed == 30);
  CHECK(exhaustive.found_ms == recorded.best_ms());

  const ptxrt::ReplaySummary model = ptxrt::summarize_replays(
      recorded, {.strategy = ptxrt::TuningStrategy::model, .budget = 8}, 5, {0.01, 0.03});
  CHECK(model.seeds == 5);
  CHECK(model.timed == 8.0);
  CHECK(model.found_ms >= recorded.best_ms());
  CHECK(model.within.size() == 2);

  check_error(
      [&] {
        ptxrt::recorded_tune(
            ptxrt::read_kernel_tuner_file(samples / "vector_add_results.json").tunes[0]);
      },
      ErrorKind::invalid_argument, "a results file keeps only each tune's best configs");
  KernelTunerTune odd_name = tune;
  odd_name.parameters[0].name = "block size";
  check_error([&] { ptxrt::recorded_tune(odd_name); }, ErrorKind::invalid_argument,
              "parameter 'block size' is not a C identifier");
}

TEST_CASE("an imported Kernel Tuner tune is keyed as Kernel Tuner's and never chosen for ptxrt's") {
  const KernelTunerTune tune =
      ptxrt::read_kernel_tuner_file(samples / "vector_add_cache.json").tunes[0];
  const ptxrt::TuningRecord record = ptxrt::tuning_record(tune);
  CHECK(record.key.kernel == "vector_add");
  CHECK(record.key.source_hash == "kernel-tuner");
  CHECK(record.key.space ==
        "block_size_x in {32,64,128,256,512}; tile_size_x in {1,2,4}; use_shared in {False,True}");
  CHECK(record.key.device == "NVIDIA A100-PCIE-40GB");
  CHECK(record.key.size == std::vector<std::int64_t>{10000000});
  CHECK(record.key.l2 == ptxrt::L2Mode::warm);  // Kernel Tuner times its runs back to back
  REQUIRE(record.winner);
  CHECK(record.winner->config.describe() == "block_size_x=128 tile_size_x=2 use_shared=False");

  ptxrt::TuningKey ptxrt_kernel = record.key;
  ptxrt_kernel.source_hash = "0123abcd";
  const ptxrt::TunedChoice choice = ptxrt::choose({record}, ptxrt_kernel, {});
  CHECK(choice.level == ptxrt::ChoiceLevel::declared_default);

  KernelTunerTune unnamed = tune;
  unnamed.kernel.clear();
  check_error([&] { ptxrt::tuning_record(unnamed); }, ErrorKind::invalid_argument,
              "names no kernel");
}

TEST_CASE("a tune exported as T4 results reads back with every config, status and time") {
  const ptxrt::TuningRecord record = ptxrt::tuning_record(
      ptxrt::read_kernel_tuner_file(samples / "vector_add_cache.json").tunes[0]);
  const std::string text = ptxrt::kernel_tuner_t4_results(record);
  const nlohmann::json document = nlohmann::json::parse(text);
  CHECK(document["schema_version"] == "1.0.0");
  CHECK(document["results"][0]["configuration"]["block_size_x"] == 32);
  CHECK(document["results"][0]["configuration"]["use_shared"] == false);

  const KernelTunerTune back = parse(text).tunes[0];
  REQUIRE(back.measurements.size() == record.measurements.size());
  for (const Measurement& measurement : record.measurements) {
    const Measurement& read = measurement_of(back, measurement.config.describe());
    CHECK(read.status == measurement.status);
    CHECK(read.median_ms == measurement.median_ms);
    CHECK(read.detail.substr(0, 7) == measurement.detail.substr(0, 7));
  }
}

TEST_CASE(
    "ptxrt tune replay prints what each strategy finds in a Kernel Tuner file, and at what cost") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::string cache = (samples / "vector_add_cache.json").string();
  const ptxrt::testing::ProcessResult table =
      cli(scratch, {"tune", "replay", cache, "--seeds", "3"});
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.output, "Kernel Tuner cache file '" + cache +
                                   "': vector_add 10000000 on NVIDIA A100-PCIE-40GB, 30 configs; "
                                   "best 0.9115 ms (block_size_x=128 tile_size_x=2 "
                                   "use_shared=False)"));
  CHECK(contains(table.output, "exhaustive  1      30     0.9115 ms (+0.0 %)"));
  CHECK(contains(table.output, "\nmodel       3"));

  const ptxrt::testing::ProcessResult json =
      cli(scratch, {"tune", "replay", cache, "--strategy", "random", "--budget", "4", "--json"});
  REQUIRE(json.exit_code == 0);
  const nlohmann::json reports = nlohmann::json::parse(json.output);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0]["configs"] == 30);
  CHECK(reports[0]["strategies"][0]["strategy"] == "random");
  CHECK(reports[0]["strategies"][0]["timed"] == 4.0);

  const ptxrt::testing::ProcessResult results =
      cli(scratch, {"tune", "replay", (samples / "vector_add_results.json").string()});
  CHECK(results.exit_code == 1);
  CHECK(contains(results.output, "a results file keeps only each tune's best configs"));
}

TEST_CASE(
    "ptxrt tune import records Kernel Tuner tunes that tune show lists and export writes back") {
  ptxrt::testing::ScratchDirectory scratch;
  const std::string database = (scratch.path() / "tuning.json").string();
  const std::string t4 = (samples / "vector_add_t4.json").string();
  const ptxrt::testing::ProcessResult unnamed =
      cli(scratch, {"tune", "import", t4, "--db", database});
  CHECK(unnamed.exit_code == 1);
  CHECK(
      contains(unnamed.output, "names no kernel or device: give them with --kernel-name and --device"));

  REQUIRE(cli(scratch,
              {"tune", "import", (samples / "vector_add_cache.json").string(), "--db", database})
              .exit_code == 0);
  const ptxrt::testing::ProcessResult imported =
      cli(scratch, {"tune", "import", t4, "--db", database, "--kernel-name", "vector_add_t4", "--device",
                    "GPU", "--size", "1000x10"});
  REQUIRE(imported.exit_code == 0);
  CHECK(contains(imported.output, "1 tune(s), 30 measurement(s)"));

  const ptxrt::testing::ProcessResult shown = cli(scratch, {"tune", "show", "--db", database});
  REQUIRE(shown.exit_code == 0);
  CHECK(contains(shown.output, "vector_add     10000000  NVIDIA A100-PCIE-40GB"));
  CHECK(contains(shown.output, "vector_add_t4  1000x10   GPU"));

  const std::string exported = (scratch.path() / "exported.json").string();
  const ptxrt::testing::ProcessResult ambiguous =
      cli(scratch, {"tune", "export", "--db", database, "-o", exported});
  CHECK(ambiguous.exit_code == 1);
  CHECK(contains(ambiguous.output, "2 tunes in '" + database + "' match"));
  REQUIRE(cli(scratch,
              {"tune", "export", "--db", database, "--kernel-name", "vector_add_t4", "-o", exported})
              .exit_code == 0);
  const KernelTunerFile back = ptxrt::read_kernel_tuner_file(exported);
  CHECK(back.format == KernelTunerFormat::t4_results);
  CHECK(back.tunes[0].measurements.size() == 30);
}
