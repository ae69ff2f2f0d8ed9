// The arithmetic of the distributed closest pair (mpi/distributed_closest_pair.cpp), apart from
// its messages: the (x, y, index) order, the sample and splitters that cut the set into slabs,
// and the right band of a slab that later slabs' points must be checked against. Pure functions;
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

// The part of a slab that a point of a later slab may be within `radius` of: its points with x
// within radius of its greatest x, and their y range.
struct RightBand {
  bool empty = true;
  float last_x = 0.0f;
  float low_y = 0.0f;
  float high_y = 0.0f;
};
// Of a slab in any order.
RightBand right_band(std::span<const IndexedPoint> slab, double radius);
// Whether `point`, of a later slab (so x at least band.last_x), may lie within `radius` of a
// point of the band.
bool near_band(const IndexedPoint& point, const RightBand& band, double radius);
// Whether `point` of a slab lies in the slab's band.
bool in_band(const IndexedPoint& point, const RightBand& band, double radius);

// `distance` widened by the rounding of a distance computed in fp64 from float coordinates, so
// that no pair closer than `distance` is missed by a test on dx or dy alone.
double search_radius(double distance);

}  // namespace ptxrt::mpi::detail
