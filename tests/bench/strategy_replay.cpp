// How many configs each tuning strategy times, and at what timing cost, before it finds one
// within 1 % and 3 % of the exhaustive winner: the recorded exhaustive tunes (`ptxrt tune ...
// --strategy exhaustive --json`, one or more reports per file) replayed through the real tuner
// without a GPU (ptxrt/tune/tune_replay.hpp). Deterministic: random and model are scored
// over --seeds seeds each (median, and the 90th percentile in brackets).
//
//   ptxrt_strategy_replay [--seeds 25] [--markdown] exhaustive.json ...
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "tune_replay.hpp"

namespace {

const std::vector<double> distances{0.01, 0.03};

std::string cell_text(const ptxrt::ReplaySummary& summary, std::size_t distance) {
  const ptxrt::ReplaySummary::Reach& reach = summary.within[distance];
  char text[96];
  if (summary.seeds > 1)
    std::snprintf(text, sizeof text, "%.0f (%.0f), %.1f %%", reach.configs, reach.configs_p90,
                  100.0 * reach.cost_share);
  else
    std::snprintf(text, sizeof text, "%.0f, %.1f %%", reach.configs, 100.0 * reach.cost_share);
  return std::string(text) + (reach.reached ? "" : " (not reached)");
}

}  // namespace

int main(int argc, char** argv) try {
  int seeds = 25;
  bool markdown = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--seeds" && i + 1 < argc)
      seeds = std::max(1, std::stoi(argv[++i]));
    else if (argument == "--markdown")
      markdown = true;
    else
      files.push_back(argument);
  }
  if (files.empty()) {
    std::cerr << "usage: ptxrt_strategy_replay [--seeds N] [--markdown] exhaustive.json ...\n";
    return 2;
  }
  const std::string separator = markdown ? " | " : "  ";
  if (markdown)
    std::cout << "| problem | configs | strategy | to 1 % | to 3 % |\n|---|---|---|---|---|\n";
  for (const std::string& file : files) {
    std::ifstream in(file);
    nlohmann::json reports = nlohmann::json::parse(in);
    if (!reports.is_array()) reports = nlohmann::json::array({reports});
    for (const nlohmann::json& report : reports) {
      const ptxrt::RecordedTune tune = ptxrt::testing::recorded_tune(report);
      for (ptxrt::TuningStrategy strategy :
           {ptxrt::TuningStrategy::exhaustive, ptxrt::TuningStrategy::occupancy,
            ptxrt::TuningStrategy::random, ptxrt::TuningStrategy::model}) {
        const ptxrt::ReplaySummary summary = ptxrt::summarize_replays(
            tune, ptxrt::TuneOptions{.strategy = strategy}, seeds, distances);
        if (markdown) std::cout << "| ";
        std::cout << tune.name << separator << tune.configs.size() << separator
                  << ptxrt::to_string(strategy) << separator << cell_text(summary, 0) << separator
                  << cell_text(summary, 1) << (markdown ? " |" : "") << '\n';
      }
    }
  }
  if (!markdown)
    std::cout << "(configs timed to come within 1 % / 3 % of the exhaustive winner, and that "
                 "timing cost as a share of the exhaustive tune's; random and model: median "
                 "over "
              << seeds << " seeds, 90th percentile in brackets)\n";
  return 0;
} catch (const std::exception& error) {
  std::cerr << "ptxrt_strategy_replay: " << error.what() << '\n';
  return 1;
}
