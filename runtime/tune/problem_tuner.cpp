#include "ptxrt/tune/problem_tuner.hpp"

#include <cxxabi.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/tune/device_selection.hpp"
#include "ptxrt/tune/launch_timer.hpp"
#include "ptxrt/tune/problem_session.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "support/quoted.hpp"
#include "tune/problem_checks.hpp"

namespace ptxrt {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view worker_flag = "--ptxrt-tune-worker";
constexpr std::string_view geometry_constraint = "launch geometry";

std::string demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;
}

// The parameter types of a demangled signature ("scale<float>(float*, int)"): the last
// parenthesized list, split at its top-level commas. Nothing when it has no list (extern "C").
std::optional<std::vector<std::string>> parameter_types(const std::string& signature) {
  if (signature.empty() || signature.back() != ')') return std::nullopt;
  int depth = 0;
  std::size_t open = std::string::npos;
  for (std::size_t i = signature.size(); i-- > 0;) {
    if (signature[i] == ')') ++depth;
    if (signature[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string::npos) return std::nullopt;
  std::vector<std::string> types;
  std::string current;
  depth = 0;
  for (char c : signature.substr(open + 1, signature.size() - open - 2)) {
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      types.push_back(current);
      current.clear();
    } else if (c != ' ' || !current.empty()) {
      current += c;
    }
  }
  if (!current.empty()) types.push_back(current);
  return types;
}

// The bytes a parameter of a demangled type takes, where the type says so plainly.
std::optional<std::size_t> parameter_bytes(const std::string& type) {
  if (type.ends_with('*') || type.ends_with('&')) return sizeof(void*);
  static const std::pair<std::string_view, std::size_t> sizes[] = {
      {"bool", 1},
      {"char", 1},
      {"signed char", 1},
      {"unsigned char", 1},
      {"short", 2},
      {"unsigned short", 2},
      {"int", 4},
      {"unsigned int", 4},
      {"float", 4},
      {"long", 8},
      {"unsigned long", 8},
      {"long long", 8},
      {"unsigned long long", 8},
      {"double", 8},
  };
  for (const auto& [name, bytes] : sizes)
    if (type == name) return bytes;
  return std::nullopt;
}

// Bytes the arguments take laid out as the parameter bank lays them: each at its own alignment.
std::size_t laid_out_bytes(const std::vector<std::size_t>& sizes) {
  std::size_t offset = 0;
  for (std::size_t size : sizes) offset = (offset + size - 1) / size * size + size;
  return offset;
}

std::string list_of(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

struct Compiled {
  std::shared_ptr<const Image> image;
  KernelResources entry;
};

// `entry` of `program` compiled with `options`; an entry or symbol NVRTC cannot resolve is
// told by name, an entry with the file's kernels listed.
Compiled compile_entry(Jit& jit, const Program& program, CompileOptions options,
                       const std::string& entry, const std::string& who) {
  std::shared_ptr<const Image> image;
  try {
    image = jit.image(program, options);
  } catch (const Error& error) {
    const std::optional<std::string> name = detail::unresolved_name(error);
    if (!name) throw;
    if (name->starts_with('&')) {
      const std::string variable = name->substr(name->find_first_not_of("& "));
      throw Error(ErrorKind::not_found, who + ": " + program.name() +
                                            " has no __constant__ or __device__ variable '" +
                                            variable + "'");
    }
    options.name_expressions.clear();
    std::vector<std::string> kernels;
    for (const KernelResources& kernel : read_cubin_resources(jit.image(program, options)->data))
      kernels.push_back(demangle(kernel.name));
    throw Error(ErrorKind::not_found, who + ": " + program.name() + " has no kernel '" + *name +
                                          "' (its kernels: " + list_of(kernels) + ")");
  }
  std::string symbol = entry;
  for (const auto& [expression, lowered] : image->lowered_names)
    if (expression == entry) symbol = lowered;
  for (const KernelResources& kernel : read_cubin_resources(image->data))
    if (kernel.name == symbol) return {image, kernel};
  throw Error(ErrorKind::not_found,
              who + ": no kernel " + symbol + " in the CUBIN of " + program.name());
}

// The arguments at `positions` against the compiled entry's parameters.
void check_arguments(const KernelProblem& problem, const Compiled& compiled,
                     const std::vector<std::size_t>& positions, const std::string& who) {
  const std::vector<std::size_t> all = problem.argument_bytes();
  std::vector<std::size_t> bytes;
  std::vector<std::string> names;
  for (std::size_t position : positions) {
    bytes.push_back(all[position]);
    names.push_back(problem.arguments()[position].name);
  }
  const std::string signature = demangle(compiled.entry.name);
  if (const auto types = parameter_types(signature)) {
    if (types->size() != bytes.size())
      throw Error(ErrorKind::invalid_argument,
                  who + ": " + signature + " takes " + std::to_string(types->size()) +
                      " parameter(s), but the problem gives " + std::to_string(bytes.size()) +
                      " argument(s) (" + list_of(names) + ")");
    for (std::size_t i = 0; i < bytes.size(); ++i)
      if (const auto expected = parameter_bytes((*types)[i]); expected && *expected != bytes[i])
        throw Error(ErrorKind::invalid_argument, who + ": argument " + std::to_string(i) + " '" +
                                                     names[i] + "' is " + std::to_string(bytes[i]) +
                                                     " bytes, but parameter " + std::to_string(i) +
                                                     " of " + signature + " is a " + (*types)[i] +
                                                     " of " + std::to_string(*expected));
  }
  // The CUBIN holds the parameters' total, which an extern "C" entry leaves as the only check
  // without a GPU (a run checks each against the driver's parameter layout).
  const std::size_t given = laid_out_bytes(bytes);
  if (compiled.entry.param_bytes != 0 && compiled.entry.param_bytes != given)
    throw Error(ErrorKind::invalid_argument,
                who + ": the " + std::to_string(bytes.size()) + " argument(s) (" + list_of(names) +
                    ") take " + std::to_string(given) + " bytes of parameters, but " + signature +
                    " takes " + std::to_string(compiled.entry.param_bytes) +
                    " (from its CUBIN): check their number and types");
}

// The fallback config when the device takes its launch, else the first config the constraints
// and the geometry allow. Throws Error naming the geometry when the constraints allow configs
// but the device takes none of their launches.
TuningConfig first_usable(const KernelProblem& problem, const ProblemSizes& sizes,
                          const DeviceProperties& device) {
  const TuningConfig fallback = problem.fallback_config(sizes);
  if (launch_geometry_fits(problem, fallback, sizes, device)) return fallback;
  const SpaceEnumeration constrained = problem.space_at(sizes).enumerate();
  for (const TuningConfig& config : constrained.allowed)
    if (launch_geometry_fits(problem, config, sizes, device)) return config;
  const TuningConfig& example = constrained.allowed.front();
  throw Error(ErrorKind::invalid_argument,
              problem.name() + ": the launch geometry fits " + device.name + " for none of the " +
                  std::to_string(constrained.allowed.size()) +
                  " configs the constraints allow at " + format_problem_sizes(sizes) + " (" +
                  example.describe() + ": " +
                  launch_geometry_fits(problem, example, sizes, device).reason() + ")");
}

// The problem as a temporary JSON file for a worker to read; removed with the object.
class ProblemFile {
 public:
  explicit ProblemFile(const KernelProblem& problem) {
    std::string pattern = (fs::temp_directory_path() / "ptxrt-problem-XXXXXX").string();
    const int descriptor = ::mkstemp(pattern.data());
    if (descriptor < 0) throw Error(ErrorKind::io, "cannot create a file in " + pattern);
    ::close(descriptor);
    path_ = pattern;
    std::ofstream out(path_, std::ios::binary);
    out << problem.to_json();
    if (!out) throw Error(ErrorKind::io, "cannot write " + path_.string());
  }
  ~ProblemFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  ProblemFile(const ProblemFile&) = delete;
  ProblemFile& operator=(const ProblemFile&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

bool started_as_worker() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string argument;
  while (std::getline(in, argument, '\0'))
    if (argument == worker_flag) return true;
  return false;
}

// The worker command line of a problem (its file, or --name and the name) at `sizes` (none when
// the problem declares no sizes) on device `ordinal`, as serve_tune_worker reads it; `program`
// is the worker's executable (empty: this one).
std::vector<std::string> problem_worker_command(const fs::path& program,
                                                const std::vector<std::string>& problem_words,
                                                const ProblemSizes& sizes, int ordinal) {
  std::vector<std::string> command{
      program.empty() ? fs::read_symlink("/proc/self/exe").string() : program.string(),
      std::string(worker_flag)};
  command.insert(command.end(), problem_words.begin(), problem_words.end());
  if (!sizes.empty()) command.insert(command.end(), {"--size", format_problem_sizes(sizes)});
  command.insert(command.end(), {"--device", std::to_string(ordinal)});
  return command;
}

// In this process, a ProblemMeasurer per device.
TuneOutcome tune_in_process(const KernelProblem& problem, const ProblemSizes& sizes,
                            const TuneJob& job, const JobTuneOptions& options,
                            const std::function<void(const TuneProgress&)>& progress) {
  std::vector<std::unique_ptr<ProblemMeasurer>> owned;
  std::vector<Measurer*> measurers;
  for (int ordinal : options.devices) {
    owned.push_back(std::make_unique<ProblemMeasurer>(
        problem, sizes, Jit::shared(), Context::primary(ordinal), options.tune.timing));
    measurers.push_back(owned.back().get());
  }
  TuneOptions tune_options = options.tune;
  tune_options.key = job.key;
  TuneOutcome outcome{.key = tune_options.recorded_key(),
                      .default_config = job.default_config,
                      .devices = options.devices,
                      .compile_threads = tune_options.compile_threads};
  outcome.report = tune(job.space, job.compiler, measurers, tune_options, progress);
  outcome.stopped = tune_options.stop != nullptr && tune_options.stop->load();
  return outcome;
}

}  // namespace

DeviceProperties device_model(int major, int minor) {
  const ArchLimits& limits = arch_limits(major, minor);
  DeviceProperties device;
  device.name = "sm_" + std::to_string(major * 10 + minor) + " model";
  device.cc_major = major;
  device.cc_minor = minor;
  device.max_threads_per_block = limits.max_threads_per_block;
  device.max_threads_per_sm = limits.max_warps_per_sm * 32;
  device.max_blocks_per_sm = limits.max_blocks_per_sm;
  device.shared_memory_per_block = 48 * 1024;
  device.shared_memory_per_block_optin = limits.shared_memory_per_block_optin;
  device.shared_memory_per_sm = limits.shared_memory_per_sm;
  device.reserved_shared_memory_per_block = limits.reserved_shared_memory_per_block;
  device.registers_per_block = limits.registers_per_block;
  device.registers_per_sm = limits.registers_per_sm;
  device.warp_size = 32;
  device.max_block_dim = {1024, 1024, 64};
  device.max_grid_dim = {2147483647, 65535, 65535};
  return device;
}

Verdict launch_geometry_fits(const KernelProblem& problem, const TuningConfig& config,
                             const ProblemSizes& sizes, const DeviceProperties& device) {
  try {
    const LaunchConfig launch = problem.launch_at(config, sizes);
    LaunchLimits limits;
    limits.max_block_dim = device.max_block_dim;
    limits.max_grid_dim = device.max_grid_dim;
    limits.max_threads_per_block = device.max_threads_per_block;
    limits.shared_memory_per_block_optin = device.shared_memory_per_block_optin;
    check_launch_geometry(launch, limits, problem.name());
  } catch (const Error& error) {
    return Verdict::refused(error.what());
  }
  return {};
}

TuningSpace problem_space(const KernelProblem& problem, const ProblemSizes& sizes,
                          const DeviceProperties& device) {
  TuningSpace space = problem.space_at(sizes);
  space.add_constraint(
      std::string(geometry_constraint), [problem, sizes, device](const TuningConfig& config) {
        if (Verdict fits = launch_geometry_fits(problem, config, sizes, device); !fits)
          return Verdict::refused(std::string(geometry_constraint) + ": " + fits.reason());
        return Verdict();
      });
  return space;
}

std::vector<TuningConfig> problem_first_configs(const KernelProblem& problem,
                                                const ProblemSizes& sizes,
                                                const TuningSpace& space) {
  std::vector<TuningConfig> first;
  if (!problem.first_configs()) return first;
  for (TuningConfig& config : problem.first_configs()(sizes))
    if (space.contains(config) && space.admits(config) &&
        std::find(first.begin(), first.end(), config) == first.end())
      first.push_back(std::move(config));
  return first;
}

TuningConfig problem_untuned_config(const KernelProblem& problem, const ProblemSizes& sizes) {
  if (problem.first_configs())
    if (std::vector<TuningConfig> first = problem.first_configs()(sizes); !first.empty())
      return std::move(first.front());
  return problem.fallback_config(sizes);
}

CandidateCompiler problem_compiler(Jit& jit, const KernelProblem& problem,
                                   const ProblemSizes& sizes, const Target& target,
                                   const DeviceProperties& device,
                                   std::optional<std::chrono::milliseconds> timeout) {
  CompileOptions base = problem.compile_options_at(sizes);
  base.target = target;
  base.timeout = timeout;
  return jit_candidate_compiler(
      jit, problem.program(), std::move(base), problem.entry(),
      [problem, sizes](const TuningConfig& config) {
        const LaunchConfig launch = problem.launch_at(config, sizes);
        return LaunchShape{static_cast<int>(launch.block.count()), launch.dynamic_shared_bytes};
      },
      device);
}

TuningKey problem_key(const KernelProblem& problem, const ProblemSizes& sizes,
                      const DeviceProperties& device) {
  return {problem.name(),
          problem.key_hash(),
          problem.space_at(problem.complete_sizes(sizes)).describe(),
          device.name,
          device.compute_capability(),
          nvrtc_version(),
          problem.size_values(sizes)};
}

void check_problem(Jit& jit, const KernelProblem& problem, const ProblemSizes& given,
                   const Target& target, const DeviceProperties& device) {
  const ProblemSizes sizes = problem.complete_sizes(given);
  const TuningConfig config = first_usable(problem, sizes, device);
  CompileOptions options = problem.compile_options_at(sizes);
  options.target = target;
  options.defines.insert(options.defines.end(), config.defines().begin(), config.defines().end());
  std::vector<std::size_t> all(problem.arguments().size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const Compiled entry =
      compile_entry(jit, problem.program(), options, problem.entry(), problem.name());
  // A launcher's arguments are its data, not the entry's parameter list.
  if (!problem.launcher()) check_arguments(problem, entry, all, problem.name());
  check_problem_data(
      problem, sizes,
      device.global_memory_bytes > 0 ? device.global_memory_bytes : max_problem_data_bytes);
  const ProblemVerification& verification = problem.verification();
  if (verification.kind == ProblemVerification::Kind::reference_config) {
    if (const Verdict in_space = problem_space(problem, sizes, device).admits(verification.config);
        !in_space)
      throw Error(ErrorKind::invalid_argument, problem.name() + ": the reference config " +
                                                   verification.config.describe() +
                                                   " is not in the space: " + in_space.reason());
  }
  if (verification.kind != ProblemVerification::Kind::reference_kernel) return;
  const ReferenceKernel& reference = verification.kernel;
  const std::string who = problem.name() + ": the reference kernel " + reference.entry;
  KernelProblem::ReferenceBuild build = problem.reference_build_at(sizes);
  build.options.target = target;
  std::vector<std::size_t> positions;
  for (const std::string& name : reference.arguments)
    for (std::size_t i = 0; i < all.size(); ++i)
      if (problem.arguments()[i].name == name) positions.push_back(i);
  if (positions.empty()) positions = all;
  Compiled compiled;
  try {
    compiled = compile_entry(jit, reference.program.value_or(problem.program()), build.options,
                             reference.entry, who);
  } catch (const Error& error) {
    if (error.kind() != ErrorKind::compile) throw;
    throw Error(ErrorKind::compile, who + " does not compile: " + error.what());
  }
  check_arguments(problem, compiled, positions, who);
  problem.launch_at(reference.geometry, build.values, sizes, "verify.reference.");
}

Objective problem_objective(const KernelProblem& problem, std::string_view name,
                            std::string_view user) {
  if (name == "time" || name == "energy" || name == "power") return {.name = std::string(name)};
  std::string known = "time, energy, power";
  for (const ProblemMetric& metric : problem.metrics()) {
    if (metric.name == name) return {.name = metric.name, .higher_is_better = metric.maximize};
    known += ", " + metric.name;
  }
  throw Error(ErrorKind::invalid_argument, std::string(user) + " " + detail::quoted(name) + ": " +
                                               problem.origin() +
                                               " has no such metric (objectives: " + known + ")");
}

TimingPolicy timing_for(const KernelProblem& problem, TimingPolicy policy,
                        const Objective& objective, std::string_view user) {
  const auto metric =
      std::find_if(problem.metrics().begin(), problem.metrics().end(),
                   [&](const ProblemMetric& each) { return each.name == objective.name; });
  if (objective.needs_power() || (metric != problem.metrics().end() && metric->needs_power()))
    policy.observe_power = true;
  for (const ProblemMetric& each : problem.metrics())
    if (each.needs_power() && !policy.observe_power)
      throw Error(ErrorKind::invalid_argument,
                  problem.origin() + ": metrics." + each.name + " is per " +
                      std::string(to_string(each.per)) +
                      ", which a tune observes only with power (--observe power)");
  if (policy.observe_power) require_power_observation(user);
  return policy;
}

TuneOutcome tune_problem(const KernelProblem& problem, const ProblemSizes& given,
                         ProblemTuneOptions options,
                         const std::function<void(const TuneProgress&)>& progress) {
  if (started_as_worker())
    throw Error(ErrorKind::invalid_argument,
                "this process was started as a tuning worker, yet tunes again: call "
                "ptxrt::serve_tune_worker(argc, argv) at the top of main");
  if (!options.worker_program.empty() && (!fs::is_regular_file(options.worker_program) ||
                                          ::access(options.worker_program.c_str(), X_OK) != 0))
    throw Error(ErrorKind::not_found, "ProblemTuneOptions::worker_program " +
                                          detail::quoted_path(options.worker_program) +
                                          " is not an executable file");
  const ProblemSizes sizes = problem.complete_sizes(given);
  const std::vector<DeviceProperties> devices = one_model_devices(
      options.devices.empty() ? std::vector<int>{options.device} : options.devices);
  const DeviceProperties& device = devices.front();
  const Target target = select_target(device.cc_major, device.cc_minor, ImageFormat::cubin);
  Jit& jit = Jit::shared();
  check_problem(jit, problem, sizes, target, device);
  const std::string asked_by = options.tune.timing.observe_power
                                   ? "TimingPolicy::observe_power"
                                   : "the objective " + options.tune.objective.name;
  options.tune.timing = timing_for(problem, options.tune.timing, options.tune.objective, asked_by);
  TuneJob job{
      .key = problem_key(problem, sizes, device),
      .space = problem_space(problem, sizes, device),
      .compiler = problem_compiler(jit, problem, sizes, target, device, options.compile_timeout),
      .default_config = problem_untuned_config(problem, sizes),
      .worker_command = {}};
  JobTuneOptions job_options{.tune = options.tune, .devices = {}};
  if (job_options.tune.first.empty())
    job_options.tune.first = problem_first_configs(problem, sizes, job.space);
  for (const DeviceProperties& each : devices) job_options.devices.push_back(each.ordinal);
  if (!options.isolated || (!problem.is_declarative() && !options.rebuilt_by_name))
    return tune_in_process(problem, sizes, job, job_options, progress);
  // A worker reads a declarative problem from a file; one with C++ callbacks, the worker's
  // resolver rebuilds by name.
  std::optional<ProblemFile> file;
  std::vector<std::string> problem_words{"--name", problem.name()};
  if (problem.is_declarative()) {
    file.emplace(problem);
    problem_words = {file->path().string()};
  }
  job.worker_command = [&problem_words, &sizes, &options](int ordinal) {
    return problem_worker_command(options.worker_program, problem_words, sizes, ordinal);
  };
  return tune_job(job, job_options, progress);
}

std::optional<int> serve_tune_worker(int argc, char** argv, const ProblemResolver& resolver) {
  if (argc < 2 || argv[1] != worker_flag) return std::nullopt;
  tie_worker_to_parent();
  std::string problem_path, problem_name, sizes_text;
  int device = 0;
  TimingPolicy policy;
  int first_option = 2;
  if (argc > 2 && !std::string_view(argv[2]).starts_with("--")) problem_path = argv[first_option++];
  for (int i = first_option; i + 1 < argc; i += 2) {
    const std::string_view option = argv[i];
    if (option == "--size") sizes_text = argv[i + 1];
    if (option == "--device") device = std::atoi(argv[i + 1]);
    if (option == "--name") problem_name = argv[i + 1];
    if (option == "--l2") policy.l2 = parse_l2_mode(argv[i + 1], option);
    if (option == "--observe") policy.observe_power = parse_observation(argv[i + 1], option);
  }
  const ProblemSizes sizes = sizes_text.empty() ? ProblemSizes{} : parse_problem_sizes(sizes_text);
  const auto named_problem = [&] {
    if (!resolver)
      throw Error(ErrorKind::invalid_argument,
                  "started as the tuning worker of problem " + problem_name +
                      ", which has C++ callbacks: pass a resolver that rebuilds it to "
                      "ptxrt::serve_tune_worker(argc, argv, resolver)");
    std::optional<KernelProblem> problem = resolver(problem_name, Device::get(device).properties());
    if (!problem)
      throw Error(ErrorKind::not_found,
                  "the tuning worker's resolver knows no problem " + problem_name);
    return *std::move(problem);
  };
  const auto problem_of_file = [&] {
    std::ifstream in(problem_path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return KernelProblem::from_json(text.str(), std::nullopt, problem_path,
                                    fs::path(problem_path).parent_path());
  };
  return run_tune_worker(
      [&]() -> std::unique_ptr<TuneSession> {
        return std::make_unique<ProblemSession>(
            problem_name.empty() ? problem_of_file() : named_problem(), sizes, Jit::shared(),
            Context::primary(device));
      },
      policy, std::cin, std::cout);
}

}  // namespace ptxrt
