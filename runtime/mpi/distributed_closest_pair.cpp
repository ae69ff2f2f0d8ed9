// ptxrt::mpi::closest_pair: a split into slabs at sampled splitters (points given: exchanged;
// generated: each rank makes its own), a solve per slab, the pairs across slab borders, then
// the least answer of all.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <tuple>

#include "mpi/communicator.hpp"
#include "mpi/slab_split.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/mpi.hpp"

namespace ptxrt::mpi {

namespace {

using detail::Communicator;

// Milliseconds of each phase in turn, from a start the ranks share: a barrier first, so that
// one rank's late arrival (its set-up) does not count as another's first phase.
class PhaseClock {
 public:
  explicit PhaseClock(const Communicator& world) {
    world.barrier();
    start_ = last_ = Clock::now();
  }

  double lap() {
    const Clock::time_point now = Clock::now();
    const double elapsed = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return elapsed;
  }
  double total() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point last_;
};

Error too_few_points(std::uint64_t total) {
  return Error(ErrorKind::invalid_argument,
               "closest pair: needs at least 2 points, got " + std::to_string(total));
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
  if (total < 2) throw too_few_points(total);
  return total;
}

// Splitters from a random sample of every rank's points (seeded by rank).
std::vector<IndexedPoint> sampled_splitters(const Communicator& world,
                                            std::span<const IndexedPoint> points,
                                            std::size_t samples_per_rank) {
  std::vector<IndexedPoint> samples =
      world.all_gather(detail::random_sample(points, std::max<std::size_t>(1, samples_per_rank),
                                             static_cast<std::uint64_t>(world.rank())));
  std::sort(samples.begin(), samples.end(), detail::key_less);
  return detail::choose_splitters(samples, world.size());
}

// This rank's slab of every rank's points: the points of every rank whose keys fall in its
// range, in rank order and each rank's own order within. Each point finds its slab by a binary
// search over the splitters: sorting 10^7 points, as a sample sort would, costs seconds. Every
// rank learns every slab's size before the exchange, so that a slab too large for MPI's counts is
// refused on all alike.
std::vector<IndexedPoint> exchanged_slab(const Communicator& world,
                                         std::vector<IndexedPoint> points,
                                         std::span<const IndexedPoint> splitters) {
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

// The lower index first.
PointPair ordered(PointPair pair) {
  if (pair.second.index < pair.first.index) std::swap(pair.first, pair.second);
  return pair;
}

void keep_closer(std::optional<PointPair>& best, const PointPair& candidate) {
  if (!best || closer(candidate, *best)) best = candidate;
}

// Whether a rank found a pair, and which.
struct RankAnswer {
  bool found = false;
  PointPair pair;
};

// What every rank learns of every other once its slab is solved: its answer, its slab's size, and
// the box of its points near its right edge within the reach of its own answer (which reaches at
// least as far as the least answer of all, so the box holds the one that reach gives).
struct SolvedSlab {
  RankAnswer answer;
  std::uint64_t points = 0;
  detail::BorderBox right_band;
};

// The slab's points near its edges within `radius`, and the box of those near its right edge.
struct SlabEdgePoints {
  std::vector<IndexedPoint> near_edges;
  detail::BorderBox right_band;
};

SlabEdgePoints edge_points(Slab& slab, const SlabRange& range, double radius) {
  SlabEdgePoints found;
  if (slab.size() == 0) return found;
  const detail::EdgeReach reach = detail::edge_reach(range, radius);
  found.near_edges = slab.points_near_edges(reach.left_until, reach.right_from);
  std::vector<IndexedPoint> right_band;
  for (const IndexedPoint& point : found.near_edges)
    if (point.x >= reach.right_from) right_band.push_back(point);
  found.right_band = detail::bounding_box(right_band);
  return found;
}

// The points this rank sends each earlier rank: its points within `radius` of its left edge that
// lie within `radius` of that rank's band (earlier slabs end at or left of this one).
struct Outgoing {
  std::vector<IndexedPoint> points;
  std::vector<int> counts;
};

Outgoing outgoing_points(const Communicator& world, const std::vector<IndexedPoint>& near_edges,
                         const detail::EdgeReach& reach, const std::vector<SolvedSlab>& slabs,
                         double radius) {
  Outgoing outgoing{{}, std::vector<int>(slabs.size(), 0)};
  for (std::size_t earlier = 0; earlier < static_cast<std::size_t>(world.rank()); ++earlier) {
    const std::size_t before = outgoing.points.size();
    for (const IndexedPoint& point : near_edges)
      if (point.x <= reach.left_until && detail::near_box(point, slabs[earlier].right_band, radius))
        outgoing.points.push_back(point);
    outgoing.counts[earlier] = Communicator::count_of(outgoing.points.size() - before);
  }
  return outgoing;
}

// The closest pair of the points that later ranks sent this one and of its own points within
// `radius` of its right edge near them (module comment of include/ptxrt/mpi.hpp).
std::optional<PointPair> border_pair(std::vector<IndexedPoint> border,
                                     const std::vector<IndexedPoint>& near_edges,
                                     const detail::EdgeReach& reach, double radius,
                                     const ClosestPairSolver& solve_border) {
  if (border.empty()) return std::nullopt;
  const detail::BorderBox arrived = detail::bounding_box(border);
  for (const IndexedPoint& point : near_edges)
    if (point.x >= reach.right_from && detail::near_box(point, arrived, radius))
      border.push_back(point);
  if (border.size() < 2) return std::nullopt;
  // In index order, as a slab's points are, so that ties resolve as in one process.
  std::sort(border.begin(), border.end(),
            [](const IndexedPoint& a, const IndexedPoint& b) { return a.index < b.index; });
  return ordered(solve_border(border));
}

// The least answer of `answers`.
std::optional<PointPair> least_answer(const std::vector<RankAnswer>& answers) {
  std::optional<PointPair> least;
  for (const RankAnswer& each : answers)
    if (each.found) keep_closer(least, each.pair);
  return least;
}

// Solve, border and reduce, once the rank has its slab. The ranks share their answers and right
// bands in one gather; the points near the borders travel, and the answers are gathered again,
// only when some rank has points to send.
DistributedClosestPair solve_split_set(const Communicator& world, Slab& slab,
                                       const SlabRange& range, std::uint64_t total,
                                       const DistributedClosestPairOptions& options,
                                       ClosestPairRankStats stats, PhaseClock& clock) {
  stats.slab_points = slab.size();
  std::optional<PointPair> best;
  if (slab.size() >= 2) best = ordered(slab.closest_pair());
  stats.solve_ms = clock.lap();

  const double own_radius =
      detail::search_radius(best ? best->distance : std::numeric_limits<double>::infinity());
  SlabEdgePoints edges;
  if (world.size() > 1) edges = edge_points(slab, range, own_radius);
  const std::vector<SolvedSlab> slabs = world.all_gather(
      SolvedSlab{{best.has_value(), best.value_or(PointPair{})}, slab.size(), edges.right_band});
  // Their sizes must add up to the set's, or a point lies in two slabs or in none.
  std::uint64_t held = 0;
  std::vector<RankAnswer> answers;
  for (const SolvedSlab& each : slabs) {
    held += each.points;
    answers.push_back(each.answer);
  }
  if (held != total)
    throw Error(ErrorKind::invalid_argument,
                "closest pair: the slabs hold " + std::to_string(held) + " points, the set " +
                    std::to_string(total) + ": the splitters and the slabs made disagree");
  std::optional<PointPair> answer = least_answer(answers);
  std::uint64_t sent = 0;
  if (world.size() > 1) {
    const double radius =
        detail::search_radius(answer ? answer->distance : std::numeric_limits<double>::infinity());
    const detail::EdgeReach reach = detail::edge_reach(range, radius);
    const Outgoing outgoing = outgoing_points(world, edges.near_edges, reach, slabs, radius);
    stats.border_points_sent = outgoing.points.size();
    sent = world.all_reduce(std::uint64_t{outgoing.points.size()}, MPI_SUM);
    if (sent > 0) {
      std::vector<IndexedPoint> border = world.all_to_all(outgoing.points, outgoing.counts);
      stats.border_points_received = border.size();
      const std::optional<PointPair> across =
          border_pair(std::move(border), edges.near_edges, reach, radius, options.solve_border);
      if (across) keep_closer(best, *across);
    }
  }
  stats.border_ms = clock.lap();

  // A pair across a border may beat every slab's: then the answers meet again.
  if (sent > 0)
    answer =
        least_answer(world.all_gather(RankAnswer{best.has_value(), best.value_or(PointPair{})}));
  DistributedClosestPair result;
  result.points = total;
  result.pair = *answer;  // at least 2 points: some slab or border had 2
  stats.reduce_ms = clock.lap();
  stats.total_ms = clock.total();
  result.ranks = world.all_gather(stats);
  return result;
}

void require_border_solver(const DistributedClosestPairOptions& options) {
  if (!options.solve_border)
    throw Error(ErrorKind::invalid_argument, "distributed closest pair: no border solver given");
}

}  // namespace

DistributedClosestPair closest_pair(MPI_Comm communicator, const PointReader& read,
                                    const SlabMaker& make_slab,
                                    const DistributedClosestPairOptions& options) {
  require_border_solver(options);
  if (!read || !make_slab)
    throw Error(ErrorKind::invalid_argument,
                "distributed closest pair: no point reader or slab maker given");
  const Communicator world(communicator);
  PhaseClock clock(world);
  ClosestPairRankStats stats;
  std::vector<IndexedPoint> points = read();
  stats.input_points = points.size();
  stats.input_ms = clock.lap();

  const std::uint64_t total = checked_total(world, points);
  std::vector<IndexedPoint> splitters;
  if (world.size() > 1) {
    splitters = sampled_splitters(world, points, options.samples_per_rank);
    points = exchanged_slab(world, std::move(points), splitters);
  }
  const std::unique_ptr<Slab> slab = make_slab(std::move(points), total);
  stats.split_ms = clock.lap();
  return solve_split_set(world, *slab, detail::slab_range(splitters, world.rank()), total, options,
                         stats, clock);
}

DistributedClosestPair closest_pair(MPI_Comm communicator, GeneratedPointSet& points,
                                    const DistributedClosestPairOptions& options) {
  require_border_solver(options);
  const Communicator world(communicator);
  const std::uint64_t total = points.size();
  if (total < 2) throw too_few_points(total);
  PhaseClock clock(world);
  ClosestPairRankStats stats;
  std::vector<IndexedPoint> splitters;
  if (world.size() > 1) {
    // Every rank computes them alike from the set: no message.
    splitters = points.splitters(world.size());
    if (splitters.size() + 1 != static_cast<std::size_t>(world.size()) ||
        !std::is_sorted(splitters.begin(), splitters.end(), detail::key_less))
      throw Error(ErrorKind::invalid_argument,
                  "closest pair: the generated set gave " + std::to_string(splitters.size()) +
                      " splitters for " + std::to_string(world.size()) +
                      " slabs; it must give one less, in key order");
  }
  stats.split_ms = clock.lap();
  const SlabRange range = detail::slab_range(splitters, world.rank());
  const std::unique_ptr<Slab> slab = points.make_slab(range);
  stats.input_points = total;
  stats.input_ms = clock.lap();
  return solve_split_set(world, *slab, range, total, options, stats, clock);
}

}  // namespace ptxrt::mpi
