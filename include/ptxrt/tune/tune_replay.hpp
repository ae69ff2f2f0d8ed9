// A recorded exhaustive tune replayed through the real tuner, without a GPU, to compare
// strategies: a stand-in compiler gives each config the resources it compiled to and a stand-in
// measurer the time it took, so that each strategy's order can be scored: how many configs it
// times, and at what timing cost, before one within 1 % (3 %) of the recorded winner, and what
// it finds within a budget. The recordings come from `ptxrt tune --json` reports, Kernel Tuner's
// files (kernel_tuner_files.hpp) or a table made up for a test.
//
// Thread safety: plain values and functions without shared state; replay from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt {

// One config of a recorded tune. Its parameter values must be integers (the tuner's spaces are).
struct PTXRT_API RecordedConfig {
  TuningConfig config;
  MeasurementStatus status = MeasurementStatus::ok;  // cut counts as ok: it was timed
  double median_ms = 0.0;
  std::optional<KernelResources> resources;  // unknown to a recording without them: the
  std::optional<Occupancy> occupancy;        // occupancy and model strategies then order by
  std::optional<LaunchShape> shape;          // the tunables alone
};

struct PTXRT_API RecordedTune {
  std::string name;
  std::vector<RecordedConfig> configs;

  // The fastest timed config's time; 0 when none was timed.
  double best_ms() const;
};

struct PTXRT_API ReplayScore {
  std::size_t timed = 0;  // configs timed in all
  double cost_ms = 0.0;   // their timing cost: warm-up, verification and timed runs
  // Per distance asked for: configs timed until the first within it of the winner, and the
  // cost until then (nothing when the tune never came that close).
  std::vector<std::optional<std::size_t>> configs_to;
  std::vector<double> cost_to;
  std::optional<double> found_ms;  // the fastest config it timed
};

// Replays `recorded` with `options` (strategy, seed, budget; compiled inline, so the order is
// the strategy's alone; the database is not written) and scores it against the recorded winner
// at each of `within` (0.01 for 1 %). The cost is what ptxrt's measurer would spend
// (TimingPolicy's defaults: warm-up, verification, timed runs, the cut of slow configs). Throws
// Error (invalid_argument) when a config's value is not an integer or the recording has no
// timed config.
PTXRT_API ReplayScore replay(const RecordedTune& recorded, TuneOptions options,
                             const std::vector<double>& within);

// A strategy's replays over several seeds (one for exhaustive and occupancy, which do not draw).
struct PTXRT_API ReplaySummary {
  struct Reach {
    double configs = 0.0;      // median configs timed to come within the distance
    double configs_p90 = 0.0;  // their 90th percentile
    double cost_share = 0.0;   // median timing cost to it, over the exhaustive tune's whole cost
    bool reached = true;       // by every seed
  };
  int seeds = 1;
  std::vector<Reach> within;  // per distance asked for
  double timed = 0.0;         // median configs timed in all
  // The median of the fastest config found, and its 90th percentile (nine seeds in ten found
  // one at least this fast); infinite where seeds found none (a budget of failing configs).
  double found_ms = 0.0;
  double found_ms_p90 = 0.0;
};

// Whether `strategy` draws from the seed (random, model).
PTXRT_API bool seeded(TuningStrategy strategy);

// `options` replayed over seeds 1..seeds (seeded strategies; otherwise once) and summarized.
PTXRT_API ReplaySummary summarize_replays(const RecordedTune& recorded, const TuneOptions& options,
                                          int seeds, const std::vector<double>& within);

}  // namespace ptxrt
