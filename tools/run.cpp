// `ptxrt run <program>`: plan (all arguments checked, no driver), then run on the device and
// report what ran, the median time, the rate and the verdict. <program> is a classic kernel's
// name, sgemm (the library's SGEMM family: apps/matmul/sgemm_run.hpp) or a kernel file with its
// tuning problem (run_problem.cpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/classic/aos_soa.hpp"
#include "apps/classic/histogram.hpp"
#include "apps/classic/raytrace.hpp"
#include "apps/classic/reduce.hpp"
#include "apps/classic/simpson.hpp"
#include "apps/classic/sort.hpp"
#include "apps/classic/transpose.hpp"
#include "apps/classic/vector_add.hpp"
#include "apps/matmul/matmul.hpp"
#include "apps/matmul/matrix_add.hpp"
#include "apps/matmul/sgemm_run.hpp"
#include "apps/tune/tune_problems.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "tools/cli.hpp"
#include "tools/host_commands.hpp"
#include "tools/run_problem.hpp"

namespace apps = ptxrt::apps;
using ptxrt::Context;
using ptxrt::Error;
using ptxrt::ErrorKind;
using ptxrt::Jit;

namespace {

struct RunArguments {
  std::string program;
  std::int64_t n = 0, m = 0, k = 0, width = 0, height = 0, spheres = 0;
  std::string output = "raytrace.ppm";
  std::vector<std::string> defines;
  std::string variant;
  int repeat = 10;
  bool verify = false;
  std::uint64_t seed = 1;
  bool json = false;
  int device = 0;
  bool tuned = false;
  std::string database;
  std::string problem;  // a kernel file's: --problem
  std::string sizes;    // a kernel file's: --size
};

using Runner = std::function<std::vector<apps::Run>(Jit&, const Context&, const apps::RunOptions&)>;

struct ProgramSpec {
  std::vector<std::string> size_options;  // the ones it takes, e.g. {"--m", "--n", "--k"}
  std::string default_variant;            // empty: it has no variants
};

const std::map<std::string, ProgramSpec>& programs() {
  static const std::map<std::string, ProgramSpec> specs{
      {"vecadd", {{"--n"}, ""}},
      {"matadd", {{"--m", "--n"}, ""}},
      {"matmul", {{"--m", "--n", "--k"}, "tiled"}},
      {"sgemm", {{"--m", "--n", "--k"}, ""}},
      {"transpose", {{"--m", "--n"}, "padded"}},
      {"reduce", {{"--n"}, "sum"}},
      {"histogram", {{"--n"}, "block"}},
      {"sort", {{"--n"}, "bitonic"}},
      {"raytrace", {{"--width", "--height", "--spheres", "--output"}, ""}},
      {"simpson", {{"--n"}, "pi"}},
      {"aos-soa", {{"--n"}, ""}},
  };
  return specs;
}

// Options given that the program does not take are mistakes, not silently ignored.
void check_applicable(const CLI::App& command, const RunArguments& arguments) {
  const ProgramSpec& spec = programs().at(arguments.program);
  for (const char* option : {"--n", "--m", "--k", "--width", "--height", "--spheres", "--output"}) {
    if (command.count(option) == 0) continue;
    if (std::find(spec.size_options.begin(), spec.size_options.end(), option) ==
        spec.size_options.end())
      throw Error(ErrorKind::invalid_argument,
                  std::string(option) + " does not apply to " + arguments.program);
  }
  if (command.count("--variant") && spec.default_variant.empty())
    throw Error(ErrorKind::invalid_argument, arguments.program + " has no variants");
}

// The value of a size option, or the program's default when it was not given.
std::int64_t size_or(const CLI::App& command, const char* option, std::int64_t value,
                     std::int64_t fallback) {
  return command.count(option) ? value : fallback;
}

// The one file `ptxrt run` writes: absolute, so that the report says exactly where it went.
std::filesystem::path image_path(const std::string& output) {
  return output.empty() ? std::filesystem::path() : std::filesystem::absolute(output);
}

template <typename Plan, typename Function>
Runner runner(Plan plan, Function run) {
  return [plan = std::move(plan), run](Jit& jit, const Context& context,
                                       const apps::RunOptions& options) {
    return std::vector<apps::Run>{run(jit, context, plan, options)};
  };
}

Runner plan_program(const CLI::App& command, const RunArguments& arguments,
                    std::vector<ptxrt::Define> defines) {
  const std::string& program = arguments.program;
  const std::string variant =
      command.count("--variant") ? arguments.variant : programs().at(program).default_variant;
  const auto size = [&](const char* option, std::int64_t value, std::int64_t fallback) {
    return size_or(command, option, value, fallback);
  };
  const std::int64_t n = arguments.n;
  const std::int64_t m = arguments.m;
  if (program == "vecadd")
    return runner(apps::plan_vector_add(size("--n", n, 1 << 24), defines), apps::run_vector_add);
  if (program == "matadd")
    return runner(apps::plan_matrix_add(size("--m", m, 4096), size("--n", n, 4096), defines),
                  apps::run_matrix_add);
  if (program == "matmul")
    return runner(apps::plan_matmul(size("--m", m, 1024), size("--n", n, 1024),
                                    size("--k", arguments.k, 1024),
                                    apps::parse_matmul_variant(variant), defines),
                  apps::run_matmul);
  if (program == "transpose")
    return runner(apps::plan_transpose(size("--m", m, 4096), size("--n", n, 4096),
                                       apps::parse_transpose_variant(variant), defines),
                  apps::run_transpose);
  if (program == "reduce")
    return runner(
        apps::plan_reduce(size("--n", n, 1 << 24), apps::parse_reduce_variant(variant), defines),
        apps::run_reduce);
  if (program == "histogram")
    return runner(apps::plan_histogram(size("--n", n, 1 << 26),
                                       apps::parse_histogram_variant(variant), defines),
                  apps::run_histogram);
  if (program == "sort")
    return runner(
        apps::plan_sort(size("--n", n, 1 << 20), apps::parse_sort_variant(variant), defines),
        apps::run_sort);
  if (program == "raytrace")
    return runner(
        apps::plan_raytrace(size("--width", arguments.width, 1024),
                            size("--height", arguments.height, 1024),
                            size("--spheres", arguments.spheres, 32), image_path(arguments.output),
                            defines),
        apps::run_raytrace);
  if (program == "simpson")
    return runner(
        apps::plan_simpson(size("--n", n, 10'000'000), apps::parse_integrand(variant), defines),
        apps::run_simpson);
  const apps::AosSoaPlan plan = apps::plan_aos_soa(size("--n", n, 1 << 24), defines);
  return [plan](Jit& jit, const Context& context, const apps::RunOptions& options) {
    apps::AosSoaRuns runs = apps::run_aos_soa(jit, context, plan, options);
    return std::vector<apps::Run>{std::move(runs.aos), std::move(runs.soa)};
  };
}

ptxrt::TuningDatabase tuning_database(const RunArguments& arguments) {
  return ptxrt::TuningDatabase(ptxrt::cli::database_path(arguments.database));
}

// --tuned: the config the tuning database picks for this matmul on this device (sgemm's: its
// run's, execute_sgemm).
std::optional<ptxrt::TunedChoice> tuned_choice(const CLI::App& command,
                                               const RunArguments& arguments) {
  if (!arguments.tuned) return std::nullopt;
  const bool tiled_matmul = arguments.program == "matmul" &&
                            (!command.count("--variant") || arguments.variant == "tiled");
  if (!tiled_matmul)
    throw Error(ErrorKind::invalid_argument,
                "--tuned applies to matmul (tiled), sgemm and kernel files with a problem "
                "(closest-pair: `ptxrt closest-pair --tuned`)");
  if (!arguments.defines.empty())
    throw Error(ErrorKind::invalid_argument, "--tuned picks the defines itself: drop -D");
  const ptxrt::ProblemSizes sizes{{"m", size_or(command, "--m", arguments.m, 1024)},
                                  {"n", size_or(command, "--n", arguments.n, 1024)},
                                  {"k", size_or(command, "--k", arguments.k, 1024)}};
  const ptxrt::DeviceProperties device = ptxrt::Device::get(arguments.device).properties();
  return apps::choose_tuned(apps::matmul_problem(), sizes, device, tuning_database(arguments));
}

apps::RunOptions run_options(const RunArguments& arguments) {
  return {.seed = arguments.seed, .repeats = arguments.repeat, .verify = arguments.verify};
}

// The runs as text or one JSON array, each with the tuning database's choice when there is one;
// throws CLI::RuntimeError(1) after the report when a verification failed.
void report(const std::vector<apps::Run>& runs, const std::optional<ptxrt::TunedChoice>& tuned,
            bool json) {
  if (tuned && !json) std::cout << "tuned: " << tuned->describe() << '\n';
  bool passed = true;
  nlohmann::json document = nlohmann::json::array();
  for (const apps::Run& result : runs) {
    passed = passed && result.passed();
    if (json) {
      document.push_back(ptxrt::tools::run_to_json(result));
      if (tuned) document.back()["tuned"] = ptxrt::tools::tuned_json(*tuned);
    } else
      std::cout << apps::format_run(result);
  }
  if (json) ptxrt::cli::print_json(std::cout, document);
  if (!passed) throw CLI::RuntimeError(1);
}

// sgemm: everything checked (and the database read, for --tuned) before the driver is touched;
// the run picks its config on the device as ptxrt::sgemm() would (sgemm_run.hpp).
void execute_sgemm(const CLI::App& command, const RunArguments& arguments) {
  const apps::SgemmRunPlan plan = apps::plan_sgemm_run(
      size_or(command, "--m", arguments.m, 1024), size_or(command, "--n", arguments.n, 1024),
      size_or(command, "--k", arguments.k, 1024), ptxrt::cli::parse_defines(arguments.defines),
      arguments.tuned ? std::optional(tuning_database(arguments)) : std::nullopt);
  const Context context = Context::primary(arguments.device);
  const apps::SgemmRun result =
      apps::run_sgemm(Jit::shared(), context, plan, run_options(arguments));
  report({result.run}, result.tuned, arguments.json);
}

// A kernel file: its problem run once (run_problem.cpp).
void execute_kernel_file(const CLI::App& command, const RunArguments& arguments) {
  for (const char* option : {"--n", "--m", "--k", "--width", "--height", "--spheres", "--variant"})
    if (command.count(option))
      throw Error(ErrorKind::invalid_argument,
                  std::string(option) + " does not apply to a kernel file: its sizes are --size");
  if (arguments.tuned && !arguments.defines.empty())
    throw Error(ErrorKind::invalid_argument, "--tuned picks the defines itself: drop -D");
  const ptxrt::TuningDatabase database = tuning_database(arguments);
  ptxrt::cli::run_kernel_file({arguments.program, arguments.problem, arguments.sizes,
                               ptxrt::cli::parse_defines(arguments.defines),
                               arguments.tuned ? &database : nullptr, arguments.repeat,
                               arguments.verify, arguments.json, arguments.device});
}

void execute(const CLI::App& command, const RunArguments& arguments) {
  if (command.count("--db") && !arguments.tuned)
    throw Error(ErrorKind::invalid_argument, "--db applies with --tuned");
  if (!programs().contains(arguments.program)) {
    std::vector<std::string> names;
    for (const auto& [name, spec] : programs()) names.push_back(name);
    ptxrt::cli::check_file_or_builtin(arguments.program, names, "program");
    if (!arguments.problem.empty()) ptxrt::cli::check_file_exists(arguments.problem, "--problem");
    return execute_kernel_file(command, arguments);
  }
  if (command.count("--problem") || command.count("--size"))
    throw Error(ErrorKind::invalid_argument,
                "--problem and --size apply to a kernel file, not to " + arguments.program);
  check_applicable(command, arguments);
  if (arguments.program == "sgemm") return execute_sgemm(command, arguments);
  const std::optional<ptxrt::TunedChoice> tuned = tuned_choice(command, arguments);
  const Runner run =
      plan_program(command, arguments,
                   tuned ? tuned->config.defines() : ptxrt::cli::parse_defines(arguments.defines));
  const Context context = Context::primary(arguments.device);
  report(run(Jit::shared(), context, run_options(arguments)), tuned, arguments.json);
}

}  // namespace

namespace ptxrt::tools {

nlohmann::json tuned_json(const TunedChoice& choice) {
  nlohmann::json config = nlohmann::json::object();
  for (const Define& define : choice.config.defines()) config[define.name] = define.value;
  nlohmann::json from;
  if (choice.from)
    from = {{"device", choice.from->device},
            {"compute_capability", choice.from->compute_capability},
            {"size", choice.from->size}};
  return {{"level", to_string(choice.level)}, {"config", config}, {"from", from}};
}

nlohmann::json run_to_json(const apps::Run& run) {
  nlohmann::json defines = nlohmann::json::object();
  for (const Define& define : run.defines) defines[define.name] = define.value;
  nlohmann::json json{
      {"program", run.program},
      {"kernel", run.kernel},
      {"defines", defines},
      {"grid", {run.grid.x, run.grid.y, run.grid.z}},
      {"block", {run.block.x, run.block.y, run.block.z}},
      {"launches", run.launches},
      {"median_ms", run.median_ms},
      {"rate", run.rate},
      {"rate_unit", run.rate_unit},
      {"verified", run.verified},
  };
  if (run.verified) {
    json["max_error"] =
        std::isfinite(run.max_error) ? nlohmann::json(run.max_error) : nlohmann::json();
    json["tolerance"] = run.tolerance;
    json["error_measure"] = run.error_measure;
    json["passed"] = run.passed();
  }
  if (!run.note.empty()) json["note"] = run.note;
  return json;
}

}  // namespace ptxrt::tools

void add_run_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "run",
      "Run one classic kernel: time it (median of --repeat after a warm-up) and, with "
      "--verify, check it against the CPU reference");
  auto arguments = std::make_shared<RunArguments>();
  command
      ->add_option("program", arguments->program,
                   "The program to run, or a kernel file with its tuning problem (--problem, or "
                   "the file's \"// ptxrt: problem\" lines)")
      ->required();
  command->add_option("--problem", arguments->problem,
                      "A kernel file's problem (JSON; docs/tuning.md)");
  command->add_option("--size", arguments->sizes,
                      "A kernel file's problem sizes, NAME=VALUE,... (W=4096,H=4096)");
  command->add_option("--n", arguments->n,
                      "Elements (vecadd, reduce, histogram, sort, aos-soa), intervals (simpson, "
                      "even), or columns (matmul, sgemm: B and C; matadd, transpose)");
  command->add_option("--m", arguments->m, "Rows (matmul, sgemm: A and C; matadd, transpose)");
  command->add_option("--k", arguments->k, "matmul, sgemm: columns of A, rows of B");
  command->add_option("--width", arguments->width, "raytrace: image width in pixels");
  command->add_option("--height", arguments->height, "raytrace: image height in pixels");
  command->add_option("--spheres", arguments->spheres, "raytrace: spheres in the scene");
  command->add_option("--output", arguments->output,
                      "raytrace: the PPM image to write, relative to the current directory (the "
                      "report names it; empty: none)")
      ->capture_default_str();
  command->add_option("-D,--define", arguments->defines,
                      "A compile-time constant NAME=VALUE of the kernel file (repeatable)");
  command->add_option("--variant", arguments->variant,
                      "matmul naive|tiled, transpose naive|shared|padded, reduce "
                      "sum|argmin|cooperative, histogram block|cluster, sort "
                      "bitonic|bitonic-pairs|radix|radix-pairs, simpson pi|square|sine");
  command->add_option("--repeat", arguments->repeat, "Timed runs after the warm-up")
      ->check(CLI::Range(1, 1000000));
  command->add_flag("--verify", arguments->verify, "Compare the output with the CPU reference");
  command->add_option("--seed", arguments->seed, "Seed of the random inputs")
      ->capture_default_str();
  command->add_flag("--json", arguments->json, "Print the report as JSON");
  command->add_option("--device", arguments->device, "Device ordinal")
      ->check(ptxrt::cli::at_least(0));
  command->add_flag("--tuned", arguments->tuned,
                    "matmul, sgemm, a kernel file: use the config the tuning database picks for "
                    "this size and device (exact size, nearest size, same compute capability, "
                    "else the default: for sgemm the shape heuristic's); printed, and in --json "
                    "as \"tuned\": {level, config, from}");
  ptxrt::cli::add_database_option(*command, arguments->database, "with --tuned: ");
  command->callback([command, arguments] { execute(*command, *arguments); });
}
