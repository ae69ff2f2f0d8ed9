// One tune as `ptxrt tune` runs it, whichever kind of problem: a builtin one (matmul, sgemm,
// closest-pair) or a kernel file with its problem description (--problem P.json, or the file's
// "// ptxrt: problem" lines). The CLI plans, tunes and reports a TuneJob the same way for both.
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
  TuningConfig default_config;  // what runs untuned, for the winner's speed-up
  // The worker's argv for device `ordinal` (this executable with --worker).
  std::function<std::vector<std::string>(int ordinal)> worker_command;
};

// A kernel file's problem: from --problem, else from the file's manifest lines.
KernelProblem load_kernel_problem(const ProblemSource& source);

// The job of `source` at `size_text` ("W=4096,H=4096" for a kernel file, "1024" or "MxNxK" for
// the builtins; empty: the default size) on `device`, compiling for `target`. A kernel file's
// problem is checked first (check_problem): its mistakes surface here, before any GPU work.
TuneJob make_tune_job(const ProblemSource& source, const std::string& size_text,
                      const DeviceProperties& device, const Target& target,
                      std::optional<std::chrono::milliseconds> compile_timeout);

// The GPU side for the worker process: `source` at `size_text` on `device`.
std::unique_ptr<TuneSession> open_tune_session(const ProblemSource& source,
                                               const std::string& size_text, int device);

}  // namespace ptxrt::cli
