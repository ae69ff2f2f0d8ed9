#include "apps/closest_pair/multi_gpu_closest_pair.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/staged_copy.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/ptxrt.hpp"

namespace ptxrt::apps {
namespace {

// The brute force's kernels in `context`, from the one Library of their image (one load for
// every device of an arch).
BruteForceRange::Kernels brute_force_kernels(Jit& jit, int base, const Context& context) {
  const Library library =
      jit.library(apps::builtin_program("closest_pair"),
                  Jit::target_for({.defines = {{"BASE", std::to_string(base)}}}, context));
  return {library.kernel("brute_force", context), library.kernel("reduce_minima", context)};
}

// One device's range of tile pairs, on its own thread: kernels, memory, the search's buffers and
// the upload's stream are made before `run`, which uploads the points and searches.
class DeviceSearch : public DevicePart {
 public:
  DeviceSearch(Jit& jit, std::span<const Point2> points, const MultiGpuClosestPairOptions& options,
               ClosestPairShare& share, PairMinimum& best)
      : points_(points),
        share_(share),
        best_(best),
        transfers_(options.transfers),
        context_(Context::primary(share.device)),
        device_points_(context_, points.size()),
        range_(context_, brute_force_kernels(jit, options.base, context_), options.base,
               points.size(), share.tile_pairs.first,
               share.tile_pairs.first + share.tile_pairs.count),
        stream_(context_),
        copier_(context_) {
    share_.upload_bytes = points.size_bytes();
  }

  void run() override {
    const auto start = std::chrono::steady_clock::now();
    if (transfers_ == HostTransfers::overlapped) {
      copier_.upload(device_points_.memory(), 0, std::as_bytes(points_), stream_);
      // The search runs on the legacy stream, which does not wait for ptxrt's streams.
      stream_.synchronize();
    } else {
      device_points_.upload(points_);
    }
    share_.upload_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const BruteForceRange::Found found = range_.search(device_points_);
    share_.kernel_ms = found.kernel_ms;
    best_ = found.minimum;
  }

 private:
  std::span<const Point2> points_;
  ClosestPairShare& share_;
  PairMinimum& best_;
  HostTransfers transfers_;
  Context context_;
  DeviceBuffer<Point2> device_points_;
  BruteForceRange range_;
  Stream stream_;
  StagedCopier copier_;
};

}  // namespace

std::vector<RowBlock> split_tile_pairs(std::size_t n, int base, std::size_t parts) {
  if (base <= 0)
    throw Error(ErrorKind::invalid_argument,
                "split_tile_pairs: base " + std::to_string(base) + " must be at least 1");
  return split_rows(brute_force_tile_pairs(n, base), parts, 1);
}

double MultiGpuClosestPair::slowest_kernel_ms() const {
  double slowest = 0;
  for (const ClosestPairShare& share : shares) slowest = std::max(slowest, share.kernel_ms);
  return slowest;
}

MultiGpuClosestPair split_closest_pair(Jit& jit, std::span<const Point2> points,
                                       const MultiGpuClosestPairOptions& options) {
  check_gpu_input(points, options.base);
  const std::vector<int> devices = devices_or_all(options.devices, "split_closest_pair");
  const std::vector<RowBlock> ranges =
      split_tile_pairs(points.size(), options.base, devices.size());

  MultiGpuClosestPair result;
  for (std::size_t i = 0; i < devices.size(); ++i) result.shares.push_back({devices[i], ranges[i]});
  // A device whose range is empty (more devices than tile pairs) gets no thread.
  std::vector<std::size_t> working;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (ranges[i].count > 0) working.push_back(i);
  std::vector<PairMinimum> bests(working.size(), no_pair_yet(infinite_distance()));
  result.wall_ms = run_parts_together(working.size(), [&](std::size_t part) {
    return std::make_unique<DeviceSearch>(jit, points, options, result.shares[working[part]],
                                          bests[part]);
  });
  // The order of the fold does not matter: merge_minimum keeps the least by one total order.
  PairMinimum best = no_pair_yet(infinite_distance());
  for (const PairMinimum& device_best : bests) merge_minimum(best, device_best);
  const PairFound pair = pair_found(best);
  result.i = pair.i;
  result.j = pair.j;
  result.distance = point_distance(points[pair.i], points[pair.j]);
  return result;
}

}  // namespace ptxrt::apps
