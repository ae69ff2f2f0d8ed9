// ptxrt::mpi::closest_pair: a split into slabs at sampled splitters, a solve per slab, then the
// borders.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <tuple>

#include "mpi/communicator.hpp"
#include "mpi/slab_split.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/mpi.hpp"

namespace ptxrt::mpi {

namespace {

using Clock = std::chrono::steady_clock;
using detail::Communicator;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The same verdict on every rank: the set's size, or the first point that is not finite.
std::uint64_t checked_total(const Communicator& world, std::span<const IndexedPoint> points) {
  constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t first_bad = none;
  for (const IndexedPoint& point : points)
    if (!std::isfinite(point.x) || !std::isfinite(point.y))
      first_bad = std::min(first_bad, point.index);
  first_bad = world.all_reduce(first_bad, MPI_MIN);
  if (first_bad != none)
    throw Error(ErrorKind::invalid_argument, "closest pair: point " + std::to_string(first_bad) +
                                                 " has a coordinate that is not finite");
  const std::uint64_t total = world.all_reduce(std::uint64_t{points.size()}, MPI_SUM);
  if (total < 2)
    throw Error(ErrorKind::invalid_argument,
                "closest pair: needs at least 2 points, got " + std::to_string(total));
  return total;
}

// This rank's slab: with one rank, its points as they are; else the points of every rank whose
// keys fall at or below its splitter (and above the previous one), in rank order and each rank's
// own order within. Each point finds its slab by a binary search over the splitters: sorting 10^7
// points, as a sample sort would, costs seconds. Every rank learns every slab's size before the
// exchange, so that a slab too large for MPI's counts is refused on all alike.
std::vector<IndexedPoint> split_into_slabs(const Communicator& world,
                                           std::vector<IndexedPoint> points,
                                           std::size_t samples_per_rank) {
  if (world.size() == 1) return points;
  std::vector<IndexedPoint> samples = world.all_gather(
      detail::random_sample(points, samples_per_rank, static_cast<std::uint64_t>(world.rank())));
  std::sort(samples.begin(), samples.end(), detail::key_less);
  const std::vector<IndexedPoint> splitters = detail::choose_splitters(samples, world.size());
  const detail::SlabPartition partition = detail::partition_into_slabs(points, splitters);
  points = {};  // one copy of the rank's points through the exchange, not two
  const std::vector<std::uint64_t> slab_sizes = world.all_reduce(
      std::vector<std::uint64_t>(partition.counts.begin(), partition.counts.end()), MPI_SUM);
  for (std::size_t rank = 0; rank < slab_sizes.size(); ++rank)
    if (slab_sizes[rank] > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      throw Error(ErrorKind::invalid_argument,
                  "closest pair: the slab of rank " + std::to_string(rank) + " would hold " +
                      std::to_string(slab_sizes[rank]) +
                      " points, beyond the 2^31 - 1 a rank can take: use more ranks");
  std::vector<int> send_counts;
  for (std::size_t count : partition.counts) send_counts.push_back(Communicator::count_of(count));
  return world.all_to_all(partition.points, send_counts);
}

bool closer(const PointPair& a, const PointPair& b) {
  return std::tie(a.distance, a.first.index, a.second.index) <
         std::tie(b.distance, b.first.index, b.second.index);
}

// The solver's answer, the lower index first.
PointPair solved(const ClosestPairSolver& solve, std::span<const IndexedPoint> points) {
  PointPair pair = solve(points);
  if (pair.second.index < pair.first.index) std::swap(pair.first, pair.second);
  return pair;
}

void keep_closer(std::optional<PointPair>& best, const PointPair& candidate) {
  if (!best || closer(candidate, *best)) best = candidate;
}

// The points of `slab` that the earlier ranks' right bands need, in rank order, with the count
// for each rank (none for this rank and later ones).
std::vector<IndexedPoint> border_points_for_earlier(const std::vector<IndexedPoint>& slab,
                                                    const std::vector<detail::RightBand>& bands,
                                                    int rank, double radius,
                                                    std::vector<int>& counts) {
  counts.assign(bands.size(), 0);
  const auto earlier_bands = std::span(bands).first(static_cast<std::size_t>(rank));
  // Earlier slabs end at or left of this one: a point further than radius right of the rightmost
  // of their bands is near none, so one pass keeps the few that may be.
  std::optional<float> reach_x;
  for (const detail::RightBand& band : earlier_bands)
    if (!band.empty) reach_x = std::max(reach_x.value_or(band.last_x), band.last_x);
  if (!reach_x) return {};
  std::vector<IndexedPoint> reachable;
  for (const IndexedPoint& point : slab)
    if (static_cast<double>(point.x) - *reach_x <= radius) reachable.push_back(point);
  std::vector<IndexedPoint> outgoing;
  for (std::size_t earlier = 0; earlier < earlier_bands.size(); ++earlier) {
    const std::size_t before = outgoing.size();
    for (const IndexedPoint& point : reachable)
      if (detail::near_band(point, earlier_bands[earlier], radius)) outgoing.push_back(point);
    counts[earlier] = Communicator::count_of(outgoing.size() - before);
  }
  return outgoing;
}

// Whether a rank found a pair, and which: gathered from every rank.
struct RankAnswer {
  bool found = false;
  PointPair pair;
};

}  // namespace

DistributedClosestPair closest_pair(MPI_Comm communicator, std::vector<IndexedPoint> points,
                                    const DistributedClosestPairOptions& options) {
  const Clock::time_point start = Clock::now();
  if (!options.solve_slab)
    throw Error(ErrorKind::invalid_argument, "distributed closest pair: no slab solver given");
  const ClosestPairSolver& solve_border =
      options.solve_border ? options.solve_border : options.solve_slab;
  const Communicator world(communicator);
  DistributedClosestPair result;
  ClosestPairRankStats stats;
  stats.input_points = points.size();
  result.points = checked_total(world, points);

  const std::vector<IndexedPoint> slab = split_into_slabs(
      world, std::move(points), std::max<std::size_t>(1, options.samples_per_rank));
  stats.slab_points = slab.size();
  stats.split_ms = milliseconds_since(start);

  const Clock::time_point slab_start = Clock::now();
  std::optional<PointPair> best;
  if (slab.size() >= 2) best = solved(options.solve_slab, slab);
  stats.slab_ms = milliseconds_since(slab_start);

  // Every cross-slab pair closer than the slabs' least answer has a point in the band of the
  // earlier slab and one near it: only those travel.
  const Clock::time_point border_start = Clock::now();
  const double radius = detail::search_radius(
      world.all_reduce(best ? best->distance : std::numeric_limits<double>::infinity(), MPI_MIN));
  const std::vector<detail::RightBand> bands = world.all_gather(detail::right_band(slab, radius));
  std::vector<int> counts;
  const std::vector<IndexedPoint> outgoing =
      border_points_for_earlier(slab, bands, world.rank(), radius, counts);
  std::vector<IndexedPoint> border = world.all_to_all(outgoing, counts);
  stats.border_points_sent = outgoing.size();
  stats.border_points_received = border.size();
  if (!border.empty()) {  // then this slab's band holds a point too: 2 at least
    const detail::RightBand& own = bands[static_cast<std::size_t>(world.rank())];
    for (const IndexedPoint& point : slab)
      if (detail::in_band(point, own, radius)) border.push_back(point);
    keep_closer(best, solved(solve_border, border));
  }
  stats.border_ms = milliseconds_since(border_start);

  std::optional<PointPair> answer;
  for (const RankAnswer& each :
       world.all_gather(RankAnswer{best.has_value(), best.value_or(PointPair{})}))
    if (each.found) keep_closer(answer, each.pair);
  result.pair = *answer;  // at least 2 points: some slab or border had 2
  result.ranks = world.all_gather(stats);
  result.wall_ms = milliseconds_since(start);
  return result;
}

}  // namespace ptxrt::mpi
