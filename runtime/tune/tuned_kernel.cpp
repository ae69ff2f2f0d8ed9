#include "ptxrt/tune/tuned_kernel.hpp"

#include "ptxrt/core/log.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

namespace ptxrt {

namespace {

TunedChoice choose_for(const KernelProblem& problem, const ProblemSizes& sizes,
                       const DeviceProperties& device, const TuningDatabase& database) {
  TunedChoice choice = choose(database.records(), problem_key(problem, sizes, device),
                              problem.fallback_config(problem.complete_sizes(sizes)));
  if (log::enabled(log::Level::info))
    log::write(log::Level::info, "tuned " + problem.name() + " at " +
                                     format_problem_sizes(problem.complete_sizes(sizes)) + ": " +
                                     choice.describe());
  return choice;
}

Module load(const KernelProblem& problem, const ProblemSizes& sizes, const TunedChoice& choice,
            const Context& context, Jit& jit) {
  CompileOptions options = problem.compile_options_at(problem.complete_sizes(sizes));
  options.defines.insert(options.defines.end(), choice.config.defines().begin(),
                         choice.config.defines().end());
  return jit.module(problem.program(), options, context);
}

}  // namespace

TunedKernel::TunedKernel(const KernelProblem& problem, const ProblemSizes& sizes,
                         const Context& context, const TuningDatabase& database, Jit& jit)
    : choice_(choose_for(problem, sizes, context.device().properties(), database)),
      module_(load(problem, sizes, choice_, context, jit)),
      kernel_(module_.kernel(problem.entry())),
      launch_(problem.launch_at(choice_.config, problem.complete_sizes(sizes))) {
  const std::vector<std::size_t> bytes = problem.argument_bytes();
  ArgumentSignature signature{bytes, {}};
  if (kernel_.has_parameter_layout())
    check_arguments_against_layout(kernel_.parameters(), signature, kernel_.describe());
  if (const Verdict fits = launch_geometry_fits(
          problem, choice_.config, problem.complete_sizes(sizes), context.device().properties());
      !fits)
    throw Error(ErrorKind::invalid_argument, fits.reason());
}

}  // namespace ptxrt
