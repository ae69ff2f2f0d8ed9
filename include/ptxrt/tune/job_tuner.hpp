// Tuning one problem at one size on several devices at once, each config verified and timed in a
// worker process of one of them; stopping on request, a share of the configs, resuming, and the
// problem's peer. tune_problem() and `ptxrt tune` both tune this way:
//
//   ptxrt::JobTuneOptions options;
//   options.devices = {0, 1};             // one worker each, devices of one model
//   options.tune.stop = &stop_requested;  // an atomic a SIGINT handler sets
//   options.tune.share = {.index = 1, .count = 4};
//   options.tune.database = &database;
//   options.tune.resume = true;           // skip what the database has finished
//   ptxrt::TuneOutcome outcome = ptxrt::tune_job(job, options);
//
// Thread safety: tune_job runs on the calling thread (with the tuner's compile threads and one
// thread per device); `job` and `options` must outlive the call and are only read.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt {

// One tune, whatever made it (a KernelProblem in tune_problem, a builtin problem in the CLI).
struct PTXRT_API TuneJob {
  TuningKey key;
  TuningSpace space;
  CandidateCompiler compiler;
  TuningConfig default_config;  // what runs untuned, for the winner's speed-up
  // The argv of a worker process timing on device `ordinal` (see WorkerMeasurer).
  std::function<std::vector<std::string>(int ordinal)> worker_command;
};

// How the configs are handed to the measurers: tune() when empty; an MPI job passes
// ptxrt::mpi::tune, which shares them among its ranks.
using TuneFunction =
    std::function<TuneReport(const TuningSpace& space, const CandidateCompiler& compile,
                             std::span<Measurer* const> measurers, const TuneOptions& options,
                             const std::function<void(const TuneProgress&)>& progress)>;

struct PTXRT_API JobTuneOptions {
  // The tuner's options: strategy, budget, time limit, share, stop, resume, database, timing
  // (each worker's command line carries it: timing_arguments) and objective. Its key is replaced
  // by the job's.
  TuneOptions tune;
  std::vector<int> devices{0};  // ordinals timing at once, one worker each, of one model
  // Time the problem's peer (a library's answer to it) once the tune finished with a winner.
  bool measure_peer = true;
  TuneFunction tune_function;
};

// What a tune came to: what a report of it says.
struct PTXRT_API TuneOutcome {
  TuningKey key;
  TuneReport report;
  std::optional<Measurement> peer;  // with measure_peer, when the worker could time it
  TuningConfig default_config;
  std::vector<int> devices;  // the ordinals that timed, one worker each
  int workers_started = 0;   // more than the devices when configs crashed workers
  unsigned compile_threads = 0;
  bool stopped = false;  // the stop request arrived: the configs left count as not reached
  TunePhases phases;     // where the time went: compiling, and the workers' part of measuring
};

// "I/N" as share I of N (TuneOptions::share). Error (invalid_argument) naming `user` (the option
// or field that gave the text) for anything else.
PTXRT_API TuneShare parse_tune_share(std::string_view text, std::string_view user);

// Tunes `job` on options.devices, a WorkerMeasurer each (started at once, so that the workers get
// ready while the first configs compile), recording into options.tune.database
// under job.key. Throws what the tuner throws, and Error (driver) when a worker cannot start.
PTXRT_API TuneOutcome tune_job(const TuneJob& job, const JobTuneOptions& options,
                               const std::function<void(const TuneProgress&)>& progress = {});

}  // namespace ptxrt
