// The autotuner: enumerate a TuningSpace, prune what the constraints and the device rule out,
// compile the rest on a thread pool while the GPU (or several at once) times what is already
// compiled, record every measurement in a TuningDatabase as it lands (so an interrupted tune
// resumes), and report the winner.
//
// The tuner itself never touches a GPU: a CandidateCompiler turns a config into a checked image,
// and a Measurer verifies and times it (on the GPU, in a worker process that a faulting config
// may kill: see tune_worker.hpp; or a fake in tests).
//
// Thread safety: tune() runs on the calling thread and calls the CandidateCompiler from its pool
// (so that must be thread-safe) and the progress callback from the calling thread; one Measurer
// from the calling thread, several each from a thread of its own (one call at a time each).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/device.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/core/verdict.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "ptxrt/tune/tuning_space.hpp"

namespace ptxrt {

enum class TuningStrategy {
  exhaustive,  // every allowed config, in enumeration order
  random,      // in a random order (from the seed); with a budget, a random sample
  occupancy,   // compile all first, then time the highest predicted occupancy (then fewest
               // registers) first: with a budget, the configs most likely to be fast
  model,       // compile in a random order; time first the highest occupancy and a few at
               // random, then the config a cost model (regression trees over the tunables and
               // the compiled resources, refit as times land) predicts fastest, allowing for its
               // uncertainty: with a budget, close to the best at a small share of the space
};
PTXRT_API std::string_view to_string(TuningStrategy strategy);
// "exhaustive" | "random" | "occupancy" | "model"; Error (invalid_argument) listing them
// otherwise.
PTXRT_API TuningStrategy parse_tuning_strategy(std::string_view name);

// How a config is launched, as far as the resource check needs it.
struct PTXRT_API LaunchShape {
  int block_threads = 0;
  std::size_t dynamic_shared_bytes = 0;
};

// Whether a kernel costing `resources` can launch as `shape` on `device`, and if not why: the
// block against the device's and the kernel's own thread limit, registers and shared memory
// against the per-block limits, and whether one block fits on an SM at all (compute_occupancy,
// for the capabilities arch_limits knows).
PTXRT_API Verdict launch_fits(const KernelResources& resources, const LaunchShape& shape,
                              const DeviceProperties& device);

// A config after compilation: ready to time, or why not.
struct PTXRT_API Candidate {
  enum class State { ready, pruned, compile_failed, compile_timeout };
  TuningConfig config;
  State state = State::ready;
  std::string reason;  // for pruned, compile_failed and compile_timeout
  std::optional<KernelResources> resources;
  std::optional<Occupancy> occupancy;
  std::optional<LaunchShape> shape;  // the launch the resources were checked against

  // The register spill bytes ptxas reported (stores + loads); 0 when none or unknown.
  std::size_t spill_bytes() const;
};

// Compiles one config and checks its resources. Called from the compile pool: must be
// thread-safe. Throwing is allowed (the config is recorded as a compile failure).
using CandidateCompiler = std::function<Candidate(const TuningConfig& config)>;

// A CandidateCompiler for `entry` of `program` through `jit` (its memory and disk caches serve
// repeated tunes): `base` plus the config's defines, for base.target (which must be set); the
// resources of the CUBIN, with the log's spills, are checked with launch_fits against
// `device` for the shape `shape` gives. A PTX target is keyed with device.driver_version, as
// Jit::kernel keys it, so that the process that times the config finds this compile cached.
// An `entry` among base.name_expressions is found by its lowered (mangled) name. A compile
// cancelled by base.timeout gives State::compile_timeout. On a tune's compile threads the tune
// stops each compile (in place of base.stop) that is still in flight when it ends: a tune of
// configs that take a minute to compile still ends on time.
PTXRT_API CandidateCompiler jit_candidate_compiler(
    Jit& jit, Program program, CompileOptions base, std::string entry,
    std::function<LaunchShape(const TuningConfig&)> shape, DeviceProperties device);

class PTXRT_API Measurer {
 public:
  virtual ~Measurer() = default;
  // Verifies and times a ready candidate; `best_ms` is the fastest so far, for cutting clearly
  // slower configs early. A config's own failure is a Measurement with that status, not a throw.
  virtual Measurement measure(const Candidate& candidate, std::optional<double> best_ms) = 0;
};

// How one config is timed (by the Measurer, see time_samples).
struct PTXRT_API TimingPolicy {
  // Flush: the L2 written over before every timed run, so that each reads its inputs from memory
  // as a kernel does that runs between others in a program, whatever order the configs run in.
  // Warm: runs back to back, each finding in L2 what the run before left (what Kernel Tuner
  // times, and a loop that runs one kernel again and again sees).
  L2Mode l2 = L2Mode::flush;
  // After timing, runs the config back to back from one step of NVML's energy counter to the
  // first step at least energy_window_ms later (the counter moves about every 100 ms) and
  // reads energy, power, SM clock and temperature through NVML (Measurement::power). Off by
  // default: the window costs time.
  bool observe_power = false;
  double energy_window_ms = 100.0;
  int warmup_runs = 1;
  int min_runs = 5;
  int max_runs = 100;
  double target_spread = 0.02;  // stop once IQR / median is at most this
  double max_seconds = 2.0;     // of sampling per config (after at least cut_after runs)
  double cut_ratio = 1.5;       // cut once the median exceeds best × this (time objective only)
  int cut_after = 3;            // ... after this many runs
};

struct PTXRT_API TimingResult {
  double median_ms = 0.0;
  double spread = 0.0;  // IQR / median
  int runs = 0;
  bool cut = false;        // stopped early: slower than cut_ratio × best
  bool converged = false;  // the spread reached target_spread
};

// Calls sample() (one timed run in ms, with whatever flushing it does before it) warm-up times,
// then until the spread is small, the runs or seconds run out, or the config is cut.
PTXRT_API TimingResult time_samples(const TimingPolicy& policy, std::optional<double> best_ms,
                                    const std::function<double()>& sample);

// The interquartile range over the median of `samples` (linear interpolation), 0 for one sample.
PTXRT_API double relative_spread(std::vector<double> samples);

// One of `count` shares of a tune, so that several processes (MPI ranks, or the jobs of a
// scheduler: `ptxrt tune --shard I/N`) split it: the allowed configs in the strategy's order are
// dealt round robin, this share taking positions index, index + count, ... (occupancy orders
// within the share). Every share enumerates the whole space, so which share a config belongs to
// depends on neither a database's content nor the other shares.
struct PTXRT_API TuneShare {
  std::size_t index = 0;
  std::size_t count = 1;
};

// One compile thread per CPU this process may run on: its affinity mask, which mpirun and Slurm
// narrow, not the machine's count.
PTXRT_API unsigned default_compile_threads();

struct PTXRT_API TuneOptions {
  TuningStrategy strategy = TuningStrategy::exhaustive;
  // Time at most this many configs; a share times its part (budget / count, the first
  // budget % count shares one more).
  std::optional<std::size_t> budget;
  std::optional<double> time_limit_seconds;  // start no config after this much wall time
  std::uint64_t seed = 1;                    // of the random order
  // Configs to time before the strategy's own: compiled first, in this order, and timed as their
  // compiles land, the strategy's picks after them (a problem's suggestions: a heuristic's
  // choices, so that a short tune starts from what it would run untuned). Each must be a config
  // of the space that its constraints allow: tune() throws Error (invalid_argument) naming the
  // first that is not. A share times those dealt to it.
  std::vector<TuningConfig> first;
  // Threads compiling ahead of the measurer; 0 compiles each config on the calling thread just
  // before it is timed (no overlap, for comparison).
  unsigned compile_threads = default_compile_threads();
  // Once this is true (set from any thread or a signal handler), start no further config: the
  // one being measured finishes and is recorded, the rest count as not reached. May be null.
  const std::atomic<bool>* stop = nullptr;
  // Skip the configs the database has a finished measurement of under `key`.
  bool resume = false;
  const TuningDatabase* database = nullptr;  // where measurements go as they land; may be null
  // What the database records under (with timing.l2 and objective as its l2 and objective:
  // recorded_key()).
  TuningKey key;
  TuneShare share;  // the whole tune by default
  // How each config is timed: tune_job and tune_problem hand it to their workers (a Measurer of
  // your own times as it does, and should take it from here).
  TimingPolicy timing;
  // What the winner is best at. Only a time objective cuts clearly slower configs: a slower
  // config may still take the least energy.
  Objective objective;

  // `key` with how this tune times and chooses.
  TuningKey recorded_key() const;
};

struct PTXRT_API TuneResult {
  Measurement measurement;
  std::optional<KernelResources> resources;
  std::optional<Occupancy> occupancy;
  std::optional<LaunchShape> shape;
  double elapsed_seconds = 0.0;  // since the tune started, when this measurement landed
};

struct PTXRT_API TuneReport {
  std::uint64_t space_size = 0;
  std::vector<PrunedConfig> pruned_by_constraints;
  std::vector<PrunedConfig> pruned_by_resources;
  std::vector<PrunedConfig> compile_failures;  // compile timeouts included (their reason says so)
  std::size_t compile_timeouts = 0;            // of the compile failures
  std::size_t compiled = 0;           // compiled without error (resource-pruned ones included)
  std::vector<TuneResult> results;    // this run's measurements, in the order taken
  std::vector<Measurement> resumed;   // finished earlier (database), skipped this time
  std::size_t not_reached = 0;        // left out by the budget or the time limit
  std::optional<Measurement> winner;  // the best ok one by the objective, this run's and resumed
  // Until tune() returns: the wait for the compiles cancelled when it ends counts too.
  double wall_seconds = 0.0;
  // Time inside the measurers (summed over them when several time at once): the rest of the
  // wall time is what compiling and pruning did not hide behind the timing.
  double measuring_seconds = 0.0;
};

struct PTXRT_API TuneProgress {
  std::size_t done = 0;   // configs handled (timed, pruned or failed)
  std::size_t total = 0;  // configs to handle this run
  std::optional<Measurement> best;
  double elapsed_seconds = 0.0;
  double eta_seconds = 0.0;
};

// What a tune would time, without timing anything (`ptxrt tune --dry-run`): the space
// enumerated and pruned by its constraints, every allowed config compiled and pruned by its
// resources, unless a stop request or the time limit ends the compiling first.
struct PTXRT_API TunePlan {
  std::uint64_t space_size = 0;
  std::vector<PrunedConfig> pruned_by_constraints;
  std::vector<PrunedConfig> pruned_by_resources;
  std::vector<PrunedConfig> compile_failures;
  std::vector<Candidate> ready;  // what would be timed, in enumeration order
  std::size_t not_compiled = 0;  // allowed configs left when the compiling was stopped
};
struct PTXRT_API PlanOptions {
  unsigned compile_threads = 0;  // compile on this many threads; 0: on the calling one
  // Once set, no compile starts; those in flight finish. May be null.
  const std::atomic<bool>* stop = nullptr;
  std::optional<double> time_limit_seconds;  // start no compile after this long
  // After each compile, on the calling thread: done of total compiled (best is always empty).
  std::function<void(const TuneProgress&)> progress;
};
PTXRT_API TunePlan plan_tune(const TuningSpace& space, const CandidateCompiler& compile,
                             const PlanOptions& options);

PTXRT_API TuneReport tune(const TuningSpace& space, const CandidateCompiler& compile,
                          Measurer& measurer, const TuneOptions& options,
                          const std::function<void(const TuneProgress&)>& progress = {});

// The same tune timed by several measurers at once (one per GPU of one model): each ready
// candidate goes to whichever measurer is free, with the best time known when it is handed over
// (so a config may run beside a faster one it is not cut by); the budget counts configs handed
// over; results are in the order they land. With one measurer this is the tune above. Both
// return (or throw) only once every measurement handed over has landed and been recorded, in
// the report and the database. A measurer's throw ends the tune: the others finish what they
// hold, their measurements are recorded, and the throw goes on to the caller (the config it was
// timing stays recorded as started). Error (invalid_argument) for no measurers or a null one.
// Both tunes throw Error (invalid_argument) for a share whose index is not below its count.
PTXRT_API TuneReport tune(const TuningSpace& space, const CandidateCompiler& compile,
                          std::span<Measurer* const> measurers, const TuneOptions& options,
                          const std::function<void(const TuneProgress&)>& progress = {});

}  // namespace ptxrt
