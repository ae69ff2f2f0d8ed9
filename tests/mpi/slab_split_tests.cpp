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

TEST_CASE("slab split: the right band reaches back a radius in x and spans its points' y") {
  // In no particular order: a slab is not sorted.
  const std::vector<IndexedPoint> slab{
      {0.8f, 0.2f, 2}, {1.0f, 0.5f, 3}, {0.0f, 0.0f, 0}, {0.7f, 0.9f, 1}};
  const detail::RightBand band = detail::right_band(slab, 0.25);
  CHECK_FALSE(band.empty);
  CHECK(band.last_x == 1.0f);
  CHECK(band.low_y == 0.2f);
  CHECK(band.high_y == 0.5f);
  CHECK(detail::in_band(slab[0], band, 0.25));
  CHECK_FALSE(detail::in_band(slab[3], band, 0.25));
  // A later slab's points: near in x and within the band's y range widened by the radius.
  CHECK(detail::near_band({1.2f, 0.6f, 9}, band, 0.25));
  CHECK_FALSE(detail::near_band({1.3f, 0.5f, 9}, band, 0.25));
  CHECK_FALSE(detail::near_band({1.1f, 0.8f, 9}, band, 0.25));
  CHECK_FALSE(detail::near_band({1.0f, 0.5f, 9}, detail::right_band({}, 0.25), 0.25));
  // No slab answer yet: an infinite radius takes everything.
  const double everything = std::numeric_limits<double>::infinity();
  CHECK(detail::near_band({1e30f, -1e30f, 9}, detail::right_band(slab, everything), everything));
}

TEST_CASE("slab split: duplicates at distance 0 meet across a border") {
  const std::vector<IndexedPoint> slab{{0.25f, 0.5f, 0}, {0.5f, 0.5f, 1}};
  const detail::RightBand band = detail::right_band(slab, detail::search_radius(0.0));
  CHECK(band.low_y == 0.5f);
  CHECK(detail::near_band({0.5f, 0.5f, 7}, band, detail::search_radius(0.0)));
  CHECK_FALSE(detail::near_band({0.5f, 0.50001f, 8}, band, detail::search_radius(0.0)));
}
