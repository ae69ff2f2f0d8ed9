// Kernel Tuner's files, read and written, so that tunes made with Kernel Tuner can be replayed
// through ptxrt's strategies and recorded in a tuning database, and ptxrt's tunes read by
// Kernel Tuner's plotting and analysis tools:
//   - the cache file that tune_kernel(..., cache="x.json") writes as it goes: every config
//     evaluated, keyed "v1,v2,...", with its time and times or an error marker. Kernel Tuner
//     leaves it without its two closing braces until the tune ends; a file still open (a tune
//     running, or killed) is read as Kernel Tuner reads it, closed;
//   - the results file of store_results(): the best configs (3 % by default) of each device and
//     problem size, without the rest;
//   - the T4 results file (store_output_file, schema 1.0.0): every config evaluated, with its
//     run times, but without the kernel's, the device's or the problem's name.
// Every file is hostile until checked: a regular file of at most 256 MiB, JSON nested at most 64
// deep, no key twice in an object, every field of the type the format gives it, times finite and
// positive, each config's values among its parameter's and its cache key matching them.
//
// Thread safety: plain values and functions without shared state; use from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/tune/tune_replay.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt {

enum class KernelTunerFormat { cache, results, t4_results };
PTXRT_API std::string_view to_string(KernelTunerFormat format);  // "cache", "results", "T4 results"

struct PTXRT_API KernelTunerParameter {
  std::string name;
  // As Kernel Tuner writes them into the kernel's source: 16, 0.5, True, or the string itself.
  std::vector<std::string> values;
};

// One tune of a Kernel Tuner file: one kernel on one device at one problem size.
struct PTXRT_API KernelTunerTune {
  std::string kernel;              // kernel_name; empty in a T4 file, which does not say
  std::string device;              // device_name; empty in a T4 file
  std::vector<std::int64_t> size;  // problem_size; empty when the file does not say ("callable")
  std::string objective;           // "time", "GFLOP/s", ...
  std::vector<KernelTunerParameter> parameters;  // in tune_params_keys' order
  // One per config, in the file's order: ok ones with the median of their run times (Kernel
  // Tuner's `time` is their mean; it stands in where the runs are missing), the runs, their
  // spread and, for an objective other than time, its value as the rate; Kernel Tuner's
  // failures as failed (InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig, named in
  // the detail, as is the time 1e20 older versions wrote for a failure), a T4 config that
  // failed its correctness check as wrong.
  std::vector<Measurement> measurements;
  bool whole = true;  // every config the tune evaluated; a results file keeps the best only
};

struct PTXRT_API KernelTunerFile {
  KernelTunerFormat format = KernelTunerFormat::cache;
  std::vector<KernelTunerTune> tunes;  // one; a results file holds one per device and size
  bool left_open = false;              // a cache without its closing braces: still being written
};

// The most bytes of a Kernel Tuner file read.
inline constexpr std::uint64_t max_kernel_tuner_file_bytes = std::uint64_t{256} << 20;

// The file at `path`, recognised by its fields. Throws Error (io) when it cannot be read or is
// not a regular file, and Error (invalid_argument) naming the file and the field at fault when
// its content is not one of the three formats as described above.
PTXRT_API KernelTunerFile read_kernel_tuner_file(const std::filesystem::path& path);
// The same for a file's `text`; `path` names it in the messages.
PTXRT_API KernelTunerFile parse_kernel_tuner_file(std::string_view text,
                                                  const std::filesystem::path& path);

// `tune` as a replay source: each parameter's values as they are when all are integers, else as
// their position in the parameter's list (their order, which the model strategy learns from).
// Throws Error (invalid_argument) for a tune that is not whole (a results file's) or a parameter
// name that is not a C identifier.
PTXRT_API RecordedTune recorded_tune(const KernelTunerTune& tune);

// The source_hash of every imported tune's key: it marks the tune as Kernel Tuner's, so that
// choose() never hands its configs to a ptxrt kernel, whose key holds the hash of its source.
inline constexpr std::string_view kernel_tuner_source_hash = "kernel-tuner";

// `tune` as a tuning database records it: keyed by its kernel, device and size, the space its
// parameters span ("block_size_x in {32,64}; tile in {1,2}"), kernel_tuner_source_hash, no
// compute capability and NVRTC version 0; its ok measurements' fastest as the winner. Throws
// Error (invalid_argument) when the kernel or the device is empty (a T4 file's: the caller
// names them), or for a results file's tune that holds no time (an objective other than time).
PTXRT_API TuningRecord tuning_record(const KernelTunerTune& tune);

// `record` as a T4 results file (schema 1.0.0), which Kernel Tuner's analysis tools read: every
// finished config with its configuration (integers as numbers), its median time as the `time`
// measurement and as its one runtime (the tuning database keeps the median, not every run), the
// rate when there is one, and its validity (ok and cut: correct; wrong: correctness; a compile
// failure or timeout: compile; any other failure: runtime).
PTXRT_API std::string kernel_tuner_t4_results(const TuningRecord& record);

}  // namespace ptxrt
