// `ptxrt tune replay|import|export`: tunes made with Kernel Tuner replayed through ptxrt's
// strategies and recorded in the tuning database, and ptxrt's tunes written for Kernel Tuner's
// tools (ptxrt/tune/kernel_tuner_files.hpp).
#include "tune_exchange.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/kernel_tuner_files.hpp"
#include "ptxrt/tune/tune_replay.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "support/quoted.hpp"
#include "tune_report.hpp"

namespace ptxrt::cli {
namespace {

const std::vector<double> replay_distances{0.01, 0.03};

// "4096x4096" as {4096, 4096}; Error (invalid_argument) naming --size otherwise.
std::vector<std::int64_t> parse_size(const std::string& text) {
  std::vector<std::int64_t> size;
  std::string_view rest = text;
  while (true) {
    const std::size_t cross = std::min(rest.find('x'), rest.size());
    std::int64_t extent = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + cross, extent);
    if (error != std::errc() || end != rest.data() + cross || extent < 0 || cross == 0)
      throw Error(ErrorKind::invalid_argument,
                  "--size " + detail::quoted(text) + ": expected counts such as 4096x4096");
    size.push_back(extent);
    if (cross == rest.size()) return size;
    rest.remove_prefix(cross + 1);
  }
}

std::string file_title(const std::string& file, const KernelTunerFile& read) {
  return "Kernel Tuner " + std::string(to_string(read.format)) + " file " +
         detail::quoted_path(file);
}

// "vector_add 10000000 on NVIDIA A100", leaving out what the file does not say.
std::string tune_title(const KernelTunerTune& tune) {
  std::string title = tune.kernel.empty() ? std::string("(kernel not named)") : tune.kernel;
  if (!tune.size.empty()) title += " " + format_size(tune.size);
  if (!tune.device.empty()) title += " on " + tune.device;
  return title;
}

std::string found_text(double found_ms, double best_ms) {
  if (!std::isfinite(found_ms)) return "none";
  return fixed(found_ms, 4) + " ms (+" + fixed(100.0 * (found_ms / best_ms - 1.0), 1) + " %)";
}

std::string reach_text(const ReplaySummary& summary, std::size_t distance) {
  const ReplaySummary::Reach& reach = summary.within[distance];
  if (!reach.reached) return "not reached";
  std::string text = fixed(reach.configs, 0);
  if (summary.seeds > 1) text += " (" + fixed(reach.configs_p90, 0) + ")";
  return text + ", " + fixed(100.0 * reach.cost_share, 1) + " %";
}

nlohmann::json summary_json(TuningStrategy strategy, const ReplaySummary& summary) {
  nlohmann::json within = nlohmann::json::array();
  for (std::size_t d = 0; d < replay_distances.size(); ++d)
    within.push_back({{"distance", replay_distances[d]},
                      {"reached", summary.within[d].reached},
                      {"configs", summary.within[d].configs},
                      {"configs_p90", summary.within[d].configs_p90},
                      {"cost_share", summary.within[d].cost_share}});
  const auto finite_or_null = [](double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
  };
  return {{"strategy", to_string(strategy)},
          {"seeds", summary.seeds},
          {"timed", summary.timed},
          {"found_ms", finite_or_null(summary.found_ms)},
          {"found_ms_p90", finite_or_null(summary.found_ms_p90)},
          {"within", std::move(within)}};
}

struct ReplayArguments {
  std::string file;
  std::string strategy;  // empty: every strategy
  std::size_t budget = 0;
  int seeds = 25;
  bool json = false;
};

void replay_file(const ReplayArguments& arguments) {
  const KernelTunerFile read = read_kernel_tuner_file(arguments.file);
  std::vector<TuningStrategy> strategies{TuningStrategy::exhaustive, TuningStrategy::occupancy,
                                         TuningStrategy::random, TuningStrategy::model};
  if (!arguments.strategy.empty()) strategies = {parse_tuning_strategy(arguments.strategy)};
  nlohmann::json reports = nlohmann::json::array();
  for (const KernelTunerTune& tune : read.tunes) {
    const RecordedTune recorded = recorded_tune(tune);
    const std::optional<Measurement> best = fastest(tune.measurements);
    nlohmann::json summaries = nlohmann::json::array();
    std::vector<std::vector<std::string>> rows;
    for (TuningStrategy strategy : strategies) {
      TuneOptions options{.strategy = strategy};
      if (arguments.budget > 0) options.budget = arguments.budget;
      const ReplaySummary summary =
          summarize_replays(recorded, options, arguments.seeds, replay_distances);
      summaries.push_back(summary_json(strategy, summary));
      rows.push_back({std::string(to_string(strategy)), std::to_string(summary.seeds),
                      fixed(summary.timed, 0), found_text(summary.found_ms, best->median_ms),
                      reach_text(summary, 0), reach_text(summary, 1)});
    }
    if (arguments.json) {
      reports.push_back({{"kernel", tune.kernel},
                         {"device", tune.device},
                         {"size", tune.size},
                         {"configs", tune.measurements.size()},
                         {"best", measurement_json(*best)},
                         {"strategies", std::move(summaries)}});
      continue;
    }
    std::cout << file_title(arguments.file, read) << ": " << tune_title(tune) << ", "
              << tune.measurements.size() << " configs; best " << fixed(best->median_ms, 4)
              << " ms (" << best->config.describe() << ")\n";
    if (read.left_open)
      note(
          "the cache is still open: Kernel Tuner was writing it, or was stopped; replaying "
          "what it holds");
    print_table(std::cout, {"strategy", "seeds", "timed", "best found", "to 1 %", "to 3 %"}, rows);
  }
  if (arguments.json) {
    print_json(std::cout, reports);
    return;
  }
  std::cout << "(timed: configs timed" << (arguments.budget > 0 ? " within the budget" : "")
            << "; to 1 % / 3 %: configs timed to come that close to the best, and that timing "
               "cost as a share of timing every config (not reached: by some seed); seeded "
               "strategies: median over the seeds, 90th percentile in brackets; Kernel Tuner's "
               "files hold no compiled resources: occupancy has nothing to order by, and "
               "model learns from the tunables alone)\n";
}

void add_replay_command(CLI::App& tune) {
  auto arguments = std::make_shared<ReplayArguments>();
  CLI::App* command = tune.add_subcommand(
      "replay",
      "Replay a Kernel Tuner brute-force tune (its cache or T4 results file) through ptxrt's "
      "strategies, without a GPU: what each would find, and at what timing cost");
  command->add_option("file", arguments->file, "the Kernel Tuner file")->required();
  command->add_option("--strategy", arguments->strategy, "replay this strategy alone")
      ->check(CLI::IsMember({"exhaustive", "random", "occupancy", "model"}));
  command->add_option("--budget", arguments->budget, "time at most N configs")->check(at_least(1));
  command->add_option("--seeds", arguments->seeds, "seeds of the random and model strategies")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_flag("--json", arguments->json,
                    "print [{kernel, device, size, configs, best, strategies: [{strategy, seeds, "
                    "timed, found_ms, found_ms_p90, within: [{distance, reached, configs, "
                    "configs_p90, cost_share}]}]}]");
  command->callback([arguments] { replay_file(*arguments); });
}

struct ImportArguments {
  std::string file;
  std::string database;
  std::string kernel;
  std::string device;
  std::string size;
};

void import_file(const ImportArguments& arguments) {
  const KernelTunerFile read = read_kernel_tuner_file(arguments.file);
  std::vector<TuningRecord> records;
  std::size_t measurements = 0;
  for (KernelTunerTune tune : read.tunes) {
    if (!arguments.kernel.empty()) tune.kernel = arguments.kernel;
    if (!arguments.device.empty()) tune.device = arguments.device;
    if (!arguments.size.empty()) tune.size = parse_size(arguments.size);
    if (tune.kernel.empty() || tune.device.empty())
      throw Error(ErrorKind::invalid_argument,
                  file_title(arguments.file, read) +
                      " names no kernel or device: give them with --kernel-name and --device");
    records.push_back(tuning_record(tune));
    measurements += records.back().measurements.size();
  }
  const TuningDatabase database(database_path(arguments.database));
  database.merge_from(records);
  std::cout << "imported " << file_title(arguments.file, read) << " into "
            << database.path().string() << ": " << records.size() << " tune(s), " << measurements
            << " measurement(s)\n";
  if (read.left_open) note("the cache is still open: imported what Kernel Tuner had written");
  print_tune_records(std::cout, records);
}

void add_import_command(CLI::App& tune) {
  auto arguments = std::make_shared<ImportArguments>();
  CLI::App* command = tune.add_subcommand(
      "import",
      "Record a Kernel Tuner tune (cache, results or T4 results file) in the tuning database, "
      "keyed by its kernel, device and problem size and marked as Kernel Tuner's "
      "(source_hash kernel-tuner): shown, merged and exported, never chosen for a ptxrt kernel");
  command->add_option("file", arguments->file, "the Kernel Tuner file")->required();
  add_database_option(*command, arguments->database);
  command->add_option("--kernel-name", arguments->kernel,
                      "the kernel's name (instead of the file's kernel_name; a T4 file has none)");
  command->add_option("--device", arguments->device,
                      "the device's name (instead of the file's device_name; a T4 file has none)");
  command->add_option("--size", arguments->size,
                      "the problem size, such as 4096x4096 (instead of the file's problem_size)");
  command->callback([arguments] { import_file(*arguments); });
}

struct ExportArguments {
  std::string output;
  std::string database;
  std::string kernel;
  std::string device;
  std::string size;
};

void export_tune(const ExportArguments& arguments) {
  const TuningDatabase database(database_path(arguments.database));
  std::vector<TuningRecord> chosen;
  for (TuningRecord& record : database.records())
    if ((arguments.kernel.empty() || record.key.kernel == arguments.kernel) &&
        (arguments.device.empty() || record.key.device == arguments.device) &&
        (arguments.size.empty() || record.key.size == parse_size(arguments.size)))
      chosen.push_back(std::move(record));
  if (chosen.size() != 1) {
    std::string listed;
    for (const TuningRecord& record : chosen) listed += "\n  " + record.key.describe();
    throw Error(ErrorKind::invalid_argument,
                "tune export: " + std::to_string(chosen.size()) + " tunes in " +
                    detail::quoted_path(database.path()) +
                    " match; name one with --kernel, --device and --size" + listed);
  }
  const std::string text = kernel_tuner_t4_results(chosen.front());
  if (arguments.output == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(arguments.output, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    throw Error(ErrorKind::io,
                "tune export: cannot write " + detail::quoted_path(arguments.output));
  std::cout << "exported " << chosen.front().key.describe() << " ("
            << chosen.front().measurements.size() << " measurements) to " << arguments.output
            << " as Kernel Tuner T4 results\n";
}

void add_export_command(CLI::App& tune) {
  auto arguments = std::make_shared<ExportArguments>();
  CLI::App* command = tune.add_subcommand(
      "export",
      "Write one tune of the tuning database as a Kernel Tuner T4 results file, for Kernel "
      "Tuner's plotting and analysis tools");
  command->add_option("-o,--output", arguments->output, "the file to write ('-': standard output)")
      ->required();
  add_database_option(*command, arguments->database);
  command->add_option("--kernel-name", arguments->kernel, "the tune's kernel");
  command->add_option("--device", arguments->device, "the tune's device name");
  command->add_option("--size", arguments->size, "the tune's problem size, such as 4096x4096");
  command->callback([arguments] { export_tune(*arguments); });
}

}  // namespace

void add_kernel_tuner_commands(CLI::App& tune) {
  add_replay_command(tune);
  add_import_command(tune);
  add_export_command(tune);
}

}  // namespace ptxrt::cli
