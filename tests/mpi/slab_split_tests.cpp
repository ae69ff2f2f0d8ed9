// The arithmetic of the distributed closest pair (mpi/slab_split.hpp), without MPI.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
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
  for (std::uint64_t k = 0; k < 1000; ++k) line.push_back({0.5f, static_cast<float>(k), k});
  const std::vector<IndexedPoint> sample = detail::regular_sample(line, 64);
  CHECK(sample.size() == 64);
  CHECK(std::is_sorted(sample.begin(), sample.end(), detail::key_less));
  const std::vector<IndexedPoint> splitters = detail::choose_splitters(sample, 4);
  REQUIRE(splitters.size() == 3);
  const std::vector<std::size_t> counts = detail::slab_counts(line, splitters);
  REQUIRE(counts.size() == 4);
  for (std::size_t count : counts) CHECK(count == doctest::Approx(250).epsilon(0.05));
}

TEST_CASE("slab split: a sample smaller than the slabs repeats splitters and leaves slabs empty") {
  const std::vector<IndexedPoint> two{{0, 0, 0}, {1, 1, 1}};
  const std::vector<IndexedPoint> splitters = detail::choose_splitters(two, 4);
  CHECK(indices(splitters) == std::vector<std::uint64_t>{0, 1, 1});
  CHECK(detail::slab_counts(two, splitters) == std::vector<std::size_t>{1, 1, 0, 0});
  CHECK(detail::choose_splitters({}, 4).empty());
  CHECK(detail::slab_counts(two, {}) == std::vector<std::size_t>{2});
}

TEST_CASE("slab split: the right band reaches back a radius in x and spans its points' y") {
  const std::vector<IndexedPoint> slab{
      {0.0f, 0.0f, 0}, {0.7f, 0.9f, 1}, {0.8f, 0.2f, 2}, {1.0f, 0.5f, 3}};
  const detail::RightBand band = detail::right_band(slab, 0.25);
  CHECK_FALSE(band.empty);
  CHECK(band.last_x == 1.0f);
  CHECK(band.low_y == 0.2f);
  CHECK(band.high_y == 0.5f);
  CHECK(detail::in_band(slab[2], band, 0.25));
  CHECK_FALSE(detail::in_band(slab[1], band, 0.25));
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
