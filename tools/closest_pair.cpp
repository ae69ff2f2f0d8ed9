#include "closest_pair.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_bench.hpp"
#include "apps/closest_pair/device_slab.hpp"
#include "apps/closest_pair/point_file.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/tune/tune_problems.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/core/memory.hpp"
#include "tools/cli.hpp"
#include "tools/host_commands.hpp"

namespace ptxrt::cli {

apps::ClosestPairOptions closest_pair_options(const ClosestPairArguments& arguments) {
  // -D takes BASE only (the divide & conquer's and brute force's block size).
  int base = 128;
  for (const std::string& text : arguments.defines) {
    const Define define = parse_define(text);
    if (define.name != "BASE")
      throw Error(ErrorKind::invalid_argument,
                  "closest-pair: unknown define '" + define.name + "'; only BASE is accepted");
    try {
      std::size_t used = 0;
      base = std::stoi(define.value, &used);
      if (used != define.value.size()) throw std::invalid_argument(define.value);
    } catch (const std::logic_error&) {
      throw Error(ErrorKind::invalid_argument,
                  "closest-pair: BASE '" + define.value + "' is not a number");
    }
  }
  return {.base = base, .cpu_block = arguments.cpu_block};
}

std::string describe_input(const ClosestPairArguments& arguments) {
  return arguments.input.empty()
             ? arguments.distribution + ", seed " + std::to_string(arguments.seed)
             : arguments.input;
}

std::string describe_point(const apps::Point2& p) {
  std::ostringstream out;
  out << std::setprecision(9) << '(' << p.x << ", " << p.y << ')';
  return out.str();
}

namespace {

// --tuned: the BASE the tuning database picks for n points on device 0.
std::optional<TunedChoice> tuned_base(const ClosestPairArguments& arguments, std::size_t n) {
  if (!arguments.tuned) return std::nullopt;
  if (!arguments.defines.empty())
    throw Error(ErrorKind::invalid_argument, "--tuned picks BASE itself: drop -D");
  const DeviceProperties device = Device::get(0).properties();
  const TuningDatabase database(database_path(arguments.database));
  return apps::choose_tuned(apps::closest_pair_problem(), {{"n", static_cast<std::int64_t>(n)}},
                            device, database);
}

nlohmann::json times_json(const apps::ClosestPairTimes& times) {
  return {{"setup_ms", times.setup_ms}, {"upload_ms", times.upload_ms},
          {"sort_ms", times.sort_ms},   {"rest_ms", times.rest_ms},
          {"gpu_ms", times.gpu_ms()},   {"total_ms", times.total_ms}};
}

std::string describe_times(const apps::ClosestPairTimes& times, bool gpu) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3);
  if (!gpu) {
    out << "sort " << times.sort_ms << " ms, rest " << times.rest_ms << " ms, total "
        << times.total_ms << " ms";
    return out.str();
  }
  out << "set-up " << times.setup_ms << " ms (context, JIT), upload " << times.upload_ms
      << " ms, GPU " << times.gpu_ms() << " ms (sort " << times.sort_ms << ", rest "
      << times.rest_ms << "), total " << times.total_ms << " ms";
  return out.str();
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Where the points are when a call starts: --from, else on the GPU for a generated set and a GPU
// method (made there), else in host memory.
std::string where_from(const ClosestPairArguments& arguments, apps::ClosestPairMethod method) {
  if (!arguments.from.empty()) return arguments.from;
  const bool gpu = apps::is_gpu_method(apps::resolve_closest_pair_method(method, arguments.n));
  return arguments.input.empty() && gpu ? "device" : "host";
}

// The points of a run: in host memory (generated on the CPU or read), or, for a generated set
// from the device, made on the GPU as the slab of the whole set, never on the host.
struct RunInput {
  std::vector<apps::Point2> points;
  std::unique_ptr<apps::SlabKernels> kernels;  // the GPU generator of `generated`
  std::optional<apps::DeviceSlab> generated;
  double setup_ms = 0.0;  // what the GPU generator needed first: the driver, context, kernels
  double input_ms = 0.0;

  std::size_t size() const { return generated ? generated->size() : points.size(); }
  apps::Point2 at(std::size_t k) const { return generated ? generated->point(k) : points[k]; }
};

std::vector<apps::Point2> generate_on_host(const ClosestPairArguments& arguments) {
  return apps::generate_points(arguments.n, apps::parse_point_distribution(arguments.distribution),
                               arguments.seed);
}

RunInput make_input(const ClosestPairArguments& arguments, const std::string& from,
                    const apps::ClosestPairOptions& options) {
  RunInput input;
  const auto start = std::chrono::steady_clock::now();
  if (arguments.input.empty() && from == "device") {
    input.kernels = std::make_unique<apps::SlabKernels>(
        Context::primary(0), options.jit != nullptr ? *options.jit : Jit::shared());
    input.setup_ms = milliseconds_since(start);
    const auto made = std::chrono::steady_clock::now();
    input.generated.emplace(apps::DeviceSlab::generate(
        *input.kernels,
        {.generator = apps::point_generator(apps::parse_point_distribution(arguments.distribution),
                                            arguments.seed),
         .count = arguments.n}));
    input.input_ms = milliseconds_since(made);
    return input;
  }
  input.points = arguments.input.empty() ? generate_on_host(arguments)
                                         : apps::read_point_file(arguments.input);
  input.input_ms = milliseconds_since(start);
  return input;
}

// The calls of one run: the points from host memory, pinned host memory, or the device (made
// there, or uploaded once beforehand, untimed: "already there").
std::vector<apps::ClosestPair> find_pairs(const ClosestPairArguments& arguments,
                                          const std::string& from, const RunInput& input,
                                          apps::ClosestPairMethod method,
                                          const apps::ClosestPairOptions& options) {
  std::vector<apps::ClosestPair> calls;
  if (from == "host") {
    for (int call = 0; call < arguments.repeat; ++call)
      calls.push_back(apps::closest_pair(input.points, method, options));
    return calls;
  }
  method = apps::resolve_device_method(method);
  apps::ClosestPairOptions on_device = options;
  on_device.context = Context::primary(0);
  if (input.generated) {
    // The generator's box is the check: its points are finite.
    for (int call = 0; call < arguments.repeat; ++call)
      calls.push_back(apps::closest_pair_in_box(*on_device.context, input.generated->points(),
                                                input.generated->box(), method, on_device));
    return calls;
  }
  if (from == "pinned") {
    PinnedBuffer<apps::Point2> pinned(*on_device.context, input.points.size());
    std::copy(input.points.begin(), input.points.end(), pinned.span().begin());
    for (int call = 0; call < arguments.repeat; ++call)
      calls.push_back(apps::closest_pair(pinned, method, on_device));
    return calls;
  }
  const DeviceBuffer<apps::Point2> device(*on_device.context,
                                          std::span<const apps::Point2>(input.points));
  for (int call = 0; call < arguments.repeat; ++call)
    calls.push_back(apps::closest_pair(device, method, on_device));
  return calls;
}

// With --verify, a distance that differs from cpu-dc's is an error (exit 1) after the report.
void run_one(const ClosestPairArguments& arguments) {
  if (arguments.input.empty() && arguments.n > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument,
                "closest-pair --n " + std::to_string(arguments.n) +
                    " exceeds the 2147483647 points one process takes: spread them over MPI "
                    "ranks (--mpi)");
  const apps::ClosestPairMethod method = apps::parse_closest_pair_method(arguments.method);
  const std::string from = where_from(arguments, method);
  // Checked before a context exists: a CPU method fails the same way with or without a GPU.
  if (from != "host") apps::resolve_device_method(method);
  apps::ClosestPairOptions options = closest_pair_options(arguments);
  const RunInput input = make_input(arguments, from, options);
  const std::optional<TunedChoice> tuned = tuned_base(arguments, input.size());
  if (tuned) {
    options.base = static_cast<int>(tuned->config.at("BASE"));
    if (!arguments.json) std::cout << "tuned: " << tuned->describe() << '\n';
  }
  const std::vector<apps::ClosestPair> calls = find_pairs(arguments, from, input, method, options);
  const apps::ClosestPair& found = calls.back();
  const bool gpu = apps::is_gpu_method(found.method);
  const std::string source = describe_input(arguments);
  const apps::Point2 point_i = input.at(found.i);
  const apps::Point2 point_j = input.at(found.j);
  nlohmann::json json{{"n", input.size()},
                      {"input", source},
                      {"from", from},
                      {"method", std::string(to_string(found.method))},
                      {"i", found.i},
                      {"j", found.j},
                      {"point_i", {point_i.x, point_i.y}},
                      {"point_j", {point_j.x, point_j.y}},
                      {"distance", found.distance},
                      {"input_setup_ms", input.setup_ms},
                      {"input_ms", input.input_ms},
                      {"times", times_json(found.times)},
                      {"calls", nlohmann::json::array()}};
  for (const apps::ClosestPair& call : calls) json["calls"].push_back(times_json(call.times));
  if (tuned) json["tuned"] = tools::tuned_json(*tuned);
  bool agrees = true;
  if (arguments.verify) {
    const apps::ClosestPair reference =
        apps::closest_pair(input.generated ? generate_on_host(arguments) : input.points,
                           apps::ClosestPairMethod::cpu_divide_conquer, options);
    agrees = reference.distance == found.distance;
    for (const apps::ClosestPair& call : calls) agrees = agrees && call.distance == found.distance;
    json["verify"] = {{"method", "cpu-dc"}, {"distance", reference.distance}, {"agrees", agrees}};
  }
  if (arguments.json) {
    print_json(std::cout, json);
  } else {
    std::cout << "closest pair of " << input.size() << " points (" << source << ") from " << from
              << " memory by " << to_string(found.method) << ":\n"
              << "  i = " << found.i << ' ' << describe_point(point_i) << ", j = " << found.j << ' '
              << describe_point(point_j) << '\n'
              << "  distance = " << std::setprecision(17) << found.distance << '\n';
    std::cout << std::fixed << std::setprecision(3)
              << "  input: " << (arguments.input.empty() ? "generated" : "read") << " in "
              << input.input_ms << " ms ";
    if (input.generated)
      std::cout << "(on the GPU, after a set-up of " << input.setup_ms
                << " ms: context and generator)\n";
    else
      std::cout << "(on the CPU)\n";
    for (std::size_t call = 0; call < calls.size(); ++call)
      std::cout << "  time" << (calls.size() > 1 ? " of call " + std::to_string(call + 1) : "")
                << ": " << describe_times(calls[call].times, gpu) << '\n';
    if (arguments.verify)
      std::cout << "  verify (cpu-dc): " << (agrees ? "same distance" : "DIFFERENT distance")
                << '\n';
  }
  if (!agrees)
    throw std::runtime_error("closest-pair --verify: " + std::string(to_string(found.method)) +
                             " and cpu-dc found different distances");
}

// A method whose distance differs from the others' at the same n is an error after the table.
void run_bench(const ClosestPairArguments& arguments) {
  apps::ClosestPairBenchOptions options;
  options.max_n = arguments.bench_max_n;
  options.distribution = apps::parse_point_distribution(arguments.distribution);
  options.seed = arguments.seed;
  options.closest_pair.base = closest_pair_options(arguments).base;
  const std::vector<apps::ClosestPairBenchRow> rows = apps::run_closest_pair_bench(options);
  bool all_agree = true;
  nlohmann::json json = nlohmann::json::array();
  std::cout << std::fixed << std::setprecision(3);
  if (!arguments.json)
    std::cout << arguments.distribution << " points; GPU methods from pinned host memory, warm\n"
              << std::setw(11) << "n" << std::setw(8) << "method" << std::setw(10) << "set-up"
              << std::setw(10) << "upload" << std::setw(10) << "sort" << std::setw(10) << "rest"
              << std::setw(12) << "gpu/cpu" << std::setw(12) << "total"
              << "  (ms)  distance, agrees\n";
  for (const apps::ClosestPairBenchRow& row : rows) {
    all_agree = all_agree && row.agrees;
    if (arguments.json) {
      json.push_back({{"n", row.n},
                      {"distribution", arguments.distribution},
                      {"method", std::string(to_string(row.method))},
                      {"times", times_json(row.times)},
                      {"distance", row.distance},
                      {"agrees", row.agrees}});
      continue;
    }
    std::cout << std::setw(11) << row.n << std::setw(8) << to_string(row.method) << std::setw(10)
              << row.times.setup_ms << std::setw(10) << row.times.upload_ms << std::setw(10)
              << row.times.sort_ms << std::setw(10) << row.times.rest_ms << std::setw(12)
              << row.times.gpu_ms() << std::setw(12) << row.times.total_ms << "        "
              << std::scientific << std::setprecision(9) << row.distance << std::fixed
              << std::setprecision(3) << (row.agrees ? ", yes" : ", NO") << '\n';
  }
  if (arguments.json) print_json(std::cout, json);
  if (!all_agree)
    throw std::runtime_error("closest-pair --bench: the methods disagree on a distance");
}

}  // namespace

void add_closest_pair_command(CLI::App& app) {
  auto arguments = std::make_shared<ClosestPairArguments>();
  CLI::App* command = app.add_subcommand(
      "closest-pair", "The closest pair of 2-D points (generated or from a file) on CPU or GPU");
  // One process takes at most 2^31 - 1 points (closest_pair()); --mpi spreads more.
  CLI::Option* n =
      command
          ->add_option("--n", arguments->n,
                       "how many points to generate (default 1000000; at most 2147483647, with "
                       "--mpi at most that many per rank)")
          ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 62));
  CLI::Option* distribution =
      command->add_option("--dist", arguments->distribution, "uniform | normal | clustered")
          ->check(CLI::IsMember({"uniform", "normal", "clustered"}));
  command->add_option("--seed", arguments->seed, "random seed (default 1)");
  command
      ->add_option("--input", arguments->input,
                   "read points instead: CSV (x,y per line, optional header) or raw "
                   "little-endian float32 pairs (.bin)")
      ->excludes(n)
      ->excludes(distribution);
  command->add_option("--method", arguments->method,
                      "auto | grid | dc | brute | cpu-dc | cpu-brute | cpu-blocked (default auto: "
                      "grid on a GPU for n >= 4096, else cpu-dc)");
  command->add_option("-D,--define", arguments->defines,
                      "BASE=32|64|128|256|512|1024: points per leaf and threads per block of dc "
                      "and brute (default 128)");
  command->add_option("--block", arguments->cpu_block, "cpu-blocked: points per cache block")
      ->check(at_least(1));
  CLI::Option* from =
      command
          ->add_option("--from", arguments->from,
                       "where the points are when the search starts: host (a std::vector), pinned "
                       "(page-locked host memory) or device (a generated set made there by the "
                       "GPU, the same points as the CPU makes; a file's uploaded beforehand, "
                       "untimed); pinned and device need a GPU method (auto: grid). Default: "
                       "device for a generated set and a GPU method, else host")
          ->check(CLI::IsMember({"host", "pinned", "device"}));
  CLI::Option* repeat =
      command
          ->add_option("--repeat", arguments->repeat,
                       "calls in one process, each reported (the first pays the set-up)")
          ->check(CLI::Range(1, 1000));
  command->add_flag("--verify", arguments->verify,
                    "also run cpu-dc (with --mpi: rank 0, on the whole set in one process) and "
                    "exit 1 unless the distances are equal");
  command->add_flag("--json", arguments->json,
                    "print {n, input, from, method, i, j, point_i, point_j, distance, "
                    "input_setup_ms (the GPU generator's context and kernels), input_ms "
                    "(generating or reading the points), times{setup_ms, upload_ms, sort_ms, "
                    "rest_ms, gpu_ms, total_ms} of the last call, calls[times of each], "
                    "verify{...}}; with --mpi times{setup_ms, input_ms, split_ms, solve_ms, "
                    "border_ms, reduce_ms, total_ms} (each the slowest rank's; total leaves the "
                    "set-up out), slowest_rank, and ranks[{the same phases, input_points, "
                    "slab_points, border_points_sent, border_points_received, device}]");
  // The table takes its points from pinned memory, warm, in calls of its own.
  CLI::Option* bench =
      command
          ->add_flag("--bench", arguments->bench,
                     "time every method on 1M, 10M, 100M points of --dist (GPU methods from "
                     "pinned memory, warm) and print a table")
          ->excludes(from)
          ->excludes(repeat);
  CLI::Option* bench_max_n = command->add_option("--bench-max-n", arguments->bench_max_n,
                                                 "--bench: the largest size (default 100000000)");
  CLI::Option* mpi =
      command
          ->add_flag("--mpi", arguments->mpi,
                     "run as one rank of an MPI job (mpirun -n R ptxrt closest-pair --mpi ...): "
                     "the set is cut into x-slabs, one per rank; a generated set is regenerated "
                     "by every rank, which keeps its slab (on its GPU for a GPU method), a file "
                     "is read by parts and its points exchanged; each rank solves its slab with "
                     "--method (GPU methods on the node-local rank's GPU) and the pairs across "
                     "slab borders are resolved on the CPU")
          ->excludes(bench)
          ->excludes(bench_max_n)
          ->excludes(from)
          ->excludes(repeat);
  command
      ->add_option("--devices", arguments->devices,
                   "--mpi: the GPUs the ranks of a node take in turn, 'all' (default) or "
                   "ordinals such as 0,1")
      ->needs(mpi);
  CLI::Option* tuned =
      command
          ->add_flag("--tuned", arguments->tuned,
                     "BASE from the tuning database for this n on device 0 (exact, nearest size, "
                     "same compute capability, else the default); printed, and in --json as "
                     "\"tuned\"")
          ->excludes(bench)
          ->excludes(mpi);
  add_database_option(*command, arguments->database, "with --tuned: ");
  command->callback([command, tuned, arguments] {
    if (command->count("--db") && !*tuned)
      throw Error(ErrorKind::invalid_argument, "--db applies with --tuned");
    if (arguments->bench) {
      run_bench(*arguments);
    } else if (arguments->mpi) {
      run_closest_pair_as_rank(*arguments);
    } else {
      run_one(*arguments);
    }
  });
}

}  // namespace ptxrt::cli
