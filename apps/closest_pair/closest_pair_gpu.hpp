// The GPU closest-pair methods and what they share: the kernels' result type, the points' box on
// the device, the device scan, the block-minima reduction, the brute force over a range of tile
// pairs, the grid method's solver, and event timing. Used by apps/closest_pair/closest_pair.cpp,
// device_slab.cpp and multi_gpu_closest_pair.cpp; the methods validate nothing that closest_pair()
// (or check_gpu_input, check_gpu_box) already checked. Each method takes points on the device
// (closest_pair() uploads host points first and times that apart).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_cpu.hpp"
#include "ptx_src/closest_pair_math.cuh"
#include "ptx_src/closest_pair_morton.cuh"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/stream.hpp"

namespace ptxrt::apps {

static_assert(sizeof(PairMinimum) == 24 && alignof(PairMinimum) == 8,
              "PairMinimum must have the layout the kernels write");

// Points on the device: the first `count` of a buffer, which may have room for more (a slab's);
// a buffer converts to all of its points.
struct DevicePoints {
  DevicePoints(CUdeviceptr first, std::size_t points) : address(first), count(points) {}
  DevicePoints(const DeviceBuffer<Point2>& buffer)
      : address(buffer.address()), count(buffer.size()) {}
  CUdeviceptr address;
  std::size_t count;
};

// Where and how the GPU methods run.
struct GpuSetup {
  Context context;
  Jit* jit;
  int base;  // divide & conquer and brute force: BASE
};

// What a GPU method found (a pair of input indices with its fp64 squared distance) and its GPU
// times (events around its kernels).
struct GpuResult {
  PairFound pair;
  double sort_ms = 0.0;
  double rest_ms = 0.0;
};

// The corners of the points' bounding box.
struct PointBox {
  Point2 low;
  Point2 high;
};

// What closest_pair() checks before a GPU method: n >= 2, n < 2^31, finite coordinates within
// ±1e18, BASE a power of two from 32 to 1024. Throws Error(invalid_argument) naming the fault.
void check_gpu_input(std::span<const Point2> points, int base);
// The same for points whose box is known: coordinates within ±1e18, BASE in range.
void check_gpu_box(const PointBox& box, int base);

// closest_pair() of device points (in `context`) whose box is known (and so their coordinates
// finite), as a kernel that made them computed it: the same answer and errors, without the
// check's pass.
ClosestPair closest_pair_in_box(const Context& context, DevicePoints points, const PointBox& box,
                                ClosestPairMethod method, const ClosestPairOptions& options);

GpuResult gpu_brute_force(DevicePoints points, const GpuSetup& setup);
GpuResult gpu_divide_conquer(DevicePoints points, const GpuSetup& setup);
GpuResult gpu_grid(DevicePoints points, const PointBox& box, const GpuSetup& setup);

// Compiles (or finds in the Jit's caches) every kernel `method` runs, the bounds kernel included,
// so that the method's own time is its work: closest_pair() reports this as set-up.
void prepare_gpu_method(ClosestPairMethod method, const GpuSetup& setup);

// closest_pair_grid.cu built for the grid method and for device_bounds.
Module grid_module(const GpuSetup& setup);
// The box of the finite points, and the first point that is not finite (its index; n when none),
// from one kernel (its time added to gpu_ms) and a download.
PointBounds device_bounds(DevicePoints points, const GpuSetup& setup, double& gpu_ms);
PointBox decode_box(const PointBounds& bounds);

// Exclusive scan of ints (closest_pair_scan.cu): out[0, n) the prefix sums, out[n] the total.
class DeviceScan {
 public:
  DeviceScan(const Context& context, Jit& jit);
  void exclusive(CUdeviceptr in, CUdeviceptr out, std::size_t n) const;

 private:
  Context context_;
  Kernel scan_blocks_;
  Kernel scan_add_;
};

// The running total of a search on the device, folded from per-block minima by reduce_minima.
class MinimumTotal {
 public:
  MinimumTotal(const Context& context, Kernel reduce_minima);
  void fold(const DeviceBuffer<PairMinimum>& block_minima, std::size_t count) const;
  PairMinimum read() const;  // waits for the work before it
  PairFound pair() const;    // the best candidate as input indices

 private:
  Kernel reduce_minima_;
  DeviceBuffer<PairMinimum> total_;
};

// The best candidate of a minimum as input indices.
PairFound pair_found(const PairMinimum& minimum);

// The brute force's tile pairs (a <= b) for n points in tiles of `base`: T(T+1)/2, T =
// ceil(n/base).
unsigned long long brute_force_tile_pairs(std::size_t n, int base);

// The brute force over the tile pairs [first, end) of the triangle (in triangle_tile_pair's
// order; [0, brute_force_tile_pairs(n, base)) holds every pair once) in one context, its kernels
// taken from a Module (one device) or a Library (several). The constructor allocates, so that
// search() is the search alone.
class BruteForceRange {
 public:
  struct Kernels {
    Kernel brute_force;
    Kernel reduce_minima;
  };
  struct Found {
    PairMinimum minimum;   // first = -1 when the range holds no pair
    double kernel_ms = 0;  // the search and the fold of its block minima (events)
  };

  BruteForceRange(const Context& context, Kernels kernels, int base, std::size_t n,
                  unsigned long long first, unsigned long long end);
  // The best pair of the range among `points` (all n, on the device). Waits for the result.
  Found search(DevicePoints points);

 private:
  Context context_;
  Kernel brute_force_;
  unsigned base_;
  long long n_;
  long long first_;
  long long end_;
  unsigned blocks_;
  DeviceBuffer<PairMinimum> block_minima_;
  MinimumTotal total_;
};

// The grid method (closest_pair_grid.cpp) with its kernels, radix sort and device memory made
// once for sets of up to `capacity` points, so that a search allocates nothing and waits twice:
// for the sort's check of long runs of equal keys (which decides whether to sort by 64-bit
// codes), and for the answer. Reused by every search; one at a time.
class GridSolver {
 public:
  // Error(invalid_argument) for a capacity of 0 or above the radix sort's.
  GridSolver(const GpuSetup& setup, std::size_t capacity);
  GridSolver(GridSolver&&) noexcept;
  GridSolver& operator=(GridSolver&&) noexcept;
  ~GridSolver();

  std::size_t capacity() const noexcept;
  // Launches the search of points (2 up to capacity, their box checked) and returns when only
  // the search itself is left to run: its pair lands in minimum(), on the device.
  void search(DevicePoints points, const PointBox& box);
  const DeviceBuffer<PairMinimum>& minimum() const noexcept;
  // The last search's pair and its sort's and the rest's GPU times: waits for it.
  GpuResult result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Milliseconds between two events recorded on the default stream around a piece of work.
class GpuInterval {
 public:
  explicit GpuInterval(const Context& context) : start_(context), stop_(context) {
    start_.record();
  }
  double stop() {
    stop_.record();
    return Event::elapsed_ms(start_, stop_);
  }

 private:
  Event start_;
  Event stop_;
};

}  // namespace ptxrt::apps
