#include "apps/common/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>

#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {

void require_size(std::string_view function, std::string_view argument, std::size_t size,
                  std::size_t expected, std::string_view expected_as) {
  if (size == expected) return;
  throw Error(ErrorKind::invalid_argument, std::string(function) + ": " + std::string(argument) +
                                               " has " + std::to_string(size) +
                                               " elements, expected " + std::string(expected_as) +
                                               " = " + std::to_string(expected));
}

// The order shared by argmin and sort: numbers ascending, every NaN after every number.
bool key_precedes(float key, float other) {
  return key < other || (!std::isnan(key) && std::isnan(other));
}

}  // namespace

std::vector<float> matmul(std::span<const float> a, std::span<const float> b, std::size_t m,
                          std::size_t n, std::size_t k) {
  require_size("matmul", "a", a.size(), m * k, "m*k");
  require_size("matmul", "b", b.size(), k * n, "k*n");
  std::vector<float> c(m * n);
  for (std::size_t row = 0; row < m; ++row) {
    for (std::size_t col = 0; col < n; ++col) {
      double dot = 0.0;
      for (std::size_t i = 0; i < k; ++i) {
        dot += static_cast<double>(a[row * k + i]) * static_cast<double>(b[i * n + col]);
      }
      c[row * n + col] = static_cast<float>(dot);
    }
  }
  return c;
}

std::vector<float> vector_add(std::span<const float> a, std::span<const float> b) {
  require_size("vector_add", "b", b.size(), a.size(), "a's size");
  std::vector<float> c(a.size());
  std::transform(a.begin(), a.end(), b.begin(), c.begin(), std::plus<>());
  return c;
}

std::vector<float> matrix_add(std::span<const float> a, std::span<const float> b, std::size_t rows,
                              std::size_t cols) {
  require_size("matrix_add", "a", a.size(), rows * cols, "rows*cols");
  require_size("matrix_add", "b", b.size(), rows * cols, "rows*cols");
  return vector_add(a, b);
}

std::vector<float> transpose(std::span<const float> in, std::size_t rows, std::size_t cols) {
  require_size("transpose", "in", in.size(), rows * cols, "rows*cols");
  std::vector<float> out(in.size());
  for (std::size_t row = 0; row < rows; ++row) {
    for (std::size_t col = 0; col < cols; ++col) out[col * rows + row] = in[row * cols + col];
  }
  return out;
}

double sum(std::span<const float> values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

ArgMin argmin(std::span<const float> values) {
  if (values.empty()) throw Error(ErrorKind::invalid_argument, "argmin: values is empty");
  // min_element keeps the first of equal elements, which is the smallest-index tie rule.
  const auto best = std::min_element(values.begin(), values.end(), key_precedes);
  return {*best, static_cast<std::int64_t>(best - values.begin())};
}

void sort(std::span<float> keys) { std::sort(keys.begin(), keys.end(), key_precedes); }

void sort(std::span<float> keys, std::span<int> values) {
  require_size("sort", "values", values.size(), keys.size(), "keys' size");
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t left, std::size_t right) {
    return key_precedes(keys[left], keys[right]);
  });
  const std::vector<float> old_keys(keys.begin(), keys.end());
  const std::vector<int> old_values(values.begin(), values.end());
  for (std::size_t i = 0; i < order.size(); ++i) {
    keys[i] = old_keys[order[i]];
    values[i] = old_values[order[i]];
  }
}

namespace {

// raytrace.cu's channel(): colour scaled by shade, clamped to [0, 1] (NaN to 0), times 255.
unsigned char channel(float colour, float shade) {
  const float level = colour * shade;
  const float clamped = level > 0.0f ? (level < 1.0f ? level : 1.0f) : 0.0f;
  return static_cast<unsigned char>(clamped * 255.0f);
}

}  // namespace

std::vector<unsigned char> raytrace(std::span<const Sphere> spheres, int width, int height) {
  if (width < 0 || height < 0) {
    throw Error(ErrorKind::invalid_argument, "raytrace: image size " + std::to_string(width) + "x" +
                                                 std::to_string(height) + " is negative");
  }
  std::vector<unsigned char> rgba(static_cast<std::size_t>(width) * height * 4);
  for (int py = 0; py < height; ++py) {
    for (int px = 0; px < width; ++px) {
      const auto ray_x = static_cast<float>(px - width / 2);
      const auto ray_y = static_cast<float>(py - height / 2);
      float nearest_z = -std::numeric_limits<float>::infinity();
      float shade = 0.0f;
      const Sphere* hit = nullptr;
      for (const Sphere& sphere : spheres) {
        const float dx = ray_x - sphere.x;
        const float dy = ray_y - sphere.y;
        const float distance2 = dx * dx + dy * dy;
        const float radius2 = sphere.radius * sphere.radius;
        if (!(distance2 < radius2)) continue;
        const float dz = std::sqrt(radius2 - distance2);
        const float z = sphere.z + dz;
        if (z > nearest_z) {
          nearest_z = z;
          shade = dz / sphere.radius;
          hit = &sphere;
        }
      }
      unsigned char* pixel = &rgba[(static_cast<std::size_t>(py) * width + px) * 4];
      pixel[0] = hit ? channel(hit->r, shade) : 0;
      pixel[1] = hit ? channel(hit->g, shade) : 0;
      pixel[2] = hit ? channel(hit->b, shade) : 0;
      pixel[3] = 255;
    }
  }
  return rgba;
}

double integrand(Integrand function, double x) {
  switch (function) {
    case Integrand::four_over_one_plus_x_squared:
      return 4.0 / (1.0 + x * x);
    case Integrand::x_squared:
      return x * x;
    case Integrand::sine:
      return std::sin(x);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double simpson(Integrand function, double a, double b, std::int64_t n) {
  if (n < 2 || n % 2 != 0) {
    throw Error(ErrorKind::invalid_argument,
                "simpson: n = " + std::to_string(n) + " intervals, must be even and >= 2");
  }
  const double h = (b - a) / static_cast<double>(n);
  double total = integrand(function, a) + integrand(function, b);
  for (std::int64_t i = 1; i < n; ++i) {
    const double weight = i % 2 != 0 ? 4.0 : 2.0;
    total += weight * integrand(function, a + static_cast<double>(i) * h);
  }
  return total * (h / 3.0);
}

namespace {

float squared_norm(float x, float y, float z) { return (x * x + y * y) + z * z; }

}  // namespace

std::vector<float> squared_norms(std::span<const Point> points) {
  std::vector<float> out(points.size());
  std::transform(points.begin(), points.end(), out.begin(),
                 [](const Point& p) { return squared_norm(p.x, p.y, p.z); });
  return out;
}

std::vector<float> squared_norms(std::span<const float> x, std::span<const float> y,
                                 std::span<const float> z) {
  require_size("squared_norms", "y", y.size(), x.size(), "x's size");
  require_size("squared_norms", "z", z.size(), x.size(), "x's size");
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = squared_norm(x[i], y[i], z[i]);
  return out;
}

std::vector<std::uint32_t> histogram(std::span<const std::uint32_t> values, std::size_t bins) {
  if (bins == 0)
    throw Error(ErrorKind::invalid_argument, "histogram: a histogram needs at least one bin");
  std::vector<std::uint32_t> counts(bins, 0);
  for (std::uint32_t value : values) ++counts[std::min<std::size_t>(value, bins - 1)];
  return counts;
}

Deviation compare(std::span<const float> actual, std::span<const float> expected) {
  require_size("compare", "actual", actual.size(), expected.size(), "expected's size");
  constexpr double infinity = std::numeric_limits<double>::infinity();
  double scale = 0.0;
  for (const float value : expected) {
    if (std::isfinite(value)) scale = std::max(scale, std::fabs(static_cast<double>(value)));
  }
  Deviation worst;
  double worst_difference = 0.0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    // Equal values (equal infinities included) are no error; NaN never equals anything.
    if (actual[i] == expected[i]) continue;
    const bool comparable = std::isfinite(actual[i]) && std::isfinite(expected[i]);
    const double difference =
        comparable ? std::fabs(static_cast<double>(actual[i]) - expected[i]) : infinity;
    if (difference > worst_difference) {
      worst_difference = difference;
      worst.worst_index = i;
    }
  }
  if (worst_difference == 0.0) return worst;
  worst.max_relative_error = scale > 0.0 ? worst_difference / scale : infinity;
  return worst;
}

double max_relative_error(std::span<const float> actual, std::span<const float> expected) {
  return compare(actual, expected).max_relative_error;
}

}  // namespace ptxrt::apps
