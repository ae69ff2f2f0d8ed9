// `ptxrt closest-pair ... --mpi`: each rank makes or reads its part of the set, ptxrt::mpi
// finds the pair across the ranks with the method as each rank's slab solver, rank 0 reports.
#include <algorithm>
#include <climits>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "host/closest_pair/point_file.hpp"
#include "host/closest_pair/point_generator.hpp"
#include "host/common/device_selection.hpp"
#include "ptxrt/error.hpp"
#include "tools/closest_pair.hpp"
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

struct RankPoints {
  std::vector<mpi::IndexedPoint> points;
  std::uint64_t total = 0;
};

// Generated from the global index, so the set is the one a single process makes; a binary file
// read by byte range; a CSV file (which has no fixed record size) read whole by every rank.
RankPoints rank_points(const ClosestPairArguments& arguments, const mpi::Placement& placement) {
  RankPoints local;
  std::vector<host::Point2> points;
  Range range;
  if (arguments.input.empty()) {
    local.total = arguments.n;
    range = rank_range(local.total, placement);
    points = host::generate_point_range(range.first, range.count,
                                        host::parse_point_distribution(arguments.distribution),
                                        arguments.seed);
  } else if (std::filesystem::path(arguments.input).extension() == ".bin") {
    local.total = host::count_binary_points(arguments.input);
    range = rank_range(local.total, placement);
    points = host::read_binary_point_range(arguments.input, range.first, range.count);
  } else {
    const std::vector<host::Point2> all = host::read_point_file(arguments.input);
    local.total = all.size();
    range = rank_range(local.total, placement);
    points.assign(all.begin() + static_cast<std::ptrdiff_t>(range.first),
                  all.begin() + static_cast<std::ptrdiff_t>(range.first + range.count));
  }
  local.points.reserve(points.size());
  for (std::size_t k = 0; k < points.size(); ++k)
    local.points.push_back({points[k].x, points[k].y, range.first + k});
  return local;
}

mpi::ClosestPairSolver solver(host::ClosestPairMethod method, host::ClosestPairOptions options) {
  return [method, options](std::span<const mpi::IndexedPoint> points) {
    std::vector<host::Point2> coordinates(points.size());
    for (std::size_t k = 0; k < points.size(); ++k) coordinates[k] = {points[k].x, points[k].y};
    const host::ClosestPair found = host::closest_pair(coordinates, method, options);
    return mpi::PointPair{points[found.i], points[found.j], found.distance};
  };
}

// The slowest rank's time of each stage.
nlohmann::json stage_times(const mpi::DistributedClosestPair& found) {
  double split = 0.0;
  double slab = 0.0;
  double border = 0.0;
  for (const mpi::ClosestPairRankStats& rank : found.ranks) {
    split = std::max(split, rank.split_ms);
    slab = std::max(slab, rank.slab_ms);
    border = std::max(border, rank.border_ms);
  }
  return {
      {"split_ms", split}, {"slab_ms", slab}, {"border_ms", border}, {"total_ms", found.wall_ms}};
}

nlohmann::json rank_stats(const mpi::DistributedClosestPair& found) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const mpi::ClosestPairRankStats& rank : found.ranks)
    ranks.push_back({{"input_points", rank.input_points},
                     {"slab_points", rank.slab_points},
                     {"border_points_sent", rank.border_points_sent},
                     {"border_points_received", rank.border_points_received}});
  return ranks;
}

// The one-process answer on the whole set, for --verify.
host::ClosestPair one_process_answer(const ClosestPairArguments& arguments,
                                     const host::ClosestPairOptions& options) {
  const std::vector<host::Point2> all =
      arguments.input.empty()
          ? host::generate_points(
                arguments.n, host::parse_point_distribution(arguments.distribution), arguments.seed)
          : host::read_point_file(arguments.input);
  return host::closest_pair(all, host::ClosestPairMethod::cpu_divide_conquer, options);
}

void report(const ClosestPairArguments& arguments, const host::ClosestPairOptions& options,
            host::ClosestPairMethod method, const std::vector<int>& devices,
            const mpi::DistributedClosestPair& found) {
  const mpi::PointPair& pair = found.pair;
  const host::Point2 first{pair.first.x, pair.first.y};
  const host::Point2 second{pair.second.x, pair.second.y};
  nlohmann::json json{{"n", found.points},
                      {"input", describe_input(arguments)},
                      {"method", std::string(to_string(method))},
                      {"mpi_ranks", found.ranks.size()},
                      {"i", pair.first.index},
                      {"j", pair.second.index},
                      {"point_i", {first.x, first.y}},
                      {"point_j", {second.x, second.y}},
                      {"distance", pair.distance},
                      {"times", stage_times(found)},
                      {"ranks", rank_stats(found)}};
  if (!devices.empty()) json["devices"] = devices;
  bool agrees = true;
  if (arguments.verify) {
    const double reference = one_process_answer(arguments, options).distance;
    agrees = reference == pair.distance;
    json["verify"] = {
        {"method", "cpu-dc, one process"}, {"distance", reference}, {"agrees", agrees}};
  }
  if (arguments.json) {
    std::cout << json.dump(2) << '\n';
  } else {
    const nlohmann::json& times = json["times"];
    std::cout << "closest pair of " << found.points << " points (" << describe_input(arguments)
              << ") by " << to_string(method) << ", MPI ranks " << found.ranks.size() << ":\n"
              << "  i = " << pair.first.index << ' ' << describe_point(first)
              << ", j = " << pair.second.index << ' ' << describe_point(second) << '\n'
              << "  distance = " << std::setprecision(17) << pair.distance << '\n'
              << std::fixed << std::setprecision(3) << "  time (slowest rank): split "
              << times["split_ms"].get<double>() << " ms, slab " << times["slab_ms"].get<double>()
              << " ms, border " << times["border_ms"].get<double>() << " ms, total "
              << found.wall_ms << " ms\n";
    for (std::size_t rank = 0; rank < found.ranks.size(); ++rank) {
      const mpi::ClosestPairRankStats& stats = found.ranks[rank];
      std::cout << "  rank " << rank << ": slab of " << stats.slab_points << " point(s), "
                << stats.border_points_received << " received near its border";
      if (!devices.empty()) std::cout << ", device " << devices[rank];
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
  const host::ClosestPairOptions base_options = closest_pair_options(arguments);
  const host::ClosestPairMethod requested = host::parse_closest_pair_method(arguments.method);
  host::parse_point_distribution(arguments.distribution);
  const std::optional<std::vector<int>> listed =
      arguments.devices.empty() ? std::nullopt : host::parse_device_list(arguments.devices);
  if (arguments.verify && arguments.input.empty() &&
      arguments.n > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument,
                "closest-pair --verify solves the whole set in one process, at most 2147483647 "
                "points; --n is " +
                    std::to_string(arguments.n));
  run_as_rank([&](const mpi::Placement& placement) {
    RankPoints local = rank_points(arguments, placement);
    const host::ClosestPairMethod method =
        host::resolve_closest_pair_method(requested, local.total);
    host::ClosestPairOptions options = base_options;
    int ordinal = -1;  // none: a CPU method
    if (host::is_gpu_method(method)) {
      ordinal = rank_device(placement, listed).ordinal;
      options.context = Context::primary(ordinal);
    }
    // Gathered whatever the method, so that ranks resolving "auto" differently still meet.
    std::vector<int> devices = every_rank_device(ordinal);
    if (std::all_of(devices.begin(), devices.end(), [](int each) { return each < 0; }))
      devices.clear();
    const mpi::DistributedClosestPair found = mpi::closest_pair(
        MPI_COMM_WORLD, std::move(local.points),
        {.solve_slab = solver(method, options),
         .solve_border = solver(host::ClosestPairMethod::cpu_divide_conquer, options)});
    if (placement.rank == 0) report(arguments, options, method, devices, found);
  });
}

}  // namespace ptxrt::cli
