// `ptxrt tune <kernel>`: autotune a kernel's compile-time constants for device N at one or more
// problem sizes, recording every measurement in the tuning database; `ptxrt tune show` lists
// what the database holds. <kernel> is a builtin problem (matmul, sgemm, closest-pair) or a
// kernel file with its problem (--problem P.json, or its "// ptxrt: problem" lines). The GPU
// work runs in worker processes (`ptxrt tune <kernel> --worker`, started by the tune itself), so
// that a faulting config cannot end the tune; with `--devices all|0,1` one worker per device,
// all timing at once (devices of one model only). `--dry-run` plans without a GPU.
// Ctrl-C (or SIGTERM) stops a tune after the configs in progress: what was measured is in the
// database, the report and a command to resume are printed, and the exit code is 130 (143).
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "host/common/device_selection.hpp"
#include "host/tune/stop_signal.hpp"
#include "host/tune/tune_problems.hpp"
#include "ptxrt/device.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/problem_tuner.hpp"
#include "ptxrt/target.hpp"
#include "ptxrt/tune_worker.hpp"
#include "tune_job.hpp"
#include "tune_report.hpp"

namespace ptxrt::cli {
namespace {

struct TuneArguments {
  std::string kernel;
  std::vector<std::string> sizes;
  std::string source;
  std::string problem;
  std::string strategy = "model";
  std::size_t budget = 0;
  double time_limit = 0.0;
  std::uint64_t seed = 1;
  std::string database;
  bool resume = false;
  bool json = false;
  bool no_parallel_compile = false;
  int device = 0;
  std::string devices;  // --devices: "all" or "0,1"; empty: --device alone
  double compile_timeout = 120.0;
  bool dry_run = false;
  std::string arch = "auto";
  bool worker = false;
};

constexpr double default_compile_timeout = 120.0;

std::filesystem::path database_path(const std::string& given) {
  return given.empty() ? TuningDatabase::default_path() : std::filesystem::path(given);
}

// The --size texts, one tune each; one tune at the default size when none is given.
std::vector<std::string> sizes_of(const TuneArguments& arguments) {
  if (arguments.sizes.empty()) return {""};
  return arguments.sizes;
}

std::string absolute_or_empty(const std::string& path) {
  return path.empty() ? std::string() : std::filesystem::absolute(path).string();
}

ProblemSource problem_source(const TuneArguments& arguments) {
  return {arguments.kernel, absolute_or_empty(arguments.problem),
          absolute_or_empty(arguments.source)};
}

std::optional<std::chrono::milliseconds> compile_timeout(const TuneArguments& arguments) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(arguments.compile_timeout * 1000.0));
}

// What can be checked before any GPU work: each size's text, and a kernel file's problem as
// far as it goes without a device (its file, its names, its sizes).
void check_before_gpu(const TuneArguments& arguments) {
  const ProblemSource source = problem_source(arguments);
  if (!source.is_file() && !arguments.problem.empty())
    throw Error(ErrorKind::invalid_argument,
                "--problem describes a kernel file's problem: give the file (ptxrt tune FILE.cu "
                "--problem P.json), not the builtin problem " + arguments.kernel);
  const std::optional<KernelProblem> problem =
      source.is_file() ? std::optional<KernelProblem>(load_kernel_problem(source)) : std::nullopt;
  for (const std::string& size : sizes_of(arguments)) {
    if (problem)
      problem->complete_sizes(size.empty() ? ProblemSizes{} : parse_problem_sizes(size));
    else if (!size.empty())
      host::parse_tune_size(arguments.kernel, size);
  }
}

// The devices --device or --devices names (nothing: every device); no GPU is asked.
std::optional<std::vector<int>> listed_devices(const TuneArguments& arguments) {
  if (arguments.devices.empty()) return std::vector<int>{arguments.device};
  return host::parse_device_list(arguments.devices);
}

// The properties of the devices to time on, which must be of one model.
std::vector<DeviceProperties> tune_devices(const std::optional<std::vector<int>>& listed) {
  std::vector<DeviceProperties> devices;
  for (int ordinal : listed ? *listed : host::all_devices())
    devices.push_back(Device::get(ordinal).properties());
  host::require_one_model(devices);
  return devices;
}

void run_worker(const TuneArguments& arguments) {
  tie_worker_to_parent();
  const int code = run_tune_worker(
      [&] {
        return open_tune_session(problem_source(arguments), sizes_of(arguments).front(),
                                 arguments.device);
      },
      TimingPolicy{}, std::cin, std::cout);
  if (code != 0) throw CLI::RuntimeError(code);
}

TuneOptions tune_options(const TuneArguments& arguments, const TuningDatabase& database,
                         TuningKey key, const std::atomic<bool>& stop) {
  TuneOptions options;
  options.stop = &stop;
  options.strategy = parse_tuning_strategy(arguments.strategy);
  if (arguments.budget > 0) options.budget = arguments.budget;
  if (arguments.time_limit > 0.0) options.time_limit_seconds = arguments.time_limit;
  options.seed = arguments.seed;
  if (arguments.no_parallel_compile) options.compile_threads = 0;
  options.resume = arguments.resume;
  options.database = &database;
  options.key = std::move(key);
  return options;
}

// One line rewritten in place on a terminal; nothing otherwise.
std::function<void(const TuneProgress&)> progress_line(bool quiet) {
  if (quiet || ::isatty(STDOUT_FILENO) == 0) return {};
  return [](const TuneProgress& progress) {
    std::cout << "\r\033[K" << format_progress(progress) << std::flush;
    if (progress.done == progress.total) std::cout << "\r\033[K" << std::flush;
  };
}

nlohmann::json tune_one(const TuneArguments& arguments, const std::string& size,
                        const std::vector<DeviceProperties>& devices,
                        const TuningDatabase& database, const std::atomic<bool>& stop) {
  const DeviceProperties& device = devices.front();
  const TuneJob job =
      make_tune_job(problem_source(arguments), size, device,
                    select_target(device.cc_major, device.cc_minor, ImageFormat::cubin),
                    compile_timeout(arguments));
  const TuneOptions options = tune_options(arguments, database, job.key, stop);
  std::vector<std::unique_ptr<WorkerMeasurer>> workers;
  std::vector<Measurer*> measurers;
  std::vector<int> ordinals;
  for (const DeviceProperties& each : devices) {
    workers.push_back(
        std::make_unique<WorkerMeasurer>(job.worker_command(each.ordinal), each.ordinal));
    measurers.push_back(workers.back().get());
    ordinals.push_back(each.ordinal);
  }
  const TuneReport report =
      tune(job.space, job.compiler, measurers, options, progress_line(arguments.json));
  const std::optional<Measurement> peer =
      report.winner && !stop.load() ? workers.front()->peer() : std::optional<Measurement>();
  int workers_started = 0;
  for (const auto& worker : workers) workers_started += worker->workers_started();
  const TuneSetting setting{job.key,
                            arguments.strategy,
                            database.path().string(),
                            options.compile_threads,
                            workers_started,
                            ordinals,
                            job.default_config};
  if (!arguments.json) print_tune_report(std::cout, setting, report, peer);
  return tune_report_json(setting, report, peer);
}

// --dry-run: the plan for the --arch's device model (or device 0's, for auto with a GPU).
void plan_only(const TuneArguments& arguments) {
  const Target target = choose_target(arguments.arch, ImageFormat::cubin);
  const auto [major, minor] = compute_capability_of(target.arch);
  const DeviceProperties device = device_model(major, minor);
  const unsigned threads = arguments.no_parallel_compile ? 0 : TuneOptions{}.compile_threads;
  nlohmann::json plans = nlohmann::json::array();
  for (const std::string& size : sizes_of(arguments)) {
    const TuneJob job =
        make_tune_job(problem_source(arguments), size, device, target, compile_timeout(arguments));
    const TunePlan plan = plan_tune(job.space, job.compiler, threads);
    if (arguments.json)
      plans.push_back(tune_plan_json(job.key, arguments.strategy, plan));
    else
      print_tune_plan(std::cout, job.key, arguments.strategy, plan);
  }
  if (arguments.json)
    std::cout << plans.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

// `text` as one word for a POSIX shell: as it is when nothing in it is special, else quoted.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_./=:,+-") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command that carries on where an interrupted tune stopped: the same one with --resume.
std::string resume_command(const TuneArguments& arguments, const TuningDatabase& database) {
  std::vector<std::string> words{"ptxrt", "tune", arguments.kernel};
  const auto add = [&](const char* option, const std::string& value) {
    words.push_back(option);
    words.push_back(value);
  };
  for (const std::string& size : arguments.sizes) add("--size", size);
  if (!arguments.source.empty()) add("--source", absolute_or_empty(arguments.source));
  if (!arguments.problem.empty()) add("--problem", absolute_or_empty(arguments.problem));
  if (arguments.compile_timeout != default_compile_timeout)
    add("--compile-timeout", (std::ostringstream() << arguments.compile_timeout).str());
  if (arguments.strategy != TuneArguments{}.strategy) add("--strategy", arguments.strategy);
  if (arguments.budget > 0) add("--budget", std::to_string(arguments.budget));
  if (arguments.time_limit > 0.0)
    add("--time", (std::ostringstream() << arguments.time_limit).str());
  if (arguments.seed != TuneArguments{}.seed) add("--seed", std::to_string(arguments.seed));
  if (arguments.no_parallel_compile) words.push_back("--no-parallel-compile");
  if (arguments.device != 0) add("--device", std::to_string(arguments.device));
  add("--db", database.path().string());
  words.push_back("--resume");
  if (arguments.json) words.push_back("--json");
  std::string command;
  for (const std::string& word : words) command += (command.empty() ? "" : " ") + shell_word(word);
  return command;
}

void print_interrupted(std::ostream& out, const TuneArguments& arguments,
                       const TuningDatabase& database, const nlohmann::json& reports, int signal) {
  std::size_t measured = 0;
  std::size_t not_reached = 0;
  for (const nlohmann::json& report : reports) {
    measured += report["counts"]["timed"].get<std::size_t>();
    not_reached += report["counts"]["not_reached"].get<std::size_t>();
  }
  const std::size_t sizes_left = sizes_of(arguments).size() - reports.size();
  out << "ptxrt: interrupted by " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
      << ": stopped after the config in progress; " << measured
      << " config(s) timed in this run, every measurement is in " << database.path().string()
      << "; " << not_reached << " config(s) not reached";
  if (sizes_left > 0) out << ", " << sizes_left << " size(s) not started";
  out << "\nptxrt: resume with: " << resume_command(arguments, database) << '\n';
}

void run_tune(const TuneArguments& arguments) {
  if (arguments.kernel.empty()) throw CLI::RequiredError("kernel (or `tune show`)");
  const std::vector<std::string> sizes = sizes_of(arguments);
  check_before_gpu(arguments);
  parse_tuning_strategy(arguments.strategy);  // a bad name fails before any GPU work
  const std::optional<std::vector<int>> listed = listed_devices(arguments);  // so does a bad list
  if (arguments.arch != TuneArguments{}.arch && !arguments.dry_run)
    throw Error(ErrorKind::invalid_argument,
                "--arch applies with --dry-run (a tune compiles for the device it times on)");
  if (arguments.worker) return run_worker(arguments);
  if (arguments.dry_run) return plan_only(arguments);
  // NVRTC answers a repeated compile from the CUDA compute cache without ptxas' report, which
  // alone knows about spills; and the tune's compile time should be its own. Set before any
  // thread starts; never overrides the user.
  ::setenv("CUDA_CACHE_DISABLE", "1", 0);
  const TuningDatabase database(database_path(arguments.database));
  const host::StopSignal stop(
      "\nptxrt: stopping after the config in progress (press Ctrl-C again to quit at once)\n");
  const std::vector<DeviceProperties> devices = tune_devices(listed);
  nlohmann::json reports = nlohmann::json::array();
  bool every_size_has_a_winner = true;
  for (const std::string& size : sizes) {
    if (stop.requested().load()) break;
    reports.push_back(tune_one(arguments, size, devices, database, stop.requested()));
    every_size_has_a_winner = every_size_has_a_winner && !reports.back()["winner"].is_null();
  }
  // A compile failure's reason is NVRTC's text, which need not be UTF-8.
  if (arguments.json)
    std::cout << reports.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  if (stop.signal() != 0) {
    print_interrupted(std::cerr, arguments, database, reports, stop.signal());
    throw CLI::RuntimeError(host::StopSignal::exit_code(stop.signal()));
  }
  if (!every_size_has_a_winner) throw CLI::RuntimeError(1);
}

void show(const std::string& given, bool json) {
  const TuningDatabase database(database_path(given));
  const std::vector<TuningRecord> records = database.records();
  if (json) {
    std::cout << tune_records_json(records).dump(2) << '\n';
    return;
  }
  if (records.empty()) {
    std::cout << "no tunes recorded in " << database.path().string() << '\n';
    return;
  }
  print_tune_records(std::cout, records);
}

void add_show_command(CLI::App& tune) {
  struct ShowArguments {
    std::string database;
    bool json = false;
  };
  auto arguments = std::make_shared<ShowArguments>();
  CLI::App* command = tune.add_subcommand("show", "List the tuning database: each tune's winner");
  add_database_option(*command, arguments->database);
  command->add_flag("--json", arguments->json,
                    "print [{key: {kernel, size, device, compute_capability, nvrtc_version, "
                    "source_hash, space}, measured, winner}]");
  command->callback([arguments] { show(arguments->database, arguments->json); });
}

}  // namespace

void add_tune_commands(CLI::App& app) {
  auto arguments = std::make_shared<TuneArguments>();
  CLI::App* command = app.add_subcommand(
      "tune",
      "Autotune a kernel's compile-time constants on a device: prune, compile in parallel, "
      "verify and time each config in a worker process, record every result in the tuning "
      "database");
  command->add_option("kernel", arguments->kernel,
                      "matmul, sgemm, closest-pair, or a kernel file with its problem (--problem "
                      "P.json, or the file's \"// ptxrt: problem\" lines)")
      ->check(CLI::IsMember(host::tune_problem_names()) | CLI::ExistingFile);
  command->add_option("--problem", arguments->problem,
                      "the kernel file's problem: entry, sizes, tunables, launch geometry, "
                      "arguments, verification (JSON; docs/tuning.md)")
      ->check(CLI::ExistingFile);
  command->add_option("--size", arguments->sizes,
                      "problem size: N or MxNxK for matmul and sgemm (default 1024), points for "
                      "closest-pair (default 1048576), NAME=VALUE,... for a kernel file "
                      "(W=4096,H=4096); repeatable, one tune per size");
  command->add_option("--source", arguments->source,
                      "matmul: a kernel file to tune instead of matmul_tiled.cu (same entry, "
                      "signature and TILE_WIDTH)");
  command->add_option("--strategy", arguments->strategy, "exhaustive, random, occupancy or model")
      ->capture_default_str();
  command->add_option("--budget", arguments->budget, "time at most N configs")
      ->check(CLI::PositiveNumber);
  command->add_option("--time", arguments->time_limit, "start no config after S seconds")
      ->check(CLI::PositiveNumber);
  command->add_option("--seed", arguments->seed, "seed of the random strategy")
      ->capture_default_str();
  add_database_option(*command, arguments->database);
  command->add_flag("--resume", arguments->resume,
                    "skip the configs the database has a finished measurement of");
  command->add_flag("--json", arguments->json, "print the reports as a JSON array, no progress");
  command->add_flag("--no-parallel-compile", arguments->no_parallel_compile,
                    "compile each config just before timing it, on one thread");
  CLI::Option* device = command->add_option("--device", arguments->device, "device ordinal")
                            ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--devices", arguments->devices,
                   "time on several devices at once, one worker each: 'all' or ordinals such as "
                   "0,1 (all of one model)")
      ->excludes(device);
  command->add_option("--compile-timeout", arguments->compile_timeout,
                      "cancel a config's compile after S seconds (recorded compile_timeout)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--dry-run", arguments->dry_run,
                    "plan without a GPU: enumerate, prune by constraints, compile every config "
                    "for --arch and prune by its resources; print what would be timed and why "
                    "the rest would not");
  add_arch_option(*command, arguments->arch);
  command->add_flag("--worker", arguments->worker, "(internal) serve as the GPU worker")->group("");
  add_show_command(*command);
  command->callback([command, arguments] {
    if (command->got_subcommand("show")) return;
    run_tune(*arguments);
  });
}

}  // namespace ptxrt::cli
