// The closest pair of n 2-D points: CPU references (brute force, cache-blocked brute force,
// divide & conquer) and GPU methods (tiled brute force, the study's bottom-up divide & conquer
// with BASE points per leaf, and a hashed uniform grid for large n).
//
// Every method returns the exact minimum: the pair's distance is the fp64 distance of the two
// float points (dx and dy in double, dx·dx + dy·dy rounded step by step, then sqrt), and no pair
// of the input is closer by that measure. GPU methods prune in fp32 and decide between near-ties
// in fp64 (ptx_src/closest_pair_math.cuh says how), so their distance equals the CPU's bit for
// bit; among several pairs at the minimum any may be returned (brute force and blocked return the
// smallest (i, j)). The one exception: two distinct points closer than about 1e-20 may
// be taken for a pair that is not the closest by divide & conquer (fp32 squares underflow there).
//
// The points may be in host memory, in pinned host memory or already on the GPU: the last two are
// the fast paths (a pinned upload runs at the bus's speed; device points are not copied, and are
// checked by a kernel rather than a CPU loop). Functions are thread-safe; GPU methods compile
// through the given Jit (modules cached per context) and allocate their own device memory per
// call.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/memory.hpp"

namespace ptxrt::apps {

// Layout-identical to CUDA's float2 (8 bytes, 8-aligned): kernels read arrays of these.
struct alignas(8) Point2 {
  float x, y;
  bool operator==(const Point2&) const = default;
};
static_assert(sizeof(Point2) == 8, "must match float2");

enum class ClosestPairMethod {
  automatic,       // "auto": grid on a GPU for n above a few thousand, else CPU divide & conquer
  grid,            // GPU Z-order sort (radix) and quadtree search, linear on any density
  divide_conquer,  // GPU bottom-up divide & conquer (the study's)
  brute_force,     // GPU tiled brute force, O(n²)
  cpu_divide_conquer,
  cpu_brute_force,
  cpu_blocked,
};

// "auto", "grid", "dc", "brute", "cpu-dc", "cpu-brute", "cpu-blocked".
std::string_view to_string(ClosestPairMethod method);
// The inverse; an unknown name is Error(invalid_argument) listing the valid ones.
ClosestPairMethod parse_closest_pair_method(std::string_view name);
bool is_gpu_method(ClosestPairMethod method);
// What `method` stands for with n points here: automatic as closest_pair() resolves it (grid on a
// usable GPU from 4096 points, else cpu-dc), any other method itself.
ClosestPairMethod resolve_closest_pair_method(ClosestPairMethod method, std::size_t n);
// What `method` stands for with points on the GPU or in pinned memory: automatic is grid; a CPU
// method is Error(invalid_argument). Needs no GPU.
ClosestPairMethod resolve_device_method(ClosestPairMethod method);

// Milliseconds. GPU methods: set-up and upload are wall times, sort and rest events around the
// kernels (their sum is the GPU time); total_ms is the wall time of the whole call, which also
// holds what none of these do (allocation, the checks' round trips, reading the answer back).
// CPU methods report their sort (by x) and the rest.
struct ClosestPairTimes {
  double setup_ms = 0.0;  // GPU: the context and the JIT (compiling, or finding, the kernels)
  double upload_ms =
      0.0;                // GPU, points in host memory: the copy to the device, allocation included
  double sort_ms = 0.0;   // x sort (+ per-level y merges for divide & conquer); grid: Z-order sort
  double rest_ms = 0.0;   // comparisons and reductions (GPU: with the check of the points)
  double total_ms = 0.0;  // wall time of the whole call
  double gpu_ms() const { return sort_ms + rest_ms; }
};

struct ClosestPair {
  std::size_t i = 0;  // indices into the input, i < j
  std::size_t j = 0;
  double distance = 0.0;
  ClosestPairMethod method = ClosestPairMethod::automatic;  // the method that ran
  ClosestPairTimes times;
};

struct ClosestPairOptions {
  int base = 128;  // divide & conquer: points per leaf and threads per block, 32..1024, power of 2
  std::size_t cpu_block = 256;  // cpu_blocked: points per cache block
  // GPU methods: where to run and how to compile; default: device 0's primary context (points
  // on the device: their buffer's context) and Jit::shared().
  std::optional<Context> context;
  Jit* jit = nullptr;
};

// The closest pair. Throws Error(invalid_argument) when there are fewer than 2 points, a
// coordinate is not finite, a GPU method gets 2^31 points or more or coordinates beyond ±1e18
// (their fp32 squares overflow), or an option is out of range; GPU methods throw as the runtime
// does when there is no GPU.
ClosestPair closest_pair(std::span<const Point2> points,
                         ClosestPairMethod method = ClosestPairMethod::automatic,
                         const ClosestPairOptions& options = {});
// Points in pinned host memory: uploaded at the bus's speed, then as for device points.
ClosestPair closest_pair(const PinnedBuffer<Point2>& points,
                         ClosestPairMethod method = ClosestPairMethod::automatic,
                         const ClosestPairOptions& options = {});
// Points already on the GPU, in their buffer's context: checked there (same errors as above), not
// copied. GPU methods only ("auto" is grid); a CPU method is Error(invalid_argument).
ClosestPair closest_pair(const DeviceBuffer<Point2>& points,
                         ClosestPairMethod method = ClosestPairMethod::automatic,
                         const ClosestPairOptions& options = {});

// The fp64 distance between two input points, as every method measures it.
double point_distance(const Point2& a, const Point2& b);

}  // namespace ptxrt::apps
