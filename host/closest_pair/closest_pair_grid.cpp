// The grid method (ptx_src/closest_pair_grid.cu): bucket-sort the points by hashed cell, search
// each point's 3x3 cell neighbourhood, and check that the cell width covered the pruning radius
// of what was found; if not, rebuild with cells that wide (at most once more: the pair found lies
// within one cell of the wider grid, so its search finds a radius no larger).
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "host/closest_pair/closest_pair_gpu.hpp"
#include "ptxrt/program.hpp"

namespace ptxrt::host {

namespace {

constexpr unsigned grid_block = 256;

// Mirrors GridGeometry in closest_pair_grid.cu (passed by value as a kernel argument).
struct GridGeometry {
  double origin_x;
  double origin_y;
  double inverse_cell;
  unsigned long long bucket_mask;
};

// About 2 points per cell for uniform data; a degenerate box (a line, one point) gets its length
// shared out instead. Never finer than 2^-40 of the box, so cell coordinates fit in 64 bits.
double initial_cell_width(double width, double height, std::size_t n) {
  const double extent = std::max(width, height);
  if (extent == 0.0) return 1.0;
  const double cell = width > 0.0 && height > 0.0
                          ? 1.5 * std::sqrt(width * height / static_cast<double>(n))
                          : 1.5 * extent / static_cast<double>(n);
  return std::max(cell, extent * 0x1p-40);
}

struct GridBuffers {
  GridBuffers(const Context& context, std::span<const Point2> input, std::size_t buckets)
      : points(context, input),
        bucket_of_point(context, input.size()),
        bucket_count(context, buckets),
        bucket_start(context, buckets + 1),
        sorted(context, input.size()),
        sorted_index(context, input.size()) {
    // grid_scatter counts every bucket back down to zero, so one clear serves every build.
    bucket_count.fill_bytes(0);
  }
  DeviceBuffer<Point2> points;
  DeviceBuffer<int> bucket_of_point;
  DeviceBuffer<int> bucket_count;
  DeviceBuffer<int> bucket_start;
  DeviceBuffer<Point2> sorted;
  DeviceBuffer<int> sorted_index;
};

}  // namespace

GpuResult gpu_grid(std::span<const Point2> points, Point2 low, Point2 high, const GpuSetup& setup) {
  const CompileOptions options{.defines = {{"BLOCK_SIZE", std::to_string(grid_block)}}};
  const Module module =
      setup.jit->module(Program::builtin("closest_pair_grid"), options, setup.context);
  const DeviceScan scan(setup.context, *setup.jit);
  const Kernel assign = module.kernel("grid_assign");
  const Kernel scatter = module.kernel("grid_scatter");
  const Kernel search = module.kernel("grid_search");
  const auto n = static_cast<long long>(points.size());
  const std::size_t buckets = std::bit_ceil(points.size());
  const unsigned blocks = blocks_for(points.size(), grid_block);
  const LaunchConfig per_point{.grid = blocks, .block = grid_block};

  GridBuffers buffers(setup.context, points, buckets);
  DeviceBuffer<PairMinimum> block_minima(setup.context, blocks);
  MinimumTotal total(setup.context, module.kernel("reduce_minima"));
  const double width = static_cast<double>(high.x) - low.x;
  const double height = static_cast<double>(high.y) - low.y;
  double cell = initial_cell_width(width, height, points.size());
  GpuResult result;
  for (;;) {
    const GridGeometry geometry{low.x, low.y, 1.0 / cell, buckets - 1};
    GpuInterval sort_interval(setup.context);
    assign.launch(per_point, buffers.points, n, geometry, buffers.bucket_of_point,
                  buffers.bucket_count);
    scan.exclusive(buffers.bucket_count.address(), buffers.bucket_start.address(), buckets);
    scatter.launch(per_point, buffers.points, buffers.bucket_of_point, n, buffers.bucket_start,
                   buffers.bucket_count, buffers.sorted, buffers.sorted_index);
    result.sort_ms += sort_interval.stop();

    GpuInterval search_interval(setup.context);
    search.launch(per_point, buffers.sorted, buffers.sorted_index, buffers.bucket_start, n,
                  geometry, total.read().bound, block_minima);
    total.fold(block_minima, blocks);
    float bound = total.read().bound;
    result.rest_ms += search_interval.stop();
    // No two points shared a neighbourhood: any pair bounds the minimum.
    if (std::isinf(bound))
      bound = pair_distance_squared_f32(points[0].x, points[0].y, points[1].x, points[1].y);
    const double radius = pruning_radius(bound);
    // The margin keeps two points one radius apart in adjacent cells despite rounding.
    if (radius * (1.0 + 0x1p-20) <= cell) break;
    cell = std::max(radius * (1.0 + 0x1p-10), std::max(width, height) * 0x1p-40);
  }
  result.pair = total.pair();
  return result;
}

}  // namespace ptxrt::host
