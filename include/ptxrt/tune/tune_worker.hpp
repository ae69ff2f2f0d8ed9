// The tuner's GPU side in a process of its own. A config that faults the context (a sticky error
// on current drivers poisons the whole process), aborts or hangs takes its worker down with it;
// the parent records that config as crashed and starts a fresh worker for the rest.
//
// The parent starts its worker when the tune starts (WorkerMeasurer::start), so that the worker's
// process, context, data and reference are made while the first configs compile.
//
// Protocol, one JSON object per line over the worker's stdin and stdout:
//   worker → parent  {"ready": true} once inputs and reference are made, or {"error": "..."}
//   parent → worker  {"config": {"NAME": "VALUE", ...}, "best_ms": 1.25}   (best_ms may be null)
//                    {"peer": true}
//   worker → parent  {"measurement": {...}, "restart": false}  (measurement_to_json's form;
//                    "restart": the worker is exiting because its context is no longer usable;
//                    optional "phases": the seconds spent since the last answer, as TunePhases'
//                    reference_seconds, verification_seconds and timing_seconds)
//                    {"peer": null} when the problem has no peer
//
// The worker is any program that answers so: `ptxrt tune ... --worker` for the CLI's problems,
// or an application's own executable for a KernelProblem it tunes (serve_tune_worker in
// problem_tuner.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuner.hpp"

namespace ptxrt {

namespace detail {
class ChildProcess;
}

// Where a tune's time went besides the tuner's own waiting, summed over its configs and workers
// (seconds): what `ptxrt tune --json` breaks its wall time into ("phases").
struct PTXRT_API TunePhases {
  double compile_seconds = 0.0;  // in the compiler, summed over its threads (mostly beside timing)
  // From starting a worker to its ready answer: the process, the driver, the context, the data and
  // the reference; and of that, what a config waited for (the rest was hidden behind compiles).
  double worker_start_seconds = 0.0;
  double worker_start_wait_seconds = 0.0;
  double reference_seconds = 0.0;     // computing the reference, in the worker
  double verification_seconds = 0.0;  // the checked runs and their comparisons
  double timing_seconds = 0.0;        // the timed runs, with their warm-up runs and L2 flushes

  TunePhases& operator+=(const TunePhases& other);
};

// Inputs, reference and timing of one tuning problem at one size on one GPU: what a worker
// serves. Used from one thread.
class PTXRT_API TuneSession {
 public:
  virtual ~TuneSession() = default;
  // Runs `config` once into a poisoned output and compares it with the reference (status wrong
  // beyond the tolerance), then times it with `policy`. Throws what the runtime throws (a fault).
  virtual Measurement measure(const TuningConfig& config, const TimingPolicy& policy,
                              std::optional<double> best_ms) = 0;
  // The library peer on the same inputs (cuBLAS for the matrix products), when there is one.
  virtual std::optional<Measurement> peer(const TimingPolicy& policy) = 0;
  // The seconds spent on the reference, verifying and timing since the session opened (the
  // other fields 0); nothing known by default.
  virtual TunePhases phases() const { return {}; }
};

// The parent's Measurer: hands each config to a worker started from `command` (the worker's
// argv, no shell), restarting it after a crash, a hang or a sticky error. `device`, the ordinal
// the command's worker runs on, goes into each of its measurements. One per GPU lets a tune time
// on several at once (tune() with several measurers). Used from one thread at a time.
class PTXRT_API WorkerMeasurer : public Measurer {
 public:
  WorkerMeasurer(std::vector<std::string> command, std::optional<int> device = std::nullopt,
                 std::chrono::seconds config_timeout = std::chrono::seconds(300),
                 std::chrono::seconds startup_timeout = std::chrono::seconds(600));
  ~WorkerMeasurer() override;
  WorkerMeasurer(const WorkerMeasurer&) = delete;
  WorkerMeasurer& operator=(const WorkerMeasurer&) = delete;

  // Starts the worker process without waiting for it to get ready (measure waits), so that its
  // setup overlaps what the caller does meanwhile. Does nothing when one is running.
  void start();
  // Throws Error (driver) when a fresh worker cannot get ready (no GPU, a failing reference):
  // that is no config's fault and would fail every config alike.
  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override;
  // The problem's peer timed by the worker, or nothing (also when that fails: said as a warning).
  std::optional<Measurement> peer();
  int workers_started() const noexcept { return workers_started_; }
  // Its workers' start-up, reference, verification and timing so far (compile_seconds 0).
  const TunePhases& phases() const noexcept { return phases_; }

 private:
  detail::ChildProcess& worker();
  // The worker's answer to `request`, or nothing when it died or hung (then it is gone).
  std::optional<std::string> ask(const std::string& request, std::string& failure);

  // measure() without the device's stamp.
  Measurement measure_on_worker(const Candidate& candidate, std::optional<double> best_ms);

  std::vector<std::string> command_;
  std::optional<int> device_;
  std::chrono::seconds config_timeout_;
  std::chrono::seconds startup_timeout_;
  std::unique_ptr<detail::ChildProcess> worker_;
  bool ready_ = false;  // worker_ answered ready
  std::chrono::steady_clock::time_point started_at_;
  int workers_started_ = 0;
  TunePhases phases_;
};

// The words of a worker's command line that carry `policy` ("--l2", "warm", and "--observe",
// "power" when it observes power): tune_job appends them to each worker's command, and a worker
// program reads them back (parse_l2_mode, parse_observation) to time as the tune asks.
PTXRT_API std::vector<std::string> timing_arguments(const TimingPolicy& policy);
// "power" as TimingPolicy::observe_power on, "none" as off; Error (invalid_argument) naming
// `user` (the flag) otherwise.
PTXRT_API bool parse_observation(std::string_view text, std::string_view user);

// Called by the worker process before it opens its session. It ignores SIGINT and SIGTERM: a
// Ctrl-C reaches the terminal's whole foreground process group, and the parent stops after the
// config in progress, which needs its worker to finish it; the parent ends the worker when it
// is done. And it dies with its parent (PR_SET_PDEATHSIG, bound to the parent's thread that
// started it): a tune that is killed or crashes leaves no worker running on the GPU. A parent
// that died before this call left the worker a closed socket, which ends it at its next answer.
PTXRT_API void tie_worker_to_parent();

// The worker's loop: opens the session (everything that touches the GPU happens in `open`, so
// that its failure is reported as {"error"}), says ready, and answers requests from `in` on `out`
// until `in` ends (returns 0), setup fails (1) or a measurement throws (1: a worker that
// caught a fault may hold a poisoned context, so it exits after answering).
PTXRT_API int run_tune_worker(const std::function<std::unique_ptr<TuneSession>()>& open,
                              const TimingPolicy& policy, std::istream& in, std::ostream& out);

}  // namespace ptxrt
