// A KernelProblem on one GPU at one size: its data made and uploaded once, its reference
// computed once, and then any config verified and timed. What a tuning worker serves for a
// problem (problem_tuner.hpp), what `ptxrt run FILE.cu --problem P.json` runs, and, in-process,
// the ProblemMeasurer.
//
// Thread safety: a session and a ProblemMeasurer belong to one thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/tune_worker.hpp"

namespace ptxrt {

// The problem's metrics for `measurement` (ok, of its config at `sizes`): NaN for one whose
// observed quantity the measurement lacks. Throws Error (invalid_argument) naming the metric for
// work its expression cannot compute.
PTXRT_API std::map<std::string, double> metric_values(const KernelProblem& problem,
                                                      const ProblemSizes& sizes,
                                                      const Measurement& measurement);

class PTXRT_API ProblemSession : public TuneSession {
 public:
  // Makes and uploads the data (make_problem_data), checks the argument list against the
  // kernel's parameter layout (count and byte sizes, from the driver) with the default config,
  // and computes the reference: the reference kernel or config run once into poisoned outputs,
  // the files read, or the callback called. Throws Error naming what failed; a reference
  // kernel that fails, or leaves an output NaN, is named as the reference's failure.
  ProblemSession(KernelProblem problem, ProblemSizes sizes, Jit& jit, const Context& context);
  ~ProblemSession() override;
  ProblemSession(const ProblemSession&) = delete;
  ProblemSession& operator=(const ProblemSession&) = delete;

  // Restores the inputs, poisons the outputs (NaN for floats, 0xA5 bytes for integers), runs
  // `config` once and compares every output the reference has (status wrong beyond the
  // tolerance, with the first element at fault in the detail), then times it: CUDA events around
  // the launch alone, the L2 flushed before each run or warm (policy.l2), `policy` deciding how
  // many runs. An ok one then gets its energy window (policy.observe_power) and its metrics.
  Measurement measure(const TuningConfig& config, const TimingPolicy& policy,
                      std::optional<double> best_ms) override;
  std::optional<Measurement> peer(const TimingPolicy& policy) override;
  TunePhases phases() const override;

  struct Run {
    LaunchConfig launch;
    double median_ms = 0.0;
    double rate = 0.0;  // in rate_unit; 0 when the problem states no work
    std::string rate_unit;
    bool verified = false;
    bool passed = true;
    double max_error = 0.0;  // max |actual - expected| over the outputs compared
    // The largest |actual - expected| / (atol + rtol × |expected|): at most 1 when all pass.
    double worst_share = 0.0;
    std::string detail;  // the first element at fault, when one is
  };
  // `config` verified once (when `verify` and the problem has a reference), then one warm-up and
  // `repeats` timed runs, as a tune times them: what `ptxrt run FILE.cu --problem` reports.
  Run run(const TuningConfig& config, int repeats, bool verify);

  const KernelProblem& problem() const noexcept;
  const ProblemSizes& sizes() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A Measurer that times each candidate in this process, through a ProblemSession: what a
// problem with a reference callback needs, and what a caller chooses who trusts its kernel. A
// config that faults the context fails, and so does every config after it (no worker to
// replace): tune_problem isolates configs in worker processes where it can.
class PTXRT_API ProblemMeasurer : public Measurer {
 public:
  ProblemMeasurer(KernelProblem problem, ProblemSizes sizes, Jit& jit, const Context& context,
                  TimingPolicy policy = {});
  // A throw of the config's own (a refused launch, a fault) is a failed measurement.
  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override;

 private:
  ProblemSession session_;
  TimingPolicy policy_;
};

}  // namespace ptxrt
