// `ptxrt closest-pair ... --mpi`: each rank sets up its GPU (or its CPU method), ptxrt::mpi
// finds the pair across the ranks (a generated set: each rank regenerates it and keeps its slab;
// a file: each rank reads its part and the ranks exchange points), rank 0 reports every rank's
// phases.
#include <algorithm>
#include <chrono>
#include <climits>
#include <iomanip>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "apps/closest_pair/point_file.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/device_selection.hpp"
#include "tools/cli.hpp"
#include "tools/closest_pair.hpp"
#include "tools/mpi/closest_pair_slabs.hpp"
#include "tools/mpi/ranks.hpp"

namespace ptxrt::cli {

namespace {

// This rank's even part of `total` points: the first total % size ranks take one more.
struct Range {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};
Range rank_range(std::uint64_t total, const mpi::Placement& placement) {
  const auto rank = static_cast<std::uint64_t>(placement.rank);
  const auto size = static_cast<std::uint64_t>(placement.size);
  const std::uint64_t base = total / size;
  const std::uint64_t extra = total % size;
  return {base * rank + std::min(rank, extra), base + (rank < extra ? 1 : 0)};
}

// A binary file read by byte range; a CSV file (which has no fixed record size) read whole by
// every rank.
std::vector<mpi::IndexedPoint> read_rank_points(const std::string& input,
                                                const mpi::Placement& placement) {
  std::vector<apps::Point2> points;
  Range range;
  if (std::filesystem::path(input).extension() == ".bin") {
    range = rank_range(apps::count_binary_points(input), placement);
    points = apps::read_binary_point_range(input, range.first, range.count);
  } else {
    const std::vector<apps::Point2> all = apps::read_point_file(input);
    range = rank_range(all.size(), placement);
    points.assign(all.begin() + static_cast<std::ptrdiff_t>(range.first),
                  all.begin() + static_cast<std::ptrdiff_t>(range.first + range.count));
  }
  std::vector<mpi::IndexedPoint> indexed;
  indexed.reserve(points.size());
  for (std::size_t k = 0; k < points.size(); ++k)
    indexed.push_back({points[k].x, points[k].y, range.first + k});
  return indexed;
}

// What a rank did before the distributed closest pair: its device (-1: a CPU method) and the
// milliseconds of its set-up (context, kernels).
struct RankSetup {
  int device = -1;
  double setup_ms = 0.0;
};

std::vector<RankSetup> every_rank_setup(const RankSetup& mine) {
  std::ostringstream text;
  text << mine.device << ' ' << std::setprecision(17) << mine.setup_ms;
  std::vector<RankSetup> setups;
  for (const std::string& each : mpi::gather_text(MPI_COMM_WORLD, text.str())) {
    std::istringstream fields(each);
    RankSetup setup;
    fields >> setup.device >> setup.setup_ms;
    setups.push_back(setup);
  }
  return setups;
}

// One rank's phases, in the order they run (the JSON's keys and the table's columns): the
// set-up, then the distributed closest pair's, whose total leaves the set-up out.
struct Phase {
  const char* key;
  const char* heading;
  double mpi::ClosestPairRankStats::*stat;  // null: the set-up
};
constexpr Phase phases[] = {
    {"setup_ms", "set-up", nullptr},
    {"input_ms", "input", &mpi::ClosestPairRankStats::input_ms},
    {"split_ms", "split", &mpi::ClosestPairRankStats::split_ms},
    {"solve_ms", "solve", &mpi::ClosestPairRankStats::solve_ms},
    {"border_ms", "border", &mpi::ClosestPairRankStats::border_ms},
    {"reduce_ms", "reduce", &mpi::ClosestPairRankStats::reduce_ms},
    {"total_ms", "total", &mpi::ClosestPairRankStats::total_ms},
};

double phase_ms(const Phase& phase, const mpi::ClosestPairRankStats& stats,
                const RankSetup& setup) {
  return phase.stat != nullptr ? stats.*phase.stat : setup.setup_ms;
}

// Every rank's phases and counts, and the slowest rank's time of each phase.
struct PhaseReport {
  nlohmann::json ranks = nlohmann::json::array();
  nlohmann::json slowest = nlohmann::json::object();
  std::size_t slowest_rank = 0;  // by total
};

PhaseReport phase_report(const mpi::DistributedClosestPair& found,
                         const std::vector<RankSetup>& setups) {
  PhaseReport report;
  for (const Phase& phase : phases) report.slowest[phase.key] = 0.0;
  for (std::size_t rank = 0; rank < found.ranks.size(); ++rank) {
    const mpi::ClosestPairRankStats& stats = found.ranks[rank];
    nlohmann::json entry{{"input_points", stats.input_points},
                         {"slab_points", stats.slab_points},
                         {"border_points_sent", stats.border_points_sent},
                         {"border_points_received", stats.border_points_received},
                         {"device", setups[rank].device}};
    for (const Phase& phase : phases) {
      const double ms = phase_ms(phase, stats, setups[rank]);
      entry[phase.key] = ms;
      report.slowest[phase.key] = std::max(report.slowest[phase.key].get<double>(), ms);
    }
    if (stats.total_ms > found.ranks[report.slowest_rank].total_ms) report.slowest_rank = rank;
    report.ranks.push_back(std::move(entry));
  }
  return report;
}

void print_phase_table(const PhaseReport& report) {
  std::cout << "  ms        ";
  for (const Phase& phase : phases) std::cout << std::setw(10) << phase.heading;
  std::cout << '\n' << std::fixed << std::setprecision(3);
  const auto row = [](const std::string& name, const nlohmann::json& times) {
    std::cout << "  " << std::left << std::setw(10) << name << std::right;
    for (const Phase& phase : phases) std::cout << std::setw(10) << times[phase.key].get<double>();
    std::cout << '\n';
  };
  for (std::size_t rank = 0; rank < report.ranks.size(); ++rank)
    row("rank " + std::to_string(rank), report.ranks[rank]);
  row("slowest", report.slowest);
}

// The one-process answer on the whole set, for --verify.
apps::ClosestPair one_process_answer(const ClosestPairArguments& arguments,
                                     const apps::ClosestPairOptions& options) {
  const std::vector<apps::Point2> all =
      arguments.input.empty()
          ? apps::generate_points(
                arguments.n, apps::parse_point_distribution(arguments.distribution), arguments.seed)
          : apps::read_point_file(arguments.input);
  return apps::closest_pair(all, apps::ClosestPairMethod::cpu_divide_conquer, options);
}

void report(const ClosestPairArguments& arguments, const apps::ClosestPairOptions& options,
            apps::ClosestPairMethod method, const std::vector<RankSetup>& setups,
            const mpi::DistributedClosestPair& found) {
  const mpi::PointPair& pair = found.pair;
  const apps::Point2 first{pair.first.x, pair.first.y};
  const apps::Point2 second{pair.second.x, pair.second.y};
  const PhaseReport times = phase_report(found, setups);
  nlohmann::json json{{"n", found.points},
                      {"input", describe_input(arguments)},
                      {"method", std::string(to_string(method))},
                      {"mpi_ranks", found.ranks.size()},
                      {"i", pair.first.index},
                      {"j", pair.second.index},
                      {"point_i", {first.x, first.y}},
                      {"point_j", {second.x, second.y}},
                      {"distance", pair.distance},
                      {"times", times.slowest},
                      {"slowest_rank", times.slowest_rank},
                      {"ranks", times.ranks}};
  if (std::any_of(setups.begin(), setups.end(),
                  [](const RankSetup& each) { return each.device >= 0; })) {
    json["devices"] = nlohmann::json::array();
    for (const RankSetup& setup : setups) json["devices"].push_back(setup.device);
  }
  bool agrees = true;
  if (arguments.verify) {
    const double reference = one_process_answer(arguments, options).distance;
    agrees = reference == pair.distance;
    json["verify"] = {
        {"method", "cpu-dc, one process"}, {"distance", reference}, {"agrees", agrees}};
  }
  if (arguments.json) {
    print_json(std::cout, json);
  } else {
    std::cout << "closest pair of " << found.points << " points (" << describe_input(arguments)
              << ") by " << to_string(method) << ", MPI ranks " << found.ranks.size() << ":\n"
              << "  i = " << pair.first.index << ' ' << describe_point(first)
              << ", j = " << pair.second.index << ' ' << describe_point(second) << '\n'
              << "  distance = " << std::setprecision(17) << pair.distance << '\n';
    print_phase_table(times);
    for (std::size_t rank = 0; rank < found.ranks.size(); ++rank) {
      const mpi::ClosestPairRankStats& stats = found.ranks[rank];
      std::cout << "  rank " << rank << ": slab of " << stats.slab_points << " point(s), "
                << stats.border_points_sent << " sent and " << stats.border_points_received
                << " received near its borders";
      if (setups[rank].device >= 0) std::cout << ", device " << setups[rank].device;
      std::cout << '\n';
    }
    if (arguments.verify)
      std::cout << "  verify (cpu-dc, one process): "
                << (agrees ? "same distance" : "DIFFERENT distance") << '\n';
  }
  if (!agrees) throw CLI::RuntimeError(1);
}

}  // namespace

void run_closest_pair_as_rank(const ClosestPairArguments& arguments) {
  // What can be refused without MPI is refused before it, as in one process.
  const apps::ClosestPairOptions base_options = closest_pair_options(arguments);
  const apps::ClosestPairMethod requested = apps::parse_closest_pair_method(arguments.method);
  const apps::PointDistribution distribution =
      apps::parse_point_distribution(arguments.distribution);
  const std::optional<std::vector<int>> listed =
      arguments.devices.empty() ? std::nullopt : parse_device_list(arguments.devices);
  if (arguments.verify && arguments.input.empty() &&
      arguments.n > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument,
                "closest-pair --verify solves the whole set in one process, at most 2147483647 "
                "points; --n is " +
                    std::to_string(arguments.n));
  const bool generated = arguments.input.empty();
  run_as_rank([&](const mpi::Placement& placement) {
    const auto setup_start = std::chrono::steady_clock::now();
    // A file's size is known only once read: "auto" may take a GPU then.
    const std::uint64_t known_size =
        generated ? arguments.n : std::numeric_limits<std::uint64_t>::max();
    apps::ClosestPairOptions options = base_options;
    RankSetup setup;
    if (apps::is_gpu_method(apps::resolve_closest_pair_method(requested, known_size))) {
      setup.device = rank_device(placement, listed).ordinal;
      options.context = Context::primary(setup.device);
    }
    RankSolver solver(requested, options,
                      generated ? SlabReservation{arguments.n, placement.size} : SlabReservation{});
    setup.setup_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - setup_start)
            .count();
    const mpi::DistributedClosestPairOptions distributed{
        .solve_border = cpu_solver(apps::ClosestPairMethod::cpu_divide_conquer, options)};
    mpi::DistributedClosestPair found;
    if (generated) {
      const std::unique_ptr<mpi::GeneratedPointSet> set =
          solver.generated_set(distribution, arguments.seed, arguments.n);
      found = mpi::closest_pair(MPI_COMM_WORLD, *set, distributed);
    } else {
      found = mpi::closest_pair(
          MPI_COMM_WORLD, [&] { return read_rank_points(arguments.input, placement); },
          [&](std::vector<mpi::IndexedPoint> points, std::uint64_t set_size) {
            return solver.slab_of(std::move(points), set_size);
          },
          distributed);
    }
    const std::vector<RankSetup> setups = every_rank_setup(setup);
    if (placement.rank == 0)
      report(arguments, options, solver.method_for(found.points), setups, found);
  });
}

}  // namespace ptxrt::cli
