// The arithmetic of the distributed closest pair (mpi/distributed_closest_pair.cpp), apart from
// its messages: the (x, y, index) order, the sample and splitters that cut the set into slabs,
// and the reach of a slab's edges that the pairs across slab borders lie within. Pure functions;
// none sorts a rank's points (10^7 of them cost seconds on one core), only samples and splitters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ptxrt/mpi.hpp"

namespace ptxrt::mpi::detail {

// By x, then y, then index: a strict total order of points with distinct indices, under which
// points on one vertical line still spread over several slabs.
bool key_less(const IndexedPoint& a, const IndexedPoint& b);

// `count` points of `points` drawn at random positions (with repeats) by a generator seeded with
// `seed`, key-sorted; all of them, key-sorted, when `points` holds no more than `count`.
std::vector<IndexedPoint> random_sample(std::span<const IndexedPoint> points, std::size_t count,
                                        std::uint64_t seed);

// The parts - 1 splitters of `samples` (key-sorted), at evenly spaced positions; none when
// `samples` is empty. Repeated splitters leave slabs between them empty.
std::vector<IndexedPoint> choose_splitters(std::span<const IndexedPoint> samples, int parts);

// The slab a point goes to, of splitters.size() + 1: slab r takes the keys above splitter r - 1
// and up to splitter r. A binary search over the (key-sorted) splitters.
std::size_t slab_of(const IndexedPoint& point, std::span<const IndexedPoint> splitters);

// `points` grouped by slab, slab 0 first, each group in the order of `points`, and the size of
// each of splitters.size() + 1 groups.
struct SlabPartition {
  std::vector<IndexedPoint> points;
  std::vector<std::size_t> counts;
};
SlabPartition partition_into_slabs(std::span<const IndexedPoint> points,
                                   std::span<const IndexedPoint> splitters);

// The range of slab `rank` (0 .. splitters.size()) among the slabs that `splitters` (key-sorted)
// cut: above splitter rank - 1, up to splitter rank.
SlabRange slab_range(std::span<const IndexedPoint> splitters, int rank);

// Which of a slab's points may lie within `radius` of another slab's: x at most left_until (of
// an earlier slab, whose points all have x at most the slab's first splitter's) or at least
// right_from (of a later one). Infinite on the sides the slab has no neighbour.
struct EdgeReach {
  double left_until;
  double right_from;
};
EdgeReach edge_reach(const SlabRange& range, double radius);

// The box of some points, bounds included.
struct BorderBox {
  bool empty = true;
  float low_x = 0.0f;
  float low_y = 0.0f;
  float high_x = 0.0f;
  float high_y = 0.0f;
};
BorderBox bounding_box(std::span<const IndexedPoint> points);
// Whether `point` lies within `radius` of `box` in x and in y: only then may it lie within
// `radius` of a point in the box.
bool near_box(const IndexedPoint& point, const BorderBox& box, double radius);

// `distance` widened by the rounding of a distance computed in fp64 from float coordinates, so
// that no pair closer than `distance` is missed by a test on dx or dy alone.
double search_radius(double distance);

}  // namespace ptxrt::mpi::detail
