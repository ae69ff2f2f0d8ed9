// One large matmul split over several GPUs: C = A·B with A m×k and B k×n (row-major fp32, the
// matmul_tiled kernel). C's rows, with the matching rows of A, go in contiguous blocks to the
// devices, and B is copied to every device; one host thread per device, each in its device's
// primary context, all taking the kernel from one Jit::library (one compile and one load for
// devices of one arch). The kernel computes each element of C from one row of A and all of B in
// the same order whatever block the row falls in, so on devices of one arch the result is bit for
// bit the one a single GPU computes.
//
// The threads of a split (run_parts_together) serve host/closest_pair/multi_gpu_closest_pair.cpp as well.
//
// Thread safety: split_matmul and run_parts_together may be called from several threads at once
// (the Jit is shared).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "host/common/device_selection.hpp"
#include "ptxrt/jit.hpp"

namespace ptxrt::host {

struct RowBlock {
  std::size_t first = 0;
  std::size_t count = 0;
};

// `rows` in `parts` contiguous blocks, in order, covering every row once: each a multiple of
// `granule` rows except the last non-empty one, and as equal as that allows (sizes differ by at
// most one granule). Blocks past the end are empty. Error(invalid_argument) for 0 parts or granule.
std::vector<RowBlock> split_rows(std::size_t rows, std::size_t parts, std::size_t granule);

// One device's part of a split, made on the device's own thread: its constructor does everything
// that is not the work itself (context, kernel, memory), so that run() starts together on all.
class DevicePart {
 public:
  virtual ~DevicePart() = default;
  virtual void run() = 0;
};

// Makes part i = 0..count-1 with make(i) on a thread of its own, waits until every part is made,
// then runs them all. Returns the milliseconds from that moment to the end of the last run()
// (before any part is destroyed). A part's failure is rethrown once every thread has finished.
double run_parts_together(std::size_t count,
                          const std::function<std::unique_ptr<DevicePart>(std::size_t)>& make);

struct MultiGpuMatmulOptions {
  std::vector<int> devices;  // ordinals, each at most once; empty: all_devices()
  int tile_width = 16;       // matmul_tiled's TILE_WIDTH: 4, 8, 16 or 32
};

// What one device did, timed on its own thread.
struct DeviceShare {
  int device = 0;
  RowBlock rows;
  double upload_ms = 0;    // its rows of A and all of B, from pageable host memory
  double kernel_ms = 0;    // the launch alone (CUDA events)
  double download_ms = 0;  // its rows of C
};

struct MultiGpuMatmul {
  std::vector<float> c;             // m×n
  std::vector<DeviceShare> shares;  // in the order of options.devices
  // From the moment every device is ready (kernel loaded, memory allocated) to the last row of C
  // on the host: what a caller waits for, compilation and allocation aside.
  double wall_ms = 0;
  double slowest_kernel_ms() const;
};

// Error(invalid_argument) when a span's size does not match its dimensions, a dimension is 0 or
// over INT_MAX, or a device is listed twice; a device's failure is rethrown once every thread
// has finished.
MultiGpuMatmul split_matmul(Jit& jit, std::span<const float> a, std::span<const float> b,
                            std::size_t m, std::size_t n, std::size_t k,
                            const MultiGpuMatmulOptions& options = {});

}  // namespace ptxrt::host
