#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "apps/common/reference.hpp"
#include "ptxrt/core/error.hpp"

namespace apps = ptxrt::apps;

namespace {

constexpr float infinity = std::numeric_limits<float>::infinity();
constexpr float not_a_number = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("matmul multiplies a 2x3 by a 3x2 matrix") {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};
  CHECK(apps::matmul(a, b, 2, 2, 3) == std::vector<float>{58, 64, 139, 154});
}

TEST_CASE("matmul accumulates in double: 2^24 + 1 - 2^24 is 1, not 0") {
  const std::vector<float> a = {16777216.0f, 1.0f, -16777216.0f};
  const std::vector<float> b = {1.0f, 1.0f, 1.0f};
  CHECK(apps::matmul(a, b, 1, 1, 3) == std::vector<float>{1.0f});
}

TEST_CASE("matmul rejects an A whose size is not m*k") {
  const std::vector<float> a(5), b(6);
  CHECK_THROWS_WITH_AS(apps::matmul(a, b, 2, 2, 3), "matmul: a has 5 elements, expected m*k = 6",
                       ptxrt::Error);
}

TEST_CASE("vector_add and matrix_add add element by element") {
  const std::vector<float> a = {1.5f, -2.0f, 3.0f, 0.25f};
  const std::vector<float> b = {0.5f, 2.0f, -4.0f, 0.5f};
  const std::vector<float> expected = {2.0f, 0.0f, -1.0f, 0.75f};
  CHECK(apps::vector_add(a, b) == expected);
  CHECK(apps::matrix_add(a, b, 2, 2) == expected);
  CHECK_THROWS_AS(apps::matrix_add(a, b, 3, 2), ptxrt::Error);
  CHECK_THROWS_AS(apps::vector_add(a, std::vector<float>(3)), ptxrt::Error);
}

TEST_CASE("transpose turns a 2x3 matrix into its 3x2 transpose") {
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  CHECK(apps::transpose(in, 2, 3) == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("sum accumulates in double") {
  const std::vector<float> values = {1e8f, 1.0f, -1e8f, 0.5f};
  CHECK(apps::sum(values) == 1.5);
  CHECK(apps::sum(std::vector<float>{}) == 0.0);
}

TEST_CASE("argmin breaks ties towards the smallest index") {
  const std::vector<float> values = {3.0f, -1.0f, 2.0f, -1.0f, -1.0f};
  const apps::ArgMin result = apps::argmin(values);
  CHECK(result.value == -1.0f);
  CHECK(result.index == 1);
}

TEST_CASE("argmin treats -0 and +0 as equal, so the first one wins") {
  const std::vector<float> values = {1.0f, 0.0f, -0.0f};
  const apps::ArgMin result = apps::argmin(values);
  CHECK(result.index == 1);
  CHECK_FALSE(std::signbit(result.value));
}

TEST_CASE("argmin ranks NaN after every number, +infinity included") {
  const std::vector<float> values = {not_a_number, infinity, not_a_number};
  CHECK(apps::argmin(values).index == 1);
  const std::vector<float> all_nan = {not_a_number, not_a_number};
  const apps::ArgMin result = apps::argmin(all_nan);
  CHECK(std::isnan(result.value));
  CHECK(result.index == 0);
}

TEST_CASE("argmin of nothing is an invalid argument") {
  CHECK_THROWS_WITH_AS(apps::argmin(std::vector<float>{}), "argmin: values is empty", ptxrt::Error);
}

TEST_CASE("sort orders duplicates, negatives and infinities ascending") {
  std::vector<float> keys = {3.0f, -infinity, 0.5f, -2.0f, infinity, 3.0f, -2.0f};
  apps::sort(keys);
  CHECK(keys == std::vector<float>{-infinity, -2.0f, -2.0f, 0.5f, 3.0f, 3.0f, infinity});
}

TEST_CASE("sort puts NaN keys after +infinity") {
  std::vector<float> keys = {not_a_number, 1.0f, infinity, not_a_number, -1.0f};
  apps::sort(keys);
  CHECK(keys[0] == -1.0f);
  CHECK(keys[1] == 1.0f);
  CHECK(keys[2] == infinity);
  CHECK(std::isnan(keys[3]));
  CHECK(std::isnan(keys[4]));
}

TEST_CASE("sort of pairs is stable: equal keys keep their input order") {
  std::vector<float> keys = {2.0f, 1.0f, 2.0f, not_a_number, 1.0f, -infinity};
  std::vector<int> values = {10, 11, 12, 13, 14, 15};
  apps::sort(keys, values);
  CHECK(values == std::vector<int>{15, 11, 14, 10, 12, 13});
  CHECK(keys[0] == -infinity);
  CHECK(keys[4] == 2.0f);
  CHECK(std::isnan(keys[5]));
  std::vector<int> too_few(5);
  CHECK_THROWS_AS(apps::sort(keys, too_few), ptxrt::Error);
}

TEST_CASE("raytrace shades the nearest sphere by dz/radius on a black background") {
  // 4x4 image: pixel (px, py) casts its ray through (px - 2, py - 2).
  const std::vector<apps::Sphere> spheres = {
      {1.0f, 0.5f, 0.0f, 2.0f, 0.0f, 0.0f, 0.0f},    // front surface at z = 2 on the axis
      {0.0f, 0.0f, 1.0f, 3.0f, 0.0f, 0.0f, -10.0f},  // behind it, wider
  };
  const std::vector<unsigned char> rgba = apps::raytrace(spheres, 4, 4);
  REQUIRE(rgba.size() == 4 * 4 * 4);
  const auto pixel = [&](int px, int py) {
    const auto at = static_cast<std::size_t>(py * 4 + px) * 4;
    return std::vector<int>{rgba[at], rgba[at + 1], rgba[at + 2], rgba[at + 3]};
  };
  // Centre ray: the front sphere, full brightness; 0.5 * 255 = 127.5 truncates to 127.
  CHECK(pixel(2, 2) == std::vector<int>{255, 127, 0, 255});
  // One pixel off: dz = sqrt(3), shade = sqrt(3)/2 = 0.866; 220.8 and 110.4 truncate.
  CHECK(pixel(1, 2) == std::vector<int>{220, 110, 0, 255});
  // Two pixels off: on the front sphere's rim (not a hit: d² = r²), inside the back one:
  // dz = sqrt(9 - 4), shade = sqrt(5)/3 = 0.745, 190.1 in blue.
  CHECK(pixel(0, 2) == std::vector<int>{0, 0, 190, 255});
  // Corner ray (-2, -2): d² = 8 < 9 still hits the back sphere; dz = 1, shade 1/3: 85.
  CHECK(pixel(0, 0) == std::vector<int>{0, 0, 85, 255});
}

TEST_CASE("raytrace of no spheres is black and opaque") {
  const std::vector<unsigned char> rgba = apps::raytrace({}, 3, 1);
  CHECK(rgba == std::vector<unsigned char>{0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255});
}

TEST_CASE("simpson integrates x^2 over [0, 1] to exactly 1/3 with two intervals") {
  CHECK(apps::simpson(apps::Integrand::x_squared, 0.0, 1.0, 2) == 1.0 / 3.0);
}

TEST_CASE("simpson integrates 4/(1+x^2) over [0, 1] to pi and sin over [0, pi] to 2") {
  CHECK(apps::simpson(apps::Integrand::four_over_one_plus_x_squared, 0.0, 1.0, 1000) ==
        doctest::Approx(std::numbers::pi).epsilon(1e-13));
  CHECK(apps::simpson(apps::Integrand::sine, 0.0, std::numbers::pi, 1000) ==
        doctest::Approx(2.0).epsilon(1e-11));
}

TEST_CASE("simpson rejects an odd or too small number of intervals") {
  CHECK_THROWS_WITH_AS(apps::simpson(apps::Integrand::sine, 0.0, 1.0, 3),
                       "simpson: n = 3 intervals, must be even and >= 2", ptxrt::Error);
  CHECK_THROWS_AS(apps::simpson(apps::Integrand::sine, 0.0, 1.0, 0), ptxrt::Error);
}

TEST_CASE("squared_norms gives the same answer for AoS and SoA points") {
  const std::vector<apps::Point> points = {{1, 2, 2}, {0, -3, 4}, {0.5f, 0, 0}};
  const std::vector<float> x = {1, 0, 0.5f}, y = {2, -3, 0}, z = {2, 4, 0};
  const std::vector<float> expected = {9, 25, 0.25f};
  CHECK(apps::squared_norms(points) == expected);
  CHECK(apps::squared_norms(x, y, z) == expected);
  CHECK_THROWS_AS(apps::squared_norms(x, y, std::vector<float>(2)), ptxrt::Error);
}

TEST_CASE("compare measures the worst difference relative to the largest reference value") {
  const std::vector<float> expected = {1.0f, -4.0f, 2.0f};
  const std::vector<float> actual = {1.5f, -4.0f, 2.25f};
  const apps::Deviation deviation = apps::compare(actual, expected);
  CHECK(deviation.max_relative_error == 0.125);
  CHECK(deviation.worst_index == 0);
  CHECK(apps::compare(expected, expected).max_relative_error == 0.0);
}

TEST_CASE("compare never passes a NaN, on either side, even against NaN") {
  const std::vector<float> numbers = {1.0f, 2.0f};
  const std::vector<float> with_nan = {1.0f, not_a_number};
  CHECK(apps::max_relative_error(with_nan, numbers) == std::numeric_limits<double>::infinity());
  CHECK(apps::max_relative_error(numbers, with_nan) == std::numeric_limits<double>::infinity());
  const apps::Deviation deviation = apps::compare(with_nan, with_nan);
  CHECK(deviation.max_relative_error == std::numeric_limits<double>::infinity());
  CHECK(deviation.worst_index == 1);
}

TEST_CASE("compare accepts matching infinities and rejects mismatched ones") {
  const std::vector<float> expected = {infinity, 2.0f};
  CHECK(apps::max_relative_error(std::vector<float>{infinity, 2.0f}, expected) == 0.0);
  CHECK(apps::max_relative_error(std::vector<float>{-infinity, 2.0f}, expected) ==
        std::numeric_limits<double>::infinity());
  CHECK(apps::max_relative_error(std::vector<float>{1e30f, 2.0f}, expected) ==
        std::numeric_limits<double>::infinity());
}

TEST_CASE("compare against an all-zero reference passes only an exact match") {
  const std::vector<float> zeros = {0.0f, 0.0f};
  CHECK(apps::max_relative_error(std::vector<float>{0.0f, -0.0f}, zeros) == 0.0);
  CHECK(apps::max_relative_error(std::vector<float>{0.0f, 1e-30f}, zeros) ==
        std::numeric_limits<double>::infinity());
}

TEST_CASE("compare rejects spans of different sizes") {
  CHECK_THROWS_WITH_AS(apps::compare(std::vector<float>(2), std::vector<float>(3)),
                       "compare: actual has 2 elements, expected expected's size = 3",
                       ptxrt::Error);
}

TEST_CASE("histogram counts every value once, clamping values past the last bin into it") {
  const std::vector<std::uint32_t> values = {0, 3, 3, 1, 7, 4, 4294967295u};
  CHECK(apps::histogram(values, 4) == std::vector<std::uint32_t>{1, 1, 0, 5});
  CHECK(apps::histogram({}, 2) == std::vector<std::uint32_t>{0, 0});
  CHECK_THROWS_WITH_AS(apps::histogram(values, 0), "histogram: a histogram needs at least one bin",
                       ptxrt::Error);
}
