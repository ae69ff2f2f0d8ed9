#include "host/closest_pair/closest_pair.hpp"

#include <array>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <string>
#include <utility>

#include "host/closest_pair/closest_pair_cpu.hpp"
#include "host/closest_pair/closest_pair_gpu.hpp"
#include "ptxrt/driver.hpp"
#include "ptxrt/error.hpp"

namespace ptxrt::host {

namespace {

constexpr std::array<std::pair<ClosestPairMethod, std::string_view>, 7> method_names{{
    {ClosestPairMethod::automatic, "auto"},
    {ClosestPairMethod::grid, "grid"},
    {ClosestPairMethod::divide_conquer, "dc"},
    {ClosestPairMethod::brute_force, "brute"},
    {ClosestPairMethod::cpu_divide_conquer, "cpu-dc"},
    {ClosestPairMethod::cpu_brute_force, "cpu-brute"},
    {ClosestPairMethod::cpu_blocked, "cpu-blocked"},
}};

// Below this many points the CPU answers before a GPU has compiled its kernels.
constexpr std::size_t automatic_gpu_threshold = 4096;
// fp32 squares of larger coordinate differences overflow.
constexpr float gpu_coordinate_limit = 1e18f;

struct Box {
  Point2 low;
  Point2 high;
};

// Checks what every method needs and returns the bounding box.
Box validate(std::span<const Point2> points) {
  if (points.size() < 2)
    throw Error(ErrorKind::invalid_argument,
                "closest pair: needs at least 2 points, got " + std::to_string(points.size()));
  if (points.size() > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument, "closest pair: " + std::to_string(points.size()) +
                                                 " points exceed the limit of 2^31-1");
  Box box{points[0], points[0]};
  for (std::size_t k = 0; k < points.size(); ++k) {
    const Point2& p = points[k];
    if (!std::isfinite(p.x) || !std::isfinite(p.y))
      throw Error(ErrorKind::invalid_argument, "closest pair: point " + std::to_string(k) +
                                                   " has a coordinate that is not finite");
    box.low = {std::min(box.low.x, p.x), std::min(box.low.y, p.y)};
    box.high = {std::max(box.high.x, p.x), std::max(box.high.y, p.y)};
  }
  return box;
}

void validate_for_gpu(const Box& box, int base) {
  for (float value : {box.low.x, box.low.y, box.high.x, box.high.y}) {
    if (std::abs(value) > gpu_coordinate_limit)
      throw Error(ErrorKind::invalid_argument,
                  "closest pair: coordinate " + std::to_string(value) +
                      " is beyond the GPU methods' limit of ±1e18; use a cpu method");
  }
  if (base < 32 || base > 1024 || !std::has_single_bit(static_cast<unsigned>(base)))
    throw Error(ErrorKind::invalid_argument, "closest pair: BASE " + std::to_string(base) +
                                                 " is not a power of two from 32 to 1024");
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

GpuResult run_cpu(std::span<const Point2> points, ClosestPairMethod method,
                  const ClosestPairOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  GpuResult result;
  switch (method) {
    case ClosestPairMethod::cpu_brute_force:
      result.pair = cpu_brute_force(points);
      break;
    case ClosestPairMethod::cpu_blocked:
      result.pair = cpu_blocked(points, options.cpu_block);
      break;
    default:
      result.pair = cpu_divide_conquer(points, &result.sort_ms);
      break;
  }
  result.rest_ms = milliseconds_since(start) - result.sort_ms;
  return result;
}

GpuResult run_gpu(std::span<const Point2> points, ClosestPairMethod method, const Box& box,
                  const ClosestPairOptions& options) {
  validate_for_gpu(box, options.base);
  const GpuSetup setup{options.context ? *options.context : Context::primary(0),
                       options.jit != nullptr ? options.jit : &Jit::shared(), options.base};
  switch (method) {
    case ClosestPairMethod::brute_force:
      return gpu_brute_force(points, setup);
    case ClosestPairMethod::divide_conquer:
      return gpu_divide_conquer(points, setup);
    default:
      return gpu_grid(points, box.low, box.high, setup);
  }
}

}  // namespace

void check_gpu_input(std::span<const Point2> points, int base) {
  validate_for_gpu(validate(points), base);
}

std::string_view to_string(ClosestPairMethod method) {
  for (const auto& [value, name] : method_names)
    if (value == method) return name;
  return "unknown";
}

ClosestPairMethod parse_closest_pair_method(std::string_view name) {
  std::string known;
  for (const auto& [value, method_name] : method_names) {
    if (method_name == name) return value;
    known += (known.empty() ? "" : ", ") + std::string(method_name);
  }
  throw Error(ErrorKind::invalid_argument,
              "unknown closest-pair method '" + std::string(name) + "'; known: " + known);
}

ClosestPairMethod resolve_closest_pair_method(ClosestPairMethod method, std::size_t n) {
  if (method != ClosestPairMethod::automatic) return method;
  if (n >= automatic_gpu_threshold && driver_status().usable) return ClosestPairMethod::grid;
  return ClosestPairMethod::cpu_divide_conquer;
}

bool is_gpu_method(ClosestPairMethod method) {
  return method == ClosestPairMethod::grid || method == ClosestPairMethod::divide_conquer ||
         method == ClosestPairMethod::brute_force;
}

double point_distance(const Point2& a, const Point2& b) {
  return std::sqrt(pair_distance_squared_f64(a.x, a.y, b.x, b.y));
}

ClosestPair closest_pair(std::span<const Point2> points, ClosestPairMethod method,
                         const ClosestPairOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Box box = validate(points);
  const ClosestPairMethod resolved = resolve_closest_pair_method(method, points.size());
  const GpuResult found = is_gpu_method(resolved) ? run_gpu(points, resolved, box, options)
                                                  : run_cpu(points, resolved, options);
  ClosestPair result;
  result.i = found.pair.i;
  result.j = found.pair.j;
  // Recomputed from the input: the same fp64 formula every method compares with.
  result.distance = point_distance(points[result.i], points[result.j]);
  result.method = resolved;
  result.times = {found.sort_ms, found.rest_ms, milliseconds_since(start)};
  return result;
}

}  // namespace ptxrt::host
