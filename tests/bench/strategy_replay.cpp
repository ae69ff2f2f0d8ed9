// How many configs each tuning strategy times, and at what timing cost, before it finds one
// within 1 % and 3 % of the exhaustive winner: the recorded exhaustive tunes (`ptxrt tune ...
// --strategy exhaustive --json`, one or more reports per file) replayed through the real tuner
// without a GPU (tests/support/tune_replay.hpp). Deterministic: random and model are scored
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

using ptxrt::testing::RecordedTune;
using ptxrt::testing::ReplayScore;

const std::vector<double> distances{0.01, 0.03};

struct Cell {
  double configs = 0.0;  // median over the seeds (configs timed to the distance)
  double configs_p90 = 0.0;
  double cost_share = 0.0;  // median timing cost to it, over the exhaustive tune's whole cost
  bool reached = true;
};

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

std::vector<Cell> score(const RecordedTune& tune, ptxrt::TuningStrategy strategy, int seeds,
                        double exhaustive_cost) {
  std::vector<std::vector<double>> configs(distances.size()), costs(distances.size());
  std::vector<bool> reached(distances.size(), true);
  for (int seed = 1; seed <= seeds; ++seed) {
    ptxrt::TuneOptions options;
    options.strategy = strategy;
    options.seed = static_cast<std::uint64_t>(seed);
    const ReplayScore replayed = ptxrt::testing::replay(tune, options, distances);
    for (std::size_t d = 0; d < distances.size(); ++d) {
      reached[d] = reached[d] && replayed.configs_to[d].has_value();
      configs[d].push_back(static_cast<double>(replayed.configs_to[d].value_or(replayed.timed)));
      costs[d].push_back(replayed.cost_to[d] / exhaustive_cost);
    }
  }
  std::vector<Cell> cells;
  for (std::size_t d = 0; d < distances.size(); ++d)
    cells.push_back({quantile(configs[d], 0.5), quantile(configs[d], 0.9),
                     quantile(costs[d], 0.5), reached[d]});
  return cells;
}

std::string cell_text(const Cell& cell, bool seeded) {
  char text[96];
  if (seeded)
    std::snprintf(text, sizeof text, "%.0f (%.0f), %.1f %%", cell.configs, cell.configs_p90,
                  100.0 * cell.cost_share);
  else
    std::snprintf(text, sizeof text, "%.0f, %.1f %%", cell.configs, 100.0 * cell.cost_share);
  return std::string(text) + (cell.reached ? "" : " (not reached)");
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
      const RecordedTune tune = ptxrt::testing::recorded_tune(report);
      ptxrt::TuneOptions exhaustive;
      const double whole = ptxrt::testing::replay(tune, exhaustive, distances).cost_ms;
      for (ptxrt::TuningStrategy strategy :
           {ptxrt::TuningStrategy::exhaustive, ptxrt::TuningStrategy::occupancy,
            ptxrt::TuningStrategy::random, ptxrt::TuningStrategy::model}) {
        const bool seeded = strategy == ptxrt::TuningStrategy::random ||
                            strategy == ptxrt::TuningStrategy::model;
        const std::vector<Cell> cells = score(tune, strategy, seeded ? seeds : 1, whole);
        if (markdown) std::cout << "| ";
        std::cout << tune.name << separator << tune.configs.size() << separator
                  << ptxrt::to_string(strategy) << separator << cell_text(cells[0], seeded)
                  << separator << cell_text(cells[1], seeded) << (markdown ? " |" : "") << '\n';
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
