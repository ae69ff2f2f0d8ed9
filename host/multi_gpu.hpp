// One large matmul split over several GPUs: C = A·B with A m×k and B k×n (row-major fp32, the
// matmul_tiled kernel). C's rows, with the matching rows of A, go in contiguous blocks to the
// devices, and B is copied to every device; one host thread per device, each in its device's
// primary context, all taking the kernel from one Jit::library (one compile and one load for
// devices of one arch). The kernel computes each element of C from one row of A and all of B in
// the same order whatever block the row falls in, so on devices of one arch the result is bit for
// bit the one a single GPU computes.
//
// Thread safety: split_matmul may be called from several threads at once (the Jit is shared).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

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

// Every device the driver sees: 0, 1, ..., Device::count() - 1.
std::vector<int> all_devices();

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
  std::vector<float> c;  // m×n
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
