// The GPU closest-pair methods and what they share: the kernels' result type, the device scan,
// the block-minima reduction and event timing. Used by host/closest_pair.cpp; the methods
// validate nothing that closest_pair() already checked (n >= 2, n < 2^31, finite coordinates
// within ±1e18).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "host/closest_pair.hpp"
#include "host/closest_pair_cpu.hpp"
#include "ptx_src/closest_pair_math.cuh"
#include "ptxrt/jit.hpp"
#include "ptxrt/memory.hpp"
#include "ptxrt/stream.hpp"

namespace ptxrt::host {

static_assert(sizeof(PairMinimum) == 24 && alignof(PairMinimum) == 8,
              "PairMinimum must have the layout the kernels write");

// Where and how the GPU methods run.
struct GpuSetup {
  Context context;
  Jit* jit;
  int base;  // divide & conquer and brute force: BASE
};

// What a GPU method found (a pair of input indices with its fp64 squared distance) and its times.
struct GpuResult {
  PairFound pair;
  double sort_ms = 0.0;
  double rest_ms = 0.0;
};

GpuResult gpu_brute_force(std::span<const Point2> points, const GpuSetup& setup);
GpuResult gpu_divide_conquer(std::span<const Point2> points, const GpuSetup& setup);
// `low` and `high` are the corners of the points' bounding box.
GpuResult gpu_grid(std::span<const Point2> points, Point2 low, Point2 high, const GpuSetup& setup);

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

}  // namespace ptxrt::host
