#include "tune_job.hpp"

#include "apps/tune/tune_problems.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/problem_session.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

namespace ptxrt::cli {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> worker_base(const ProblemSource& source, const std::string& size_text,
                                     int ordinal) {
  std::vector<std::string> command{fs::read_symlink("/proc/self/exe").string(),
                                   "tune",
                                   source.kernel,
                                   "--worker",
                                   "--device",
                                   std::to_string(ordinal)};
  if (!size_text.empty()) command.insert(command.end(), {"--size", size_text});
  if (!source.source.empty()) command.insert(command.end(), {"--source", source.source.string()});
  if (!source.problem_file.empty())
    command.insert(command.end(), {"--problem", source.problem_file.string()});
  return command;
}

}  // namespace

bool ProblemSource::is_file() const {
  // A FIFO or a device at the path is a kernel file too, which reading then refuses by name.
  std::error_code error;
  return fs::exists(kernel, error) && !fs::is_directory(kernel, error);
}

KernelProblem load_kernel_problem(const ProblemSource& source) {
  if (!source.problem_file.empty())
    return KernelProblem::from_file(source.problem_file, source.kernel);
  return KernelProblem::from_manifest(Program::from_file(source.kernel));
}

KernelProblem load_tune_problem(const ProblemSource& source, const DeviceProperties& device) {
  if (source.is_file()) return load_kernel_problem(source);
  return apps::builtin_tune_problem(source.kernel, device, source.source);
}

ProblemSizes tune_sizes(const ProblemSource& source, const std::string& size_text) {
  if (source.is_file()) return size_text.empty() ? ProblemSizes{} : parse_problem_sizes(size_text);
  return apps::parse_tune_size(source.kernel, size_text);
}

TuneJob make_tune_job(const ProblemSource& source, const std::string& size_text,
                      const DeviceProperties& device, const Target& target,
                      std::optional<std::chrono::milliseconds> compile_timeout) {
  const KernelProblem problem = load_tune_problem(source, device);
  const ProblemSizes sizes = problem.complete_sizes(tune_sizes(source, size_text));
  check_problem(Jit::shared(), problem, sizes, target, device);
  TuningSpace space = problem_space(problem, sizes, device);
  std::vector<TuningConfig> first = problem_first_configs(problem, sizes, space);
  return {problem_key(problem, sizes, device),
          std::move(space),
          problem_compiler(Jit::shared(), problem, sizes, target, device, compile_timeout),
          problem_untuned_config(problem, sizes),
          std::move(first),
          [source, size_text](int ordinal) { return worker_base(source, size_text, ordinal); }};
}

std::unique_ptr<TuneSession> open_tune_session(const ProblemSource& source,
                                               const std::string& size_text, int ordinal) {
  const Device device = Device::get(ordinal);
  return std::make_unique<ProblemSession>(load_tune_problem(source, device.properties()),
                                          tune_sizes(source, size_text), Jit::shared(),
                                          Context::primary(device));
}

}  // namespace ptxrt::cli
