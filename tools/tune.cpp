// `ptxrt tune <kernel>`: autotune a kernel's compile-time constants for device N at one or more
// problem sizes, recording every measurement in the tuning database; `ptxrt tune show` lists
// what the database holds. <kernel> is a builtin problem (matmul, sgemm, closest-pair) or a
// kernel file with its problem (--problem P.json, or its "// ptxrt: problem" lines). The GPU
// work runs in worker processes (`ptxrt tune <kernel> --worker`, started by the tune itself), so
// that a faulting config cannot end the tune; with `--devices all|0,1` one worker per device,
// all timing at once (devices of one model only). `--dry-run` plans without a GPU.
// Ctrl-C (or SIGTERM) stops a tune after the configs in progress: what was measured is in the
// database, the report and `ptxrt tune resume` are printed, and the exit code is 130 (143): the
// database holds what each tune was asked, which `tune resume` reads to carry it on.
// `--shard I/N` tunes one share of the configs (for the jobs of a scheduler), `ptxrt tune merge`
// joins databases, and `--mpi` spreads the configs over the ranks of an MPI job.
#include "tune.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/tune/stop_signal.hpp"
#include "apps/tune/tune_problems.hpp"
#include "cli.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/target.hpp"
#include "ptxrt/tune/device_selection.hpp"
#include "ptxrt/tune/launch_timer.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "support/quoted.hpp"
#include "tune_exchange.hpp"
#include "tune_job.hpp"
#include "tune_report.hpp"
#include "tune_request.hpp"

namespace ptxrt::cli {

std::optional<std::vector<int>> listed_devices(const TuneArguments& arguments) {
  if (!arguments.devices.empty()) return parse_device_list(arguments.devices);
  if (arguments.device) return std::vector<int>{*arguments.device};
  if (arguments.mpi) return std::nullopt;
  return std::vector<int>{0};
}

namespace {

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

// A kernel file's problem; nothing for a builtin one.
std::optional<KernelProblem> file_problem(const TuneArguments& arguments) {
  const ProblemSource source = problem_source(arguments);
  return source.is_file() ? std::optional<KernelProblem>(load_kernel_problem(source))
                          : std::nullopt;
}

// --l2 and --observe as the worker times.
TimingPolicy worker_timing(const TuneArguments& arguments) {
  return {.l2 = parse_l2_mode(arguments.l2, "--l2"),
          .observe_power = parse_observation(arguments.observe, "--observe")};
}

// How the tunes time and what they choose by: --l2, --observe and --objective, for a kernel
// file's problem (its metrics) or a builtin one (none). Power is observed when the objective
// needs it, and then NVML must be usable.
struct TuneGoal {
  TimingPolicy timing;
  Objective objective;
};
TuneGoal tune_goal(const TuneArguments& arguments, const std::optional<KernelProblem>& problem) {
  const TimingPolicy timing = worker_timing(arguments);
  const std::string asked_by =
      timing.observe_power ? "--observe power" : "--objective " + arguments.objective;
  if (problem) {
    const Objective objective = problem_objective(*problem, arguments.objective, "--objective");
    return {timing_for(*problem, timing, objective, asked_by), objective};
  }
  TuneGoal goal{.timing = timing, .objective = {.name = arguments.objective}};
  if (goal.objective.name != "time" && !goal.objective.needs_power())
    throw Error(ErrorKind::invalid_argument,
                "--objective " + detail::quoted(arguments.objective) + ": the builtin problem " +
                    arguments.kernel + " has no metrics (objectives: time, energy, power)");
  goal.timing.observe_power = timing.observe_power || goal.objective.needs_power();
  if (goal.timing.observe_power) require_power_observation(asked_by);
  return goal;
}

// What can be checked before any GPU work: each size's text, a kernel file's problem as far as
// it goes without a device (its file, its names, its sizes), the objective and what observing
// power needs.
void check_before_gpu(const TuneArguments& arguments) {
  const ProblemSource source = problem_source(arguments);
  if (!source.is_file() && !arguments.problem.empty())
    throw Error(ErrorKind::invalid_argument,
                "--problem describes a kernel file's problem: give the file (ptxrt tune FILE.cu "
                "--problem P.json), not the builtin problem " +
                    arguments.kernel);
  const std::optional<KernelProblem> problem = file_problem(arguments);
  for (const std::string& size : sizes_of(arguments)) {
    const ProblemSizes sizes = tune_sizes(source, size);
    if (problem) problem->complete_sizes(sizes);
  }
  // A plan times nothing: it needs no NVML.
  if (!arguments.dry_run && !arguments.worker) tune_goal(arguments, problem);
}

void run_worker(const TuneArguments& arguments) {
  tie_worker_to_parent();
  const int code = run_tune_worker(
      [&] {
        return open_tune_session(problem_source(arguments), sizes_of(arguments).front(),
                                 arguments.device.value_or(0));
      },
      worker_timing(arguments), std::cin, std::cout);
  if (code != 0) throw CLI::RuntimeError(code);
}

TuneOptions tune_options(const TuneArguments& arguments, const TuneRun& run,
                         const TuningDatabase& database, const std::atomic<bool>& stop) {
  const TuneGoal goal = tune_goal(arguments, file_problem(arguments));
  TuneOptions options;
  options.timing = goal.timing;
  options.objective = goal.objective;
  options.stop = &stop;
  options.strategy = parse_tuning_strategy(arguments.strategy);
  if (arguments.budget > 0) options.budget = arguments.budget;
  if (arguments.time_limit > 0.0) options.time_limit_seconds = arguments.time_limit;
  options.seed = arguments.seed;
  options.compile_threads = arguments.no_parallel_compile ? 0 : run.compile_threads;
  options.resume = arguments.resume;
  options.database = &database;
  if (!arguments.shard.empty()) options.share = parse_tune_share(arguments.shard, "--shard");
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

nlohmann::json tune_one(const TuneArguments& arguments, const std::string& size, const TuneRun& run,
                        const TuningDatabase& database, const std::atomic<bool>& stop) {
  const DeviceProperties& device = run.devices.front();
  const TuneJob job =
      make_tune_job(problem_source(arguments), size, device,
                    select_target(device.cc_major, device.cc_minor, ImageFormat::cubin),
                    compile_timeout(arguments));
  JobTuneOptions options{.tune = tune_options(arguments, run, database, stop),
                         .devices = {},
                         .measure_peer = run.prints,
                         .tune_function = run.tune};
  options.tune.first = job.first;
  for (const DeviceProperties& each : run.devices) options.devices.push_back(each.ordinal);
  const TuneOutcome outcome =
      tune_job({job.key, job.space, job.compiler, job.default_config, job.worker_command}, options,
               progress_line(arguments.json || !run.prints));
  TuneSetting setting{outcome.key,
                      arguments.strategy,
                      database.path().string(),
                      outcome.compile_threads,
                      outcome.workers_started,
                      outcome.devices,
                      outcome.default_config,
                      outcome.phases,
                      job.first};
  if (run.complete_setting) run.complete_setting(setting);
  if (run.prints && !arguments.json)
    print_tune_report(std::cout, setting, outcome.report, outcome.peer);
  return tune_report_json(setting, outcome.report, outcome.peer);
}

// The dry run's progress on stderr (stdout holds the plan): on a terminal one line rewritten in
// place at most 4 times a second, elsewhere (a log) a line every 5 seconds; nothing for a plan
// that compiles within the first of them.
class PlanProgress {
 public:
  void show(const TuneProgress& progress) {
    if (Clock::now() - last_ < interval_) return;
    last_ = Clock::now();
    if (terminal_)
      std::cerr << "\r\033[K" << format_plan_progress(progress) << std::flush;
    else
      std::cerr << "ptxrt: " << format_plan_progress(progress) << '\n';
    shown_ = true;
  }
  // Clears the terminal's line, before the plan is printed.
  void clear() {
    if (terminal_ && shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool terminal_ = ::isatty(STDERR_FILENO) != 0;
  Clock::duration interval_ = std::chrono::milliseconds(terminal_ ? 250 : 5000);
  Clock::time_point last_ = Clock::now();
  bool shown_ = false;
};

// --dry-run: the plan for the --arch's device model (or device 0's, for auto with a GPU). Ctrl-C
// (SIGTERM) stops the compiling as it stops a tune, cancelling the compiles in progress: the plan
// so far is printed, with the configs left uncompiled, and the exit code is 130 (143); --time
// stops it the same way, exit code 0.
void plan_only(const TuneArguments& arguments) {
  const Target target = choose_target(arguments.arch, ImageFormat::cubin);
  const auto [major, minor] = compute_capability_of(target.arch);
  DeviceProperties device = device_model(major, minor);
  if (arguments.sm_count > 0) {
    device.sm_count = arguments.sm_count;
    device.name += " with " + std::to_string(arguments.sm_count) + " SMs";
  }
  const apps::StopSignal stop(
      "\nptxrt: stopping the dry run, cancelling the compiles in progress (press Ctrl-C again to "
      "quit at once)\n");
  PlanOptions options;
  options.compile_threads = arguments.no_parallel_compile ? 0 : TuneOptions{}.compile_threads;
  options.stop = &stop.requested();
  if (arguments.time_limit > 0.0) options.time_limit_seconds = arguments.time_limit;
  PlanProgress progress;
  // --json promises the plans alone, as a tune's --json promises no progress.
  if (!arguments.json)
    options.progress = [&progress](const TuneProgress& done) { progress.show(done); };
  nlohmann::json plans = nlohmann::json::array();
  std::size_t not_compiled = 0;
  std::size_t sizes_left = sizes_of(arguments).size();
  for (const std::string& size : sizes_of(arguments)) {
    if (stop.signal() != 0) break;
    --sizes_left;
    const TuneJob job =
        make_tune_job(problem_source(arguments), size, device, target, compile_timeout(arguments));
    const TunePlan plan = plan_tune(job.space, job.compiler, options);
    progress.clear();
    not_compiled += plan.not_compiled;
    if (arguments.json)
      plans.push_back(tune_plan_json(job.key, arguments.strategy, plan));
    else
      print_tune_plan(std::cout, job.key, arguments.strategy, plan);
  }
  if (arguments.json) print_json(std::cout, plans);
  if (stop.signal() == 0) return;
  std::cerr << "ptxrt: dry run interrupted by " << (stop.signal() == SIGINT ? "SIGINT" : "SIGTERM")
            << ": " << not_compiled << " config(s) not compiled";
  if (sizes_left > 0) std::cerr << ", " << sizes_left << " size(s) not started";
  std::cerr << '\n';
  throw CLI::RuntimeError(apps::StopSignal::exit_code(stop.signal()));
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

// The command that carries on where an interrupted tune stopped: `tune resume`, which reads what
// the tune was asked from the database.
std::string resume_command(const TuningDatabase& database, const std::string& request_id) {
  return "ptxrt tune resume --db " + shell_word(database.path().string()) + " --id " +
         shell_word(request_id);
}

void print_interrupted(std::ostream& out, const TuneArguments& arguments,
                       const TuningDatabase& database, const std::string& request_id,
                       const nlohmann::json& reports, int signal) {
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
  out << "\nptxrt: resume with: " << resume_command(database, request_id) << '\n';
}

// --continues ID names a request of the database (as tune resume gives it), or the tune does not
// start.
void require_recorded(const TuningDatabase& database, const std::string& id) {
  const std::vector<TuneRequest> requests = database.requests();
  if (std::none_of(requests.begin(), requests.end(),
                   [&](const TuneRequest& request) { return request.id == id; }))
    throw Error(ErrorKind::not_found, "--continues " + detail::quoted(id) + ": " +
                                          database.path().string() + " holds no such tune request");
}

void run_tune(const TuneArguments& arguments) {
  if (arguments.kernel.empty()) throw CLI::RequiredError("kernel (or `tune show`)");
  check_file_or_builtin(arguments.kernel, apps::tune_problem_names(), "tuning problem",
                        {"tune show", "tune merge", "tune resume"});
  if (!arguments.problem.empty()) check_file_exists(arguments.problem, "--problem");
  // A bad size, problem, strategy name, device list or share fails before any GPU work (and
  // before MPI).
  check_before_gpu(arguments);
  parse_tuning_strategy(arguments.strategy);
  const std::optional<std::vector<int>> listed = listed_devices(arguments);
  if (!arguments.shard.empty()) parse_tune_share(arguments.shard, "--shard");
  if (arguments.arch != TuneArguments{}.arch && !arguments.dry_run)
    throw Error(ErrorKind::invalid_argument,
                "--arch applies with --dry-run (a tune compiles for the device it times on)");
  if (arguments.sm_count != TuneArguments{}.sm_count && !arguments.dry_run)
    throw Error(ErrorKind::invalid_argument,
                "--sm-count applies with --dry-run (a tune plans for the device it times on)");
  if (arguments.worker) return run_worker(arguments);
  if (arguments.dry_run) return plan_only(arguments);
  if (arguments.mpi) return run_tunes_as_rank(arguments);
  TuneRun run;
  run.devices = one_model_devices(listed);
  run.compile_threads = TuneOptions{}.compile_threads;
  run.any = [](bool value) { return value; };
  run_tunes(arguments, run);
}

void merge(const std::vector<std::string>& inputs, const std::string& output) {
  std::vector<std::vector<TuningRecord>> sources;
  for (const std::string& input : inputs) {
    if (!std::filesystem::exists(input))
      throw Error(ErrorKind::io, "tune merge: " + detail::quoted_path(input) + " does not exist");
    sources.push_back(TuningDatabase(input).records());
  }
  const TuningDatabase database(output);
  database.merge_from(TuningDatabase::merge(sources));
  const std::vector<TuningRecord> records = database.records();
  std::size_t measurements = 0;
  for (const TuningRecord& record : records) measurements += record.measurements.size();
  std::cout << "merged " << inputs.size() << " database(s) into " << database.path().string()
            << ": " << records.size() << " tune(s), " << measurements << " measurement(s)\n";
  print_tune_records(std::cout, records);
}

void show(const std::string& given, bool json) {
  const TuningDatabase database(database_path(given));
  const std::vector<TuningRecord> records = database.records();
  if (json) {
    print_json(std::cout, tune_records_json(records));
    return;
  }
  if (records.empty()) {
    std::cout << "no tunes recorded in " << database.path().string() << '\n';
    return;
  }
  print_tune_records(std::cout, records);
}

// The request `id` in `database`, else its latest one not finished.
TuneRequest request_to_resume(const TuningDatabase& database, const std::string& id) {
  const std::string where = "tune resume: " + detail::quoted_path(database.path());
  if (!std::filesystem::exists(database.path()))
    throw Error(ErrorKind::io, where + " does not exist");
  const std::vector<TuneRequest> requests = database.requests();
  if (requests.empty())
    throw Error(ErrorKind::not_found,
                where +
                    " records no tune request (a ptxrt before 'tune resume' wrote it): run the "
                    "tune's own command again with --resume");
  for (auto request = requests.rbegin(); request != requests.rend(); ++request)
    if (id.empty() ? !request->finished : request->id == id) return *request;
  throw Error(ErrorKind::not_found,
              where + (id.empty() ? " holds no interrupted tune: every one recorded finished"
                                  : " holds no tune request " + detail::quoted(id)));
}

// `ptxrt tune resume`: the recorded request parsed as `ptxrt tune` parses its command line, with
// --resume, into the same database.
void resume(const std::string& given, const std::string& id) {
  const TuningDatabase database(database_path(given));
  const TuneRequest request = request_to_resume(database, id);
  CLI::App app;
  add_tune_commands(app);
  std::vector<std::string> arguments =
      request_arguments(nlohmann::json::parse(request.request), *app.get_subcommand("tune"),
                        "tune request " + request.id + " in " + database.path().string());
  arguments.insert(arguments.begin() + 1,
                   {"--db=" + database.path().string(), "--resume", "--continues=" + request.id});
  std::reverse(arguments.begin(), arguments.end());
  try {
    app.parse(arguments);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const CLI::ParseError& error) {
    throw Error(ErrorKind::invalid_argument, "tune request " + request.id + " in " +
                                                 database.path().string() + ": " + error.what());
  }
}

void add_resume_command(CLI::App& tune) {
  struct ResumeArguments {
    std::string database;
    std::string id;
  };
  auto arguments = std::make_shared<ResumeArguments>();
  CLI::App* command = tune.add_subcommand(
      "resume",
      "Carry on an interrupted tune from its database: what it was asked is recorded there, "
      "and the configs it measured are skipped (--resume)");
  add_database_option(*command, arguments->database);
  command->add_option("--id", arguments->id,
                      "the tune to resume, as the interrupted tune printed it (default: the "
                      "latest one not finished)");
  command->callback([arguments] { resume(arguments->database, arguments->id); });
}

void add_merge_command(CLI::App& tune) {
  struct MergeArguments {
    std::vector<std::string> inputs;
    std::string output;
  };
  auto arguments = std::make_shared<MergeArguments>();
  CLI::App* command = tune.add_subcommand(
      "merge",
      "Join tuning databases (the shards of a tune, or tunes made apart) into one: a config "
      "measured in several keeps a finished measurement over a started one, ok over any other "
      "status, the lower median of two ok ones, else the first listed");
  command->add_option("databases", arguments->inputs, "the databases to join")->required();
  command
      ->add_option("-o,--output", arguments->output,
                   "the database to write (merged with what it holds already)")
      ->required();
  command->callback([arguments] { merge(arguments->inputs, arguments->output); });
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

void run_tunes(const TuneArguments& arguments, const TuneRun& run) {
  // NVRTC answers a repeated compile from the CUDA compute cache without ptxas' report, which
  // alone knows about spills; and the tune's compile time should be its own. Set before any
  // thread starts; never overrides the user.
  ::setenv("CUDA_CACHE_DISABLE", "1", 0);
  const TuningDatabase database(database_path(arguments.database));
  const apps::StopSignal stop(
      "\nptxrt: stopping after the config in progress (press Ctrl-C again to quit at once)\n");
  // Rank 0 alone records the request of an MPI job; a resume carries on the one it read.
  std::string request_id = arguments.continues;
  if (run.prints && request_id.empty())
    request_id = database.begin_request(arguments.request);
  else if (run.prints)
    require_recorded(database, request_id);
  nlohmann::json reports = nlohmann::json::array();
  bool every_size_has_a_winner = true;
  for (const std::string& size : sizes_of(arguments)) {
    if (run.any(stop.requested().load())) break;
    reports.push_back(tune_one(arguments, size, run, database, stop.requested()));
    every_size_has_a_winner = every_size_has_a_winner && !reports.back()["winner"].is_null();
  }
  if (run.prints && arguments.json) print_json(std::cout, reports);
  if (stop.signal() != 0) {
    if (run.prints)
      print_interrupted(std::cerr, arguments, database, request_id, reports, stop.signal());
    throw CLI::RuntimeError(apps::StopSignal::exit_code(stop.signal()));
  }
  if (run.prints) database.finish_request(request_id);
  if (!every_size_has_a_winner) throw CLI::RuntimeError(1);
}

void add_tune_commands(CLI::App& app) {
  auto arguments = std::make_shared<TuneArguments>();
  CLI::App* command = app.add_subcommand(
      "tune",
      "Autotune a kernel's compile-time constants on a device: prune, compile in parallel, "
      "verify and time each config in a worker process, record every result in the tuning "
      "database");
  command->add_option("kernel", arguments->kernel,
                      "matmul, sgemm, closest-pair, or a kernel file with its problem (--problem "
                      "P.json, or the file's \"// ptxrt: problem\" lines)");
  command->add_option("--problem", arguments->problem,
                      "the kernel file's problem: entry, sizes, tunables, launch geometry, "
                      "arguments, verification (JSON; docs/tuning.md)");
  command->add_option("--size", arguments->sizes,
                      "problem size: N or MxNxK for matmul and sgemm (default 1024), points for "
                      "closest-pair (default 1048576), NAME=VALUE,... for a kernel file "
                      "(W=4096,H=4096); repeatable, one tune per size");
  command->add_option("--source", arguments->source,
                      "matmul: a kernel file to tune instead of matmul_tiled.cu (same entry, "
                      "signature and TILE_WIDTH)");
  command->add_option("--strategy", arguments->strategy, "exhaustive, random, occupancy or model")
      ->check(CLI::IsMember({"exhaustive", "random", "occupancy", "model"}))
      ->capture_default_str();
  command->add_option("--budget", arguments->budget, "time at most N configs")->check(at_least(1));
  command
      ->add_option("--time", arguments->time_limit,
                   "start no config after S seconds (with --dry-run: no compile)")
      ->check(positive_seconds());
  command->add_option("--seed", arguments->seed, "seed of the random strategy")
      ->capture_default_str();
  add_database_option(*command, arguments->database);
  command->add_flag("--resume", arguments->resume,
                    "skip the configs the database has a finished measurement of");
  command->add_flag("--json", arguments->json, "print the reports as a JSON array, no progress");
  command->add_flag("--no-parallel-compile", arguments->no_parallel_compile,
                    "compile each config just before timing it, on one thread");
  CLI::Option* device =
      command->add_option("--device", arguments->device, "device ordinal (default 0)")
          ->check(at_least(0));
  command
      ->add_option("--devices", arguments->devices,
                   "time on several devices at once, one worker each: 'all' or ordinals such as "
                   "0,1 (all of one model); with --mpi, the devices the ranks of a node take "
                   "turns on")
      ->excludes(device);
  CLI::Option* shard = command->add_option(
      "--shard", arguments->shard,
      "tune share I of N (I/N, from 0/N): the allowed configs dealt round robin, for the jobs of "
      "a scheduler; join their databases with `ptxrt tune merge`");
  command
      ->add_flag("--mpi", arguments->mpi,
                 "run as one rank of an MPI job (mpirun -n R ptxrt tune ... --mpi): the ranks "
                 "share the configs, each timing on its node-local rank's GPU (or --device, "
                 "--devices); the best time is shared, every rank records into --db")
      ->excludes(shard);
  command
      ->add_option("--silence-limit", arguments->silence_limit,
                   "with --mpi: a rank not heard from for S seconds counts as lost (it died); the "
                   "others finish their shares and exit non-zero (launch with `mpirun --mca "
                   "orte_abort_on_non_zero_status 0` so that Open MPI lets them); more than a "
                   "config's compile timeout and measurement")
      ->check(at_least(1))
      ->capture_default_str()
      ->needs("--mpi");
  command
      ->add_option("--compile-timeout", arguments->compile_timeout,
                   "cancel a config's compile after S seconds (recorded compile_timeout)")
      ->check(positive_seconds())
      ->capture_default_str();
  command->add_flag("--dry-run", arguments->dry_run,
                    "plan without a GPU: enumerate, prune by constraints, compile every config "
                    "for --arch and prune by its resources; print what would be timed and why "
                    "the rest would not");
  add_arch_option(*command, arguments->arch);
  command
      ->add_option("--sm-count", arguments->sm_count,
                   "with --dry-run: the SMs of the device planned for (132 for an H100 SXM or an "
                   "H200). Constraints that depend on it, as sgemm's choice of tiles and splits "
                   "for the shape, plan as for 1 SM without it")
      ->check(at_least(1));
  command
      ->add_option("--l2", arguments->l2,
                   "flush: write over the L2 before every timed run, so that each reads its "
                   "inputs from memory, as a kernel among others in a program does and whatever "
                   "order the configs run in (the default, and every tune before this option); "
                   "warm: time runs back to back, each finding in L2 what the last left, as "
                   "Kernel Tuner and a loop of one kernel do. The database keeps the two apart")
      ->check(CLI::IsMember({"flush", "warm"}))
      ->capture_default_str();
  command
      ->add_option("--observe", arguments->observe,
                   "power: after timing each ok config, run it back to back for at least 100 ms "
                   "and read its energy per run, mean power, SM clock and temperature through "
                   "NVML (libnvidia-ml.so.1); costs that time per config")
      ->check(CLI::IsMember({"none", "power"}))
      ->capture_default_str();
  command
      ->add_option("--objective", arguments->objective,
                   "what the winner is best at: time, energy (per run) or power (lower is "
                   "better; energy and power observe power), or a metric of the problem file "
                   "(its \"maximize\" says the direction). Only time cuts clearly slower configs")
      ->capture_default_str();
  command->add_flag("--worker", arguments->worker, "(internal) serve as the GPU worker")->group("");
  command
      ->add_option("--continues", arguments->continues,
                   "(internal) the recorded request this run carries on (tune resume)")
      ->group("");
  add_show_command(*command);
  add_merge_command(*command);
  add_kernel_tuner_commands(*command);
  add_resume_command(*command);
  command->callback([command, arguments] {
    if (!command->get_subcommands().empty()) return;
    // Text from outside need not be UTF-8, which JSON requires: such bytes become U+FFFD.
    arguments->request =
        tune_request(*command).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    run_tune(*arguments);
  });
}

}  // namespace ptxrt::cli
