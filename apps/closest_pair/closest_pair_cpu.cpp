#include "apps/closest_pair/closest_pair_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "ptx_src/closest_pair_math.cuh"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {

// The running best, ordered like the kernels' candidates: distance, then i, then j.
class Best {
 public:
  void consider(const Point2& a, std::size_t a_index, const Point2& b, std::size_t b_index) {
    const double squared = pair_distance_squared_f64(a.x, a.y, b.x, b.y);
    const std::size_t first = std::min(a_index, b_index);
    const std::size_t second = std::max(a_index, b_index);
    if (std::tie(squared, first, second) < std::tie(found_.distance_squared, found_.i, found_.j)) {
      found_ = {first, second, squared};
    }
  }
  // Any pair closer than this in x or y alone may still beat the best (the margin covers the
  // rounding of the squared distance and of its square root).
  double radius() const { return std::sqrt(found_.distance_squared) * (1.0 + 0x1p-40); }
  const PairFound& found() const { return found_; }

 private:
  PairFound found_{0, 0, std::numeric_limits<double>::infinity()};
};

struct IndexedPoint {
  float x, y;
  std::uint32_t index;
};

bool y_precedes(const IndexedPoint& a, const IndexedPoint& b) { return a.y < b.y; }

// Finds the best pair of by_x[first, last) (x-sorted) into `best` and leaves the range sorted by
// y in `by_y`; `scratch` is as long as by_y.
void divide_conquer(std::vector<IndexedPoint>& by_y, std::vector<IndexedPoint>& scratch,
                    std::size_t first, std::size_t last, Best& best) {
  const std::size_t count = last - first;
  if (count <= 3) {
    for (std::size_t a = first; a < last; ++a)
      for (std::size_t b = a + 1; b < last; ++b)
        best.consider({by_y[a].x, by_y[a].y}, by_y[a].index, {by_y[b].x, by_y[b].y}, by_y[b].index);
    std::sort(by_y.begin() + first, by_y.begin() + last, y_precedes);
    return;
  }
  const std::size_t middle = first + count / 2;
  const float line = by_y[middle].x;  // still x-sorted here
  divide_conquer(by_y, scratch, first, middle, best);
  divide_conquer(by_y, scratch, middle, last, best);
  std::merge(by_y.begin() + first, by_y.begin() + middle, by_y.begin() + middle,
             by_y.begin() + last, scratch.begin() + first, y_precedes);
  std::copy(scratch.begin() + first, scratch.begin() + last, by_y.begin() + first);

  // The strip, y-ordered, reuses the scratch space.
  const double radius = best.radius();
  std::size_t strip_size = first;
  for (std::size_t k = first; k < last; ++k)
    if (std::abs(static_cast<double>(by_y[k].x) - line) <= radius) scratch[strip_size++] = by_y[k];
  // At most 8 points fit in the radius-high rectangle above a point (4 per radius-wide square on
  // either side of the line, each half's points being a radius apart), so 7 successors suffice.
  for (std::size_t s = first; s < strip_size; ++s) {
    const std::size_t end = std::min(strip_size, s + 8);
    for (std::size_t t = s + 1; t < end; ++t) {
      if (static_cast<double>(scratch[t].y) - scratch[s].y > best.radius()) break;
      best.consider({scratch[s].x, scratch[s].y}, scratch[s].index, {scratch[t].x, scratch[t].y},
                    scratch[t].index);
    }
  }
}

}  // namespace

PairFound cpu_brute_force(std::span<const Point2> points) {
  Best best;
  for (std::size_t i = 0; i < points.size(); ++i)
    for (std::size_t j = i + 1; j < points.size(); ++j) best.consider(points[i], i, points[j], j);
  return best.found();
}

PairFound cpu_blocked(std::span<const Point2> points, std::size_t block) {
  if (block == 0) throw Error(ErrorKind::invalid_argument, "cpu_blocked: block size is 0");
  const std::size_t n = points.size();
  Best best;
  for (std::size_t block_i = 0; block_i < n; block_i += block) {
    const std::size_t end_i = std::min(n, block_i + block);
    for (std::size_t block_j = block_i; block_j < n; block_j += block) {
      const std::size_t end_j = std::min(n, block_j + block);
      for (std::size_t i = block_i; i < end_i; ++i)
        for (std::size_t j = std::max(block_j, i + 1); j < end_j; ++j)
          best.consider(points[i], i, points[j], j);
    }
  }
  return best.found();
}

PairFound cpu_divide_conquer(std::span<const Point2> points, double* sort_ms) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<IndexedPoint> by_y(points.size());
  for (std::size_t k = 0; k < points.size(); ++k)
    by_y[k] = {points[k].x, points[k].y, static_cast<std::uint32_t>(k)};
  std::sort(by_y.begin(), by_y.end(), [](const IndexedPoint& a, const IndexedPoint& b) {
    return std::tie(a.x, a.index) < std::tie(b.x, b.index);
  });
  if (sort_ms != nullptr)
    *sort_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::vector<IndexedPoint> scratch(points.size());
  Best best;
  divide_conquer(by_y, scratch, 0, by_y.size(), best);
  return best.found();
}

}  // namespace ptxrt::apps
