#include "ptxrt/tune/job_tuner.hpp"

#include <atomic>
#include <charconv>
#include <chrono>
#include <memory>

#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "support/quoted.hpp"

namespace ptxrt {

TuneShare parse_tune_share(std::string_view text, std::string_view user) {
  const auto number = [](std::string_view digits, std::size_t& value) {
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
  };
  const std::size_t slash = text.find('/');
  TuneShare share;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), share.index) ||
      !number(text.substr(slash + 1), share.count) || share.count == 0 ||
      share.index >= share.count)
    throw Error(ErrorKind::invalid_argument,
                std::string(user) + " " + detail::quoted(text) +
                    ": expected I/N, share I of N counted from 0 (0/4, 1/4, 2/4 and 3/4 make a "
                    "whole tune)");
  return share;
}

TuneOutcome tune_job(const TuneJob& job, const JobTuneOptions& options,
                     const std::function<void(const TuneProgress&)>& progress) {
  if (options.devices.empty())
    throw Error(ErrorKind::invalid_argument, "tune_job: no device to time on");
  TuneOptions tune_options = options.tune;
  tune_options.key = job.key;
  const std::vector<std::string> timing = timing_arguments(tune_options.timing);
  std::vector<std::unique_ptr<WorkerMeasurer>> workers;
  std::vector<Measurer*> measurers;
  for (int ordinal : options.devices) {
    std::vector<std::string> command = job.worker_command(ordinal);
    command.insert(command.end(), timing.begin(), timing.end());
    workers.push_back(std::make_unique<WorkerMeasurer>(std::move(command), ordinal));
    workers.back()->start();
    measurers.push_back(workers.back().get());
  }
  std::atomic<std::chrono::steady_clock::rep> compile_ticks = 0;
  const CandidateCompiler compile = [&job, &compile_ticks](const TuningConfig& config) {
    const auto start = std::chrono::steady_clock::now();
    Candidate candidate = job.compiler(config);
    compile_ticks += (std::chrono::steady_clock::now() - start).count();
    return candidate;
  };
  TuneOutcome outcome{.key = tune_options.recorded_key(),
                      .default_config = job.default_config,
                      .devices = options.devices,
                      .compile_threads = tune_options.compile_threads};
  outcome.report =
      options.tune_function
          ? options.tune_function(job.space, compile, measurers, tune_options, progress)
          : tune(job.space, compile, measurers, tune_options, progress);
  outcome.stopped = tune_options.stop != nullptr && tune_options.stop->load();
  if (options.measure_peer && outcome.report.winner && !outcome.stopped)
    outcome.peer = workers.front()->peer();
  for (const auto& worker : workers) {
    outcome.workers_started += worker->workers_started();
    outcome.phases += worker->phases();
  }
  outcome.phases.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::duration(compile_ticks.load()))
          .count();
  return outcome;
}

}  // namespace ptxrt
