// The arithmetic of the distributed closest pair (mpi/slab_split.hpp), without MPI.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "mpi/slab_split.hpp"

using ptxrt::mpi::IndexedPoint;
namespace detail = ptxrt::mpi::detail;

namespace {

std::vector<std::uint64_t> indices(const std::vector<IndexedPoint>& points) {
  std::vector<std::uint64_t> found;
  for (const IndexedPoint& point : points) found.push_back(point.index);
  return found;
}

}  // namespace

TEST_CASE("slab split: points of one x are ordered by y, then by index") {
  std::vector<IndexedPoint> points{{1, 5, 0}, {1, 2, 1}, {0, 9, 2}, {1, 2, 3}};
  std::sort(points.begin(), points.end(), detail::key_less);
  CHECK(indices(points) == std::vector<std::uint64_t>{2, 1, 3, 0});
}

TEST_CASE("slab split: splitters cut points on one vertical line into slabs of equal size") {
  std::vector<IndexedPoint> line;
  for (std::uint64_t k = 0; k < 10000; ++k) line.push_back({0.5f, static_cast<float>(k), k});
  std::shuffle(line.begin(), line.end(), std::mt19937_64(1));
  const std::vector<IndexedPoint> sample = detail::random_sample(line, 4096, 7);
  CHECK(sample.size() == 4096);
  CHECK(std::is_sorted(sample.begin(), sample.end(), detail::key_less));
  const std::vector<IndexedPoint> splitters = detail::choose_splitters(sample, 4);
  REQUIRE(splitters.size() == 3);
  const detail::SlabPartition partition = detail::partition_into_slabs(line, splitters);
  REQUIRE(partition.counts.size() == 4);
  // A quantile of 4096 draws strays by about 1% of the set: 10% is over 3 standard deviations.
  for (std::size_t count : partition.counts) CHECK(count == doctest::Approx(2500).epsilon(0.1));
}

TEST_CASE("slab split: a random sample is the same for the same seed and whole for few points") {
  std::vector<IndexedPoint> points;
  for (std::uint64_t k = 0; k < 1000; ++k)
    points.push_back({static_cast<float>(k % 17), static_cast<float>(k % 5), k});
  CHECK(indices(detail::random_sample(points, 64, 3)) ==
        indices(detail::random_sample(points, 64, 3)));
  CHECK(indices(detail::random_sample(points, 64, 3)) !=
        indices(detail::random_sample(points, 64, 4)));
  const std::vector<IndexedPoint> three{{2, 0, 0}, {1, 0, 1}, {1, -1, 2}};
  CHECK(indices(detail::random_sample(three, 64, 3)) == std::vector<std::uint64_t>{2, 1, 0});
}

TEST_CASE("slab split: points of a splitter's x go to both sides of it by y, then by index") {
  // Three columns of 4 points each; the splitter is the middle column's third point by key.
  std::vector<IndexedPoint> points;
  for (std::uint64_t k = 0; k < 12; ++k)
    points.push_back({static_cast<float>(k % 3), static_cast<float>(k / 6), k});
  const std::vector<IndexedPoint> splitters{{1.0f, 1.0f, 7}};
  const detail::SlabPartition partition = detail::partition_into_slabs(points, splitters);
  CHECK(partition.counts == std::vector<std::size_t>{7, 5});
  // Each slab keeps the given order; of x = 1: (1, 0, 1), (1, 0, 4), (1, 1, 7) at or below the
  // splitter, (1, 1, 10) above it.
  CHECK(indices(partition.points) ==
        std::vector<std::uint64_t>{0, 1, 3, 4, 6, 7, 9, 2, 5, 8, 10, 11});
  CHECK(detail::slab_of({1.0f, 1.0f, 7}, splitters) == 0);
  CHECK(detail::slab_of({1.0f, 1.0f, 8}, splitters) == 1);
}

TEST_CASE("slab split: a sample smaller than the slabs repeats splitters and leaves slabs empty") {
  const std::vector<IndexedPoint> two{{0, 0, 0}, {1, 1, 1}};
  const std::vector<IndexedPoint> splitters = detail::choose_splitters(two, 4);
  CHECK(indices(splitters) == std::vector<std::uint64_t>{0, 1, 1});
  CHECK(detail::partition_into_slabs(two, splitters).counts ==
        std::vector<std::size_t>{1, 1, 0, 0});
  CHECK(detail::choose_splitters({}, 4).empty());
  CHECK(detail::partition_into_slabs(two, {}).counts == std::vector<std::size_t>{2});
}

TEST_CASE("slab split: slab r takes the keys above splitter r - 1 and up to splitter r") {
  const std::vector<IndexedPoint> splitters{{0.25f, 0.5f, 3}, {0.75f, 0.5f, 9}};
  const ptxrt::mpi::SlabRange first = detail::slab_range(splitters, 0);
  CHECK_FALSE(first.after.has_value());
  REQUIRE(first.through.has_value());
  CHECK(first.through->index == 3);
  const ptxrt::mpi::SlabRange middle = detail::slab_range(splitters, 1);
  REQUIRE(middle.after.has_value());
  REQUIRE(middle.through.has_value());
  CHECK(middle.after->index == 3);
  CHECK(middle.through->index == 9);
  const ptxrt::mpi::SlabRange last = detail::slab_range(splitters, 2);
  CHECK(last.after->index == 9);
  CHECK_FALSE(last.through.has_value());
  const ptxrt::mpi::SlabRange whole = detail::slab_range({}, 0);
  CHECK_FALSE(whole.after.has_value());
  CHECK_FALSE(whole.through.has_value());
}

TEST_CASE(
    "slab split: a slab's edges reach a radius past its splitters' x, none at the set's ends") {
  const std::vector<IndexedPoint> splitters{{0.25f, 0.5f, 3}, {0.75f, 0.5f, 9}};
  const detail::EdgeReach middle = detail::edge_reach(detail::slab_range(splitters, 1), 0.125);
  CHECK(middle.left_until == 0.375);
  CHECK(middle.right_from == 0.625);
  const detail::EdgeReach first = detail::edge_reach(detail::slab_range(splitters, 0), 0.125);
  CHECK(first.left_until == -std::numeric_limits<double>::infinity());
  CHECK(first.right_from == 0.125);
  const detail::EdgeReach last = detail::edge_reach(detail::slab_range(splitters, 2), 0.125);
  CHECK(last.left_until == 0.875);
  CHECK(last.right_from == std::numeric_limits<double>::infinity());
  // No slab answer yet: an infinite radius reaches every point.
  const double everything = std::numeric_limits<double>::infinity();
  const detail::EdgeReach all = detail::edge_reach(detail::slab_range(splitters, 1), everything);
  CHECK(all.left_until == everything);
  CHECK(all.right_from == -everything);
}

TEST_CASE("slab split: a point is near a box when within the radius of it in x and in y") {
  const std::vector<IndexedPoint> band{{0.8f, 0.2f, 2}, {1.0f, 0.5f, 3}};
  const detail::BorderBox box = detail::bounding_box(band);
  CHECK_FALSE(box.empty);
  CHECK(box.low_x == 0.8f);
  CHECK(box.high_x == 1.0f);
  CHECK(box.low_y == 0.2f);
  CHECK(box.high_y == 0.5f);
  CHECK(detail::near_box({1.2f, 0.6f, 9}, box, 0.25));
  CHECK_FALSE(detail::near_box({1.3f, 0.5f, 9}, box, 0.25));
  CHECK_FALSE(detail::near_box({1.1f, 0.8f, 9}, box, 0.25));
  CHECK_FALSE(detail::near_box({0.9f, 0.3f, 9}, detail::bounding_box({}), 0.25));
  const double everything = std::numeric_limits<double>::infinity();
  CHECK(detail::near_box({1e30f, -1e30f, 9}, box, everything));
}

TEST_CASE("slab split: duplicates at distance 0 meet across a border") {
  const std::vector<IndexedPoint> splitters{{0.5f, 0.5f, 1}};
  const double radius = detail::search_radius(0.0);
  // The duplicate of the splitter point lies in the next slab, at the same x.
  const detail::EdgeReach left = detail::edge_reach(detail::slab_range(splitters, 0), radius);
  const detail::EdgeReach right = detail::edge_reach(detail::slab_range(splitters, 1), radius);
  CHECK(0.5 >= left.right_from);
  CHECK(0.5 <= right.left_until);
  CHECK_FALSE(0.25 >= left.right_from);
  const detail::BorderBox box = detail::bounding_box(std::vector<IndexedPoint>{splitters[0]});
  CHECK(detail::near_box({0.5f, 0.5f, 7}, box, radius));
  CHECK_FALSE(detail::near_box({0.5f, 0.50001f, 8}, box, radius));
}
