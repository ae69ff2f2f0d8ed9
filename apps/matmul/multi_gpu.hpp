// One large matmul split over several GPUs: C = A·B with A m×k and B k×n (row-major fp32, the
// matmul_tiled kernel). C's rows, with the matching rows of A, go in contiguous blocks to the
// devices, and B is copied to every device; one host thread per device, each in its device's
// primary context, all taking the kernel from one Jit::library (one compile and one load for
// devices of one arch). The kernel computes each element of C from one row of A and all of B in
// the same order whatever block the row falls in, so on devices of one arch the result is bit for
// bit the one a single GPU computes.
//
// Transfers overlap the work by default: each device uploads B, then its rows of A in chunks on a
// copy stream, each chunk's kernel starting on a compute stream as soon as its rows are there,
// each chunk of C going back while later chunks compute. Page-locked host memory (PinnedBuffer)
// goes straight to the copy engine; pageable memory through pinned staging buffers
// (apps/common/staged_copy.hpp). HostTransfers::synchronous keeps the plain pageable copies
// before and after the kernel, for comparison.
//
// The threads of a split (run_parts_together) serve apps/closest_pair/multi_gpu_closest_pair.cpp as
// well.
//
// Thread safety: split_matmul and run_parts_together may be called from several threads at once
// (the Jit is shared).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/tune/device_selection.hpp"

namespace ptxrt::apps {

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

// How a split moves its inputs and results between the host and the devices.
enum class HostTransfers {
  overlapped,   // async on a copy stream, in chunks overlapping the kernels (pinned staging)
  synchronous,  // plain synchronous copies before and after the kernels
};
// "overlapped" | "synchronous"; Error(invalid_argument) listing them otherwise.
HostTransfers parse_host_transfers(std::string_view name);
std::string_view to_string(HostTransfers transfers);

struct MultiGpuMatmulOptions {
  std::vector<int> devices;  // ordinals, each at most once; empty: all_devices()
  int tile_width = 16;       // matmul_tiled's TILE_WIDTH: 4, 8, 16 or 32
  HostTransfers transfers = HostTransfers::overlapped;
};

// What one device did. Overlapped, the times are the GPU's (events): the uploads from the first
// to the last byte on the device, the kernels from the first start to the last end, the download
// from there to the last byte of C. Synchronous, the copies are timed on the host.
struct DeviceShare {
  int device = 0;
  RowBlock rows;
  double upload_ms = 0;  // its rows of A and all of B
  std::size_t upload_bytes = 0;
  double kernel_ms = 0;
  double download_ms = 0;  // its rows of C
  double upload_gb_per_s() const {
    return giga_per_second(static_cast<double>(upload_bytes), upload_ms);
  }
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
// The same into the caller's `c` (m×n; a PinnedBuffer's span receives C straight from the copy
// engine); the result's `c` stays empty.
MultiGpuMatmul split_matmul_into(Jit& jit, std::span<const float> a, std::span<const float> b,
                                 std::span<float> c, std::size_t m, std::size_t n, std::size_t k,
                                 const MultiGpuMatmulOptions& options = {});

}  // namespace ptxrt::apps
