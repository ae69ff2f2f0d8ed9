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

  bool finished() const noexcept { return status != MeasurementStatus::started; }
};

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

  bool operator==(const TuningKey&) const = default;
  // "matmul 1024x1024x1024 on NVIDIA H100 80GB HBM3 (9.0)".
  std::string describe() const;
};

// "1024x1024x1024".
PTXRT_API std::string format_size(const std::vector<std::int64_t>& size);

struct PTXRT_API TuningRecord {
  TuningKey key;
  std::vector<Measurement> measurements;  // one per config, the latest
  std::optional<Measurement> winner;
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
// else `declared_default`. Only records of the same kernel, source, space and NVRTC version count.
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
  // the key's winner. Creates the file (and its folder) when missing. Throws Error (io) naming
  // the file when it cannot be read, parsed or written.
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
