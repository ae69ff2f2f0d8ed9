// `ptxrt tune`'s arguments and how its tunes run: in this process (tools/tune.cpp), or as one rank
// of an MPI job (`--mpi`, tools/mpi/tune_ranks.cpp), which differs only in what it hands
// TuneRun.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ptxrt/core/device.hpp"
#include "ptxrt/tune/job_tuner.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "tune_report.hpp"

namespace ptxrt::cli {

struct TuneArguments {
  std::string kernel;
  std::vector<std::string> sizes;
  std::string source;
  std::string problem;  // --problem: a kernel file's problem description
  std::string strategy = "model";
  std::size_t budget = 0;
  double time_limit = 0.0;
  std::uint64_t seed = 1;
  std::string database;
  bool resume = false;
  bool json = false;
  bool no_parallel_compile = false;
  std::optional<int> device;  // --device; absent: 0 (with --mpi: the node-local rank's)
  std::string devices;        // --devices: "all" or "0,1"; empty: --device alone
  std::string shard;          // --shard I/N; empty: the whole tune
  bool mpi = false;
  int silence_limit = 600;         // seconds, with --mpi
  double compile_timeout = 120.0;  // seconds
  bool dry_run = false;
  std::string arch = "auto";       // --dry-run's target
  int sm_count = 0;                // --dry-run's SM count; 0: unknown
  std::string l2 = "flush";        // --l2: flush | warm
  std::string observe = "none";    // --observe: none | power
  std::string objective = "time";  // --objective: time | energy | power | a problem's metric
  bool worker = false;
  std::string request;    // the options as given, as the database records them (JSON)
  std::string continues;  // --continues ID: the recorded request this run carries on
};

// The devices --device or --devices names; nothing for "all", or for neither (with --mpi, where
// each rank then takes its node-local rank's GPU). Asks no GPU.
std::optional<std::vector<int>> listed_devices(const TuneArguments& arguments);

// How the tunes of one `ptxrt tune` run.
struct TuneRun {
  std::vector<DeviceProperties> devices;  // timed here, one worker each (of one model)
  unsigned compile_threads = 0;  // TuneOptions::compile_threads unless --no-parallel-compile
  TuneFunction tune;             // empty: ptxrt::tune; ptxrt::mpi::tune for the ranks of a job
  bool prints = true;            // the reports and the peer (MPI: rank 0 alone)
  // Whether any process of the run says true (MPI: any rank), so that all stop at one size.
  std::function<bool(bool)> any;
  // What the printed setting says of the whole run (MPI: every rank's workers and device).
  std::function<void(TuneSetting&)> complete_setting;
};

// One tune per size of `arguments`, as `run` says, recorded in the database with its request
// (rank 0's, with MPI) and, once every size is tuned, as finished. Throws CLI::RuntimeError with
// the exit code of an interrupted tune (having printed how to resume it) or of a size without a
// winner.
void run_tunes(const TuneArguments& arguments, const TuneRun& run);

// --mpi: run_tunes as one rank of an MPI job (tools/mpi/tune_ranks.cpp), or, in a ptxrt built
// without MPI, Error (invalid_argument) saying so (tools/mpi/without_mpi.cpp).
void run_tunes_as_rank(const TuneArguments& arguments);

}  // namespace ptxrt::cli
