// The closest pair by brute force, its O(n²) pairs split over several GPUs. The brute force walks
// a triangle of tile pairs (tiles of BASE points, pairs (a, b) with a <= b, in the order of
// triangle_tile_pair); every tile pair but the diagonal ones and those of the last, partial tile
// holds BASE² pairs, so contiguous ranges of equally many tile pairs carry equal shares of the
// pairs (an even split of rows would not: a row's pair count grows with its index). Every device
// takes the whole point set, one host thread each in its device's primary context, the kernels
// from one Jit::library; the host folds the devices' best pairs by the rule the kernels fold
// blocks by (distance, then i, then j), so that the pair, ties included, is the one a single GPU
// finds.
//
// Thread safety: split_closest_pair may be called from several threads at once (the Jit is
// shared); split_tile_pairs is a pure function.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/matmul/multi_gpu.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

// The tile pairs of n points in tiles of `base` in `parts` contiguous ranges, in order, as equal
// in count as they allow (split_rows with a granule of one). Their pairs differ by the diagonal
// tile pairs (half full), of which the first ranges hold more: within 1.3% of an even share over
// 8 parts at n = 10^5, shrinking as 1/n. Error(invalid_argument) for 0 parts or a base below 1.
std::vector<RowBlock> split_tile_pairs(std::size_t n, int base, std::size_t parts);

struct MultiGpuClosestPairOptions {
  std::vector<int> devices;  // ordinals, each at most once; empty: all_devices()
  int base = 128;            // closest_pair.cu's BASE: 32..1024, a power of two
  // Overlapped: the points go up asynchronously on a stream, straight from page-locked memory or
  // through pinned staging (they are a few MiB against seconds of O(n²) work: nothing to overlap
  // them with but the copy itself). Synchronous: a plain copy from wherever they are.
  HostTransfers transfers = HostTransfers::overlapped;
};

// What one device did, timed on its own thread.
struct ClosestPairShare {
  int device = 0;
  RowBlock tile_pairs;   // its range of the triangle
  double upload_ms = 0;  // every point, until it is on the device
  std::size_t upload_bytes = 0;
  double kernel_ms = 0;  // the brute force over its range and the fold of its block minima
  double upload_gb_per_s() const {
    return giga_per_second(static_cast<double>(upload_bytes), upload_ms);
  }
};

struct MultiGpuClosestPair {
  std::size_t i = 0;  // the closest pair, i < j, as closest_pair(brute_force) on one GPU finds it
  std::size_t j = 0;
  double distance = 0.0;                 // point_distance(points[i], points[j])
  std::vector<ClosestPairShare> shares;  // in the order of options.devices
  // From the moment every device is ready (kernels loaded, memory allocated) to the last best
  // pair on the host.
  double wall_ms = 0;
  double slowest_kernel_ms() const;
};

// Throws what closest_pair() throws for the GPU brute force's input and options, and
// Error(invalid_argument) when a device is listed twice; a device's failure is rethrown once
// every thread has finished.
MultiGpuClosestPair split_closest_pair(Jit& jit, std::span<const Point2> points,
                                       const MultiGpuClosestPairOptions& options = {});

}  // namespace ptxrt::apps
