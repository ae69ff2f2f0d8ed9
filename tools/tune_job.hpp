// One tune as `ptxrt tune` runs it: the KernelProblem of a builtin name (matmul, sgemm,
// closest-pair) or of a kernel file with its problem description (--problem P.json, or the
// file's "// ptxrt: problem" lines), planned, tuned and reported one way. The worker rebuilds the
// problem from the same command line, since a builtin's C++ hooks cannot cross processes.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ptxrt/core/device.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt::cli {

// What names the problem on the command line.
struct ProblemSource {
  std::string kernel;                  // a builtin problem's name or a kernel file
  std::filesystem::path problem_file;  // --problem (absolute); empty: builtin, or the manifest
  std::filesystem::path source;        // matmul --source (absolute)

  bool is_file() const;  // kernel names an existing file
};

struct TuneJob {
  TuningKey key;
  TuningSpace space;
  CandidateCompiler compiler;
  TuningConfig default_config;      // what runs untuned, for the winner's speed-up
  std::vector<TuningConfig> first;  // timed first: problem_first_configs
  // The worker's argv for device `ordinal` (this executable with --worker).
  std::function<std::vector<std::string>(int ordinal)> worker_command;
};

// A kernel file's problem: from --problem, else from the file's manifest lines.
KernelProblem load_kernel_problem(const ProblemSource& source);
// The problem `source` names on `device`: a kernel file's, or a builtin one.
KernelProblem load_tune_problem(const ProblemSource& source, const DeviceProperties& device);
// The sizes of `size_text` for `source`: "W=4096,H=4096" for any problem, also "1024", "MxNxK" or
// "N" for the builtins (apps::parse_tune_size); empty: none given (the problem's defaults).
ProblemSizes tune_sizes(const ProblemSource& source, const std::string& size_text);

// The job of `source` at `size_text` on `device`, compiling for `target`. The problem is checked
// first (check_problem): its mistakes surface here, before any GPU work.
TuneJob make_tune_job(const ProblemSource& source, const std::string& size_text,
                      const DeviceProperties& device, const Target& target,
                      std::optional<std::chrono::milliseconds> compile_timeout);

// The GPU side for the worker process: `source` at `size_text` on `device`.
std::unique_ptr<TuneSession> open_tune_session(const ProblemSource& source,
                                               const std::string& size_text, int device);

}  // namespace ptxrt::cli
