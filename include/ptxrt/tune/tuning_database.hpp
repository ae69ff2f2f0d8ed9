// The tuning database: every config a tune measured, and each tune's winner, in one JSON file
// keyed by what makes a result valid (kernel source, space, device, compute capability, NVRTC
// version, problem size). Read at run time to pick a tuned config (choose), and by an
// interrupted tune to resume where it stopped: the database also holds what each tune was asked
// (its request) and whether it finished.
//
// Process safety: record() rewrites the file under an exclusive flock of "<file>.lock" (read,
// merge, write "<file>.tmp", fsync, rename), so any number of processes may tune into one file
// at once and every record lands; readers see a whole file, old or new, never a torn one. A
// process killed while writing loses only that record; the next record() removes its temporary.
// Thread safety: a TuningDatabase is an immutable handle; use it from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuning_space.hpp"

namespace ptxrt {

enum class MeasurementStatus {
  started,  // handed to the GPU, no result yet: a crash or an interrupt happened during it
  ok,       // verified and timed
  cut,      // verified, timed a few runs, and left: clearly slower than the best so far
  wrong,    // ran, but its output differs from the reference beyond the tolerance
  failed,   // threw (a launch that was refused, a fault the worker caught), or did not compile
  crashed,  // the worker process died or hung while running it
  compile_timeout,  // its compile ran past the tune's compile timeout and was cancelled
};
PTXRT_API std::string_view to_string(MeasurementStatus status);  // "started", "ok", ...

// How a tune times a config's runs (TimingPolicy::l2), recorded with each tune (TuningKey::l2).
enum class L2Mode {
  flush,  // the L2 written over before every timed run: each run reads its inputs from memory
  warm,   // runs back to back: each finds in L2 what the run before left there
};
PTXRT_API std::string_view to_string(L2Mode mode);  // "flush" | "warm"
// "flush" | "warm"; Error (invalid_argument) naming `user` (the flag or field) otherwise.
PTXRT_API L2Mode parse_l2_mode(std::string_view text, std::string_view user);

// What NVML observed over a config's energy window (TimingPolicy::observe_power): the runs back
// to back from one step of NVML's energy counter to the first at least energy_window_ms later.
struct PTXRT_API PowerObservation {
  double energy_j = 0.0;       // per run
  double power_w = 0.0;        // the mean over the window: its energy over its time
  double sm_clock_mhz = 0.0;   // at the end of the window
  double temperature_c = 0.0;  // of the GPU, at the end of the window

  bool operator==(const PowerObservation&) const = default;
};

struct PTXRT_API Measurement {
  TuningConfig config;
  MeasurementStatus status = MeasurementStatus::started;
  double median_ms = 0.0;
  double spread = 0.0;  // interquartile range over the median of the timed runs
  int runs = 0;         // timed runs
  double rate = 0.0;    // work per second at the median, in rate_unit
  std::string rate_unit;
  double max_error = 0.0;     // against the reference (infinite for NaN output)
  std::string detail;         // why it failed; for ok ones, what is worth knowing (spills)
  std::optional<int> device;  // the ordinal of the GPU that timed it, when known
  std::optional<PowerObservation> power;  // when the tune observed power
  std::map<std::string, double> metrics;  // the problem's metrics (KernelProblem::metrics)

  bool finished() const noexcept { return status != MeasurementStatus::started; }
};

// What a tune's winner is best at: its time, its energy or power (observed through NVML), or
// one of its problem's metrics, in that metric's direction.
struct PTXRT_API Objective {
  std::string name = "time";      // "time" | "energy" | "power" | a metric's name
  bool higher_is_better = false;  // only a metric may be; time, energy and power are lower

  bool operator==(const Objective&) const = default;
  // Whether judging by it takes the energy window (energy, power; a metric on them says so itself
  // through its problem: see KernelProblem::Metric::needs_power).
  bool needs_power() const noexcept { return name == "energy" || name == "power"; }
  // "time", "energy", "GFLOP/s (higher is better)".
  std::string describe() const;
};

// The measurement's value under `objective`: its median time, its energy per run, its mean
// power, or its metric; nothing when it has none (not observed, not ok).
PTXRT_API std::optional<double> objective_value(const Measurement& measurement,
                                                const Objective& objective);
// The best measurement with status ok and a value under `objective`, if any; of equal values, the
// first.
PTXRT_API std::optional<Measurement> best_measurement(const std::vector<Measurement>& measurements,
                                                      const Objective& objective);
// The fastest measurement with status ok, if any.
PTXRT_API std::optional<Measurement> fastest(const std::vector<Measurement>& measurements);

// One measurement as one line of JSON (the file's own form of it), and back; for processes that
// hand measurements to each other. Throws Error (invalid_argument) for text that is not one.
PTXRT_API std::string measurement_to_json(const Measurement& measurement);
PTXRT_API Measurement measurement_from_json(std::string_view text);

struct PTXRT_API TuningKey {
  std::string kernel;              // the tuning problem ("matmul")
  std::string source_hash;         // source_hash() of its program
  std::string space;               // TuningSpace::describe()
  std::string device;              // the device's name
  std::string compute_capability;  // "9.0"
  int nvrtc_version = 0;
  std::vector<std::int64_t> size;  // the problem size, e.g. {m, n, k}
  // How its configs were timed and what its winner is best at: a flushed and a warm tune of one
  // problem, or a tune for time and one for energy, are separate records. Files written before
  // these were recorded read as flush and time, the only tunes there were.
  L2Mode l2 = L2Mode::flush;
  Objective objective;

  bool operator==(const TuningKey&) const = default;
  // "matmul 1024x1024x1024 on NVIDIA H100 80GB HBM3 (9.0)".
  std::string describe() const;
  // How it was tuned: "L2 flush, objective time", "L2 warm, objective GFLOP/s (higher is better)".
  std::string describe_method() const;
};

// "1024x1024x1024".
PTXRT_API std::string format_size(const std::vector<std::int64_t>& size);

struct PTXRT_API TuningRecord {
  TuningKey key;
  std::vector<Measurement> measurements;  // one per config, the latest
  std::optional<Measurement> winner;      // the best under key.objective
};

// What a tune was asked, as its caller wrote it down (`ptxrt tune` records its command line's
// options), and whether it finished: an interrupted tune is carried on from this alone.
struct PTXRT_API TuneRequest {
  std::string id;       // unique in its database
  std::string request;  // a JSON object's text
  bool finished = false;
};

enum class ChoiceLevel {
  exact_size,               // this device, this size
  nearest_size,             // this device, the nearest size tuned (per dimension, log scale)
  same_compute_capability,  // another device of the same compute capability
  declared_default,         // nothing tuned: the kernel's declared defaults
};
// "exact", "nearest-size", "same-cc", "default"
PTXRT_API std::string_view to_string(ChoiceLevel level);

struct PTXRT_API TunedChoice {
  TuningConfig config;
  ChoiceLevel level = ChoiceLevel::declared_default;
  std::optional<TuningKey> from;        // the tune the config comes from
  std::optional<Measurement> measured;  // its winner's measurement there
  // "TILE_WIDTH=32 (exact: tuned for matmul 1024x1024x1024 on ...)".
  std::string describe() const;
};

// The config to run `query` with: the winner of the exact key; else of the same device at the
// nearest size; else of another device with the same compute capability at the nearest size;
// else `declared_default`. Only records of the same kernel, source, space and NVRTC version count;
// a record of any L2 mode and objective serves, one of the query's own first at a given size
// (TunedChoice::from says which it was).
PTXRT_API TunedChoice choose(const std::vector<TuningRecord>& records, const TuningKey& query,
                             const TuningConfig& declared_default);

class PTXRT_API TuningDatabase {
 public:
  // $PTXRT_TUNING_DB, else tuning.json in DiskCache::default_directory(). Empty when neither is
  // known.
  static std::filesystem::path default_path();

  // The tunes in `text`, a database file's content, as records() reads them; `path` names the
  // file in the messages. Throws Error (io) naming it when the text is not a whole, well-typed
  // tuning database.
  static std::vector<TuningRecord> parse(std::string_view text, const std::filesystem::path& path);
  // The file's content for `records`, which parse() reads back the same.
  static std::string serialize(const std::vector<TuningRecord>& records);
  // Several databases' records as one (`ptxrt tune merge`): every tune of any of them, in the
  // order first seen, each with the winner of its merged measurements. A config measured in
  // several keeps one measurement, whatever the order of `sources`: a finished one over
  // `started`, an ok one over any other status, of two ok ones the lower median; otherwise
  // (two failures, equal medians) the one from the earlier source.
  static std::vector<TuningRecord> merge(const std::vector<std::vector<TuningRecord>>& sources);

  explicit TuningDatabase(std::filesystem::path path);
  const std::filesystem::path& path() const noexcept { return path_; }

  // Stores `measurement` under `key`, replacing an earlier one of the same config, and updates
  // the key's winner (by key.objective). Creates the file (and its folder) when missing. Throws
  // Error (io) naming the file when it cannot be read, parsed or written.
  void record(const TuningKey& key, const Measurement& measurement) const;
  // Merges `records` into the file: merge() of its content and them, written under the lock as
  // record() writes. Throws Error (io) as record().
  void merge_from(const std::vector<TuningRecord>& records) const;
  // Every tune in the file (none when the file does not exist). Throws Error (io) as record().
  std::vector<TuningRecord> records() const;
  // What is recorded for `key` (empty when nothing).
  std::vector<Measurement> measurements(const TuningKey& key) const;

  // Records `request` (a JSON object's text) as a tune begun and not finished, and returns its
  // id. Throws Error (invalid_argument) for text that is not a JSON object, Error (io) as
  // record(). Files written before requests were recorded read as holding none.
  std::string begin_request(std::string_view request) const;
  // Marks the request `id` finished. Throws Error (not_found) when the file holds no such id.
  void finish_request(std::string_view id) const;
  // Every request recorded, oldest first (none when the file does not exist).
  std::vector<TuneRequest> requests() const;

 private:
  std::filesystem::path path_;
};

}  // namespace ptxrt
