#include "apps/closest_pair/closest_pair.hpp"

#include <array>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

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

void check_count(std::size_t n) {
  if (n < 2)
    throw Error(ErrorKind::invalid_argument,
                "closest pair: needs at least 2 points, got " + std::to_string(n));
  if (n > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument,
                "closest pair: " + std::to_string(n) + " points exceed the limit of 2^31-1");
}

Error non_finite(long long index) {
  return Error(ErrorKind::invalid_argument, "closest pair: point " + std::to_string(index) +
                                                " has a coordinate that is not finite");
}

// Checks what every method needs and returns the bounding box.
PointBox validate(std::span<const Point2> points) {
  check_count(points.size());
  PointBox box{points[0], points[0]};
  for (std::size_t k = 0; k < points.size(); ++k) {
    const Point2& p = points[k];
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) throw non_finite(static_cast<long long>(k));
    box.low = {std::min(box.low.x, p.x), std::min(box.low.y, p.y)};
    box.high = {std::max(box.high.x, p.x), std::max(box.high.y, p.y)};
  }
  return box;
}

void validate_for_gpu(const PointBox& box, int base) {
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

// The GPU's part of a call: set-up, then (for host points) the upload, then the method on the
// device, each timed.
class GpuCall {
 public:
  GpuCall(const Context& context, ClosestPairMethod method, const ClosestPairOptions& options)
      : start_(std::chrono::steady_clock::now()),
        method_(method),
        setup_{context, options.jit != nullptr ? options.jit : &Jit::shared(), options.base} {
    validate_base();
    prepare_gpu_method(method_, setup_);
    times_.setup_ms = milliseconds_since(start_);
  }

  DeviceBuffer<Point2> upload(std::span<const Point2> points) {
    const auto start = std::chrono::steady_clock::now();
    DeviceBuffer<Point2> device(setup_.context, points);
    times_.upload_ms = milliseconds_since(start);
    return device;
  }

  // `checked_box`: the box of points already checked on the host; else a kernel checks them.
  ClosestPair run(DevicePoints points, std::optional<PointBox> checked_box = std::nullopt) {
    double check_ms = 0.0;
    if (!checked_box) {
      const PointBounds bounds = device_bounds(points, setup_, check_ms);
      if (bounds.first_non_finite < static_cast<long long>(points.count))
        throw non_finite(bounds.first_non_finite);
      checked_box = decode_box(bounds);
    }
    const PointBox box = *checked_box;
    validate_for_gpu(box, setup_.base);
    GpuResult found;
    switch (method_) {
      case ClosestPairMethod::brute_force:
        found = gpu_brute_force(points, setup_);
        break;
      case ClosestPairMethod::divide_conquer:
        found = gpu_divide_conquer(points, setup_);
        break;
      default:
        found = gpu_grid(points, box, setup_);
        break;
    }
    ClosestPair result;
    result.i = found.pair.i;
    result.j = found.pair.j;
    result.distance = std::sqrt(found.pair.distance_squared);
    result.method = method_;
    result.times = times_;
    result.times.sort_ms = found.sort_ms;
    result.times.rest_ms = found.rest_ms + check_ms;
    result.times.total_ms = milliseconds_since(start_);
    return result;
  }

 private:
  // BASE is checked before anything compiles: the dc and brute modules are built with it.
  void validate_base() const { validate_for_gpu(PointBox{}, setup_.base); }

  std::chrono::steady_clock::time_point start_;
  ClosestPairMethod method_;
  GpuSetup setup_;
  ClosestPairTimes times_;
};

Context context_from(const ClosestPairOptions& options) {
  return options.context ? *options.context : Context::primary(0);
}

}  // namespace

void check_gpu_input(std::span<const Point2> points, int base) {
  validate_for_gpu(validate(points), base);
}

void check_gpu_box(const PointBox& box, int base) { validate_for_gpu(box, base); }

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

ClosestPairMethod resolve_device_method(ClosestPairMethod method) {
  if (method == ClosestPairMethod::automatic) return ClosestPairMethod::grid;
  if (!is_gpu_method(method))
    throw Error(ErrorKind::invalid_argument, "closest pair: method '" +
                                                 std::string(to_string(method)) +
                                                 "' runs on the CPU; points on the GPU need "
                                                 "grid, dc or brute");
  return method;
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
  // A CPU pass: the same checks and errors whether or not a GPU is there.
  const PointBox box = validate(points);
  const ClosestPairMethod resolved = resolve_closest_pair_method(method, points.size());
  if (is_gpu_method(resolved)) {
    validate_for_gpu(box, options.base);
    GpuCall call(context_from(options), resolved, options);
    const DeviceBuffer<Point2> device = call.upload(points);
    ClosestPair result = call.run(device, box);
    result.times.total_ms = milliseconds_since(start);
    return result;
  }
  const GpuResult found = run_cpu(points, resolved, options);
  ClosestPair result;
  result.i = found.pair.i;
  result.j = found.pair.j;
  // Recomputed from the input: the same fp64 formula every method compares with.
  result.distance = point_distance(points[result.i], points[result.j]);
  result.method = resolved;
  result.times.sort_ms = found.sort_ms;
  result.times.rest_ms = found.rest_ms;
  result.times.total_ms = milliseconds_since(start);
  return result;
}

// The call's own clock starts once the method is known: total_ms includes the set-up.
ClosestPair closest_pair(const PinnedBuffer<Point2>& points, ClosestPairMethod method,
                         const ClosestPairOptions& options) {
  check_count(points.size());
  const ClosestPairMethod resolved = resolve_device_method(method);
  GpuCall call(context_from(options), resolved, options);
  return call.run(call.upload(points.span()));
}

ClosestPair closest_pair(const DeviceBuffer<Point2>& points, ClosestPairMethod method,
                         const ClosestPairOptions& options) {
  check_count(points.size());
  GpuCall call(points.context(), resolve_device_method(method), options);
  return call.run(points);
}

ClosestPair closest_pair_in_box(const Context& context, DevicePoints points, const PointBox& box,
                                ClosestPairMethod method, const ClosestPairOptions& options) {
  check_count(points.count);
  GpuCall call(context, resolve_device_method(method), options);
  return call.run(points, box);
}

}  // namespace ptxrt::apps
