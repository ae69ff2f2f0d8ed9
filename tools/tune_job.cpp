#include "tune_job.hpp"

#include "apps/tune/tune_problems.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/problem_session.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

namespace ptxrt::cli {

namespace fs = std::filesystem;

namespace {

std::vector<std::int64_t> builtin_size(const std::string& kernel, const std::string& text) {
  return text.empty() ? apps::default_tune_size(kernel) : apps::parse_tune_size(kernel, text);
}

ProblemSizes problem_sizes(const std::string& text) {
  return text.empty() ? ProblemSizes{} : parse_problem_sizes(text);
}

std::vector<std::string> worker_base(const ProblemSource& source, const std::string& size_text,
                                     int ordinal) {
  std::vector<std::string> command{fs::read_symlink("/proc/self/exe").string(), "tune",
                                   source.kernel, "--worker", "--device", std::to_string(ordinal)};
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
  if (!source.problem_file.empty()) return KernelProblem::from_file(source.problem_file, source.kernel);
  return KernelProblem::from_manifest(Program::from_file(source.kernel));
}

TuneJob make_tune_job(const ProblemSource& source, const std::string& size_text,
                      const DeviceProperties& device, const Target& target,
                      std::optional<std::chrono::milliseconds> compile_timeout) {
  const auto worker = [source, size_text](int ordinal) {
    return worker_base(source, size_text, ordinal);
  };
  if (source.is_file()) {
    const KernelProblem problem = load_kernel_problem(source);
    const ProblemSizes sizes = problem.complete_sizes(problem_sizes(size_text));
    check_problem(Jit::shared(), problem, sizes, target, device);
    return {problem_key(problem, sizes, device), problem_space(problem, sizes, device),
            problem_compiler(Jit::shared(), problem, sizes, target, device, compile_timeout),
            problem.fallback_config(sizes), worker};
  }
  const apps::TuneProblem problem = apps::make_tune_problem(
      source.kernel, builtin_size(source.kernel, size_text), device, source.source);
  CompileOptions base;
  base.target = target;
  base.timeout = compile_timeout;
  return {apps::tune_key(problem, device), problem.space,
          jit_candidate_compiler(Jit::shared(), problem.program, base, problem.entry,
                                 problem.shape, device),
          problem.space.default_config(), worker};
}

std::unique_ptr<TuneSession> open_tune_session(const ProblemSource& source,
                                               const std::string& size_text, int ordinal) {
  const Device device = Device::get(ordinal);
  const Context context = Context::primary(device);
  if (source.is_file())
    return std::make_unique<ProblemSession>(load_kernel_problem(source), problem_sizes(size_text),
                                            Jit::shared(), context);
  const apps::TuneProblem problem =
      apps::make_tune_problem(source.kernel, builtin_size(source.kernel, size_text),
                              device.properties(), source.source);
  return problem.open_session(Jit::shared(), context);
}

}  // namespace ptxrt::cli
