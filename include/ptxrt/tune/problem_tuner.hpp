// Tuning a KernelProblem: its space with the launch geometry as a constraint, the compiler of
// its configs, its database key, the checks that need no GPU, and the one call that tunes it,
// each config in a worker process of the calling program:
//
//   int main(int argc, char** argv) {
//     if (std::optional<int> code = ptxrt::serve_tune_worker(argc, argv, resolver)) return *code;
//     ...
//     ptxrt::ProblemTuneOptions options;
//     options.tune.database = &database;
//     options.devices = {0, 1};  // several at once, of one model
//     ptxrt::TuneOutcome outcome = ptxrt::tune_problem(problem, {{"n", 1 << 24}}, options);
//
// Stopping (TuneOptions::stop, from a signal handler), a share of the configs
// (TuneOptions::share) and resuming (TuneOptions::resume) work as tune_job's (job_tuner.hpp).
//
// Thread safety: the functions are as thread-safe as the Jit they are given; tune_problem runs
// a tune (tuner.hpp) on the calling thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>

#include "ptxrt/core/device.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/target.hpp"
#include "ptxrt/core/verdict.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/job_tuner.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt {

// The limits of compute capability major.minor as a device would report them (the occupancy
// table's, and CUDA's block and grid limits), for planning without that device. Throws Error
// (invalid_argument) for a capability the occupancy table does not know.
PTXRT_API DeviceProperties device_model(int major, int minor);

// Whether `config` can launch as the problem's geometry makes it at `sizes` on `device`, and if
// not why (a dimension below 1 or above the device's, too many threads, too much shared memory).
PTXRT_API Verdict launch_geometry_fits(const KernelProblem& problem, const TuningConfig& config,
                                       const ProblemSizes& sizes, const DeviceProperties& device);

// The problem's space at `sizes`, with its launch geometry on `device` as the last constraint
// ("launch geometry: ..." in what it prunes).
PTXRT_API TuningSpace problem_space(const KernelProblem& problem, const ProblemSizes& sizes,
                                    const DeviceProperties& device);

// The problem's first configs at `sizes` (KernelProblem::try_first) that `space` allows, each
// once, in their order: TuneOptions::first for a tune of it. None where it has no such hook.
PTXRT_API std::vector<TuningConfig> problem_first_configs(const KernelProblem& problem,
                                                          const ProblemSizes& sizes,
                                                          const TuningSpace& space);

// What runs untuned at `sizes`, which a tune's report measures the winner against: the first of
// the problem's first configs (a heuristic's pick), whether or not its space holds it, else its
// fallback config.
PTXRT_API TuningConfig problem_untuned_config(const KernelProblem& problem,
                                              const ProblemSizes& sizes);

// Compiles each config for `target` (the fixed defines, the config's, the entry and symbols as
// name expressions) and checks its resources against `device` for the config's launch
// (jit_candidate_compiler), cancelling a compile that runs past `timeout`.
PTXRT_API CandidateCompiler
problem_compiler(Jit& jit, const KernelProblem& problem, const ProblemSizes& sizes,
                 const Target& target, const DeviceProperties& device,
                 std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// Its key in a tuning database: the problem's name, key_hash(), the space, the device, NVRTC
// and the size values in declared order.
PTXRT_API TuningKey problem_key(const KernelProblem& problem, const ProblemSizes& sizes,
                                const DeviceProperties& device);

// What can be found wrong before a GPU is touched, each as one Error naming the place: sizes
// missing or unknown; no config the constraints allow, or none whose geometry the device takes;
// the entry not in the file (Error (not_found) listing its kernels, demangled) or a symbol not
// in it; arguments that do not match the kernel's parameters (their number and sizes where the
// entry's C++ signature tells them, their total bytes against the CUBIN's parameter bytes
// always); a reference kernel that does not compile or is not found; data beyond the device's
// memory or data files of the wrong size (check_problem_data, which makes no data). Compiles the
// fallback config (and the reference) for `target` through `jit`.
PTXRT_API void check_problem(Jit& jit, const KernelProblem& problem, const ProblemSizes& sizes,
                             const Target& target, const DeviceProperties& device);

// The objective `name` for `problem`: time, energy or power (lower is better), or one of its
// metrics, in the metric's direction. Error (invalid_argument) naming `user` (the flag or field)
// and listing the objectives there are otherwise.
PTXRT_API Objective problem_objective(const KernelProblem& problem, std::string_view name,
                                      std::string_view user);
// `policy` as a tune of `problem` for `objective` needs it: observing power when the objective
// takes energy or power. Then checks that every metric finds what it divides by (Error
// (invalid_argument) naming a metric per energy_j or power_w when power is not observed) and,
// when power is observed, that NVML is usable (Error (no_driver) naming `user`, what asked).
PTXRT_API TimingPolicy timing_for(const KernelProblem& problem, TimingPolicy policy,
                                  const Objective& objective, std::string_view user);

struct PTXRT_API ProblemTuneOptions {
  TuneOptions tune = [] {
    TuneOptions options;
    options.strategy = TuningStrategy::model;
    return options;
  }();
  int device = 0;            // the ordinal to tune on, when `devices` is empty
  std::vector<int> devices;  // several timing at once, one worker each, all of one model
  std::optional<std::chrono::milliseconds> compile_timeout = std::chrono::seconds(120);
  // Each config in a worker process (this program, started again: it must call
  // serve_tune_worker at the top of main), so that a faulting config costs a worker. A problem
  // with C++ callbacks goes to workers only with rebuilt_by_name; else it is measured in this
  // process whatever this says.
  bool isolated = true;
  // The worker's serve_tune_worker has a resolver that rebuilds this problem from its name:
  // then a problem with C++ callbacks, which cannot be sent, is isolated too.
  bool rebuilt_by_name = false;
  // The program started as each worker: empty for this process's own executable. A host that
  // cannot answer as a worker itself (an interpreter, a plugin) names a program that calls
  // serve_tune_worker at the top of main and does nothing else.
  std::filesystem::path worker_program;
};

// Tunes `problem` at `sizes` on options.devices (else options.device): check_problem and
// timing_for, then tune_job with the problem's space, compiler and key (the peer is the
// problem's, when it declares one), timing problem_first_configs first where options.tune.first
// is empty. Throws what check_problem throws, Error (invalid_argument) for
// devices of several models, and Error when a device or a worker cannot be used.
PTXRT_API TuneOutcome tune_problem(const KernelProblem& problem, const ProblemSizes& sizes,
                                   ProblemTuneOptions options,
                                   const std::function<void(const TuneProgress&)>& progress = {});

// Rebuilds, in a worker process, a problem with C++ callbacks that a tune started with
// rebuilt_by_name: the problem named `name` (its KernelProblem::name()) for `device`, or nothing
// for a name it does not know. The sizes come separately, as for any problem.
using ProblemResolver = std::function<std::optional<KernelProblem>(std::string_view name,
                                                                   const DeviceProperties& device)>;

// When this process was started by tune_problem as its worker, serves as one (on stdin and
// stdout) and returns the exit code for main to return; otherwise returns nothing at once. A
// problem sent by name is rebuilt through `resolver` (a worker without one, or whose resolver does
// not know the name, fails to start, saying so).
PTXRT_API std::optional<int> serve_tune_worker(int argc, char** argv,
                                               const ProblemResolver& resolver = {});

}  // namespace ptxrt
