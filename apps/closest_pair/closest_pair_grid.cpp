// The grid method (ptx_src/closest_pair_grid.cu): sort the points along a Z-order curve with the
// radix sort (host/classic/radix_sort), bound the minimum by neighbours on the curve, then search
// each point's pruning radius through the quadtree nodes that the sorted keys spell out. The
// kernel file says why every distribution stays linear and when the 64-bit keys are needed.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "apps/classic/radix_sort.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/sizes.hpp"
#include "ptx_src/closest_pair_morton.cuh"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

namespace {

constexpr unsigned grid_block = 256;
// A finest cell of the 32-bit keys holding more sorted points than this makes the host sort by
// the full 64-bit code.
constexpr long long run_limit = 32;
constexpr int short_levels = 16;
constexpr int full_levels = 32;
constexpr int key_bits = 32;

// The table of node starts has at most one entry per point: 4^level <= n.
int table_level_for(std::size_t n) {
  return std::min(static_cast<int>(std::bit_width(n) - 1) / 2, short_levels);
}

struct GridBuffers {
  GridBuffers(const Context& context, std::size_t n, int table_level, unsigned blocks)
      : keys{DeviceBuffer<unsigned>(context, n), DeviceBuffer<unsigned>(context, n)},
        order{DeviceBuffer<int>(context, n), DeviceBuffer<int>(context, n)},
        sorted(context, n),
        sorted_index(context, n),
        sorted_keys(context, n),
        cell_start(context, (std::size_t{1} << (2 * table_level)) + 1),
        block_minima(context, blocks),
        bound_bits(context, 1),
        long_run(context, 1) {}

  // The radix sort's double buffers, starting from index `first`.
  RadixBuffers radix_buffers(int first) const {
    return {{keys[first].address(), keys[1 - first].address()},
            {order[first].address(), order[1 - first].address()}};
  }

  std::array<DeviceBuffer<unsigned>, 2> keys;
  std::array<DeviceBuffer<int>, 2> order;
  DeviceBuffer<Point2> sorted;
  DeviceBuffer<int> sorted_index;
  DeviceBuffer<unsigned long long> sorted_keys;
  DeviceBuffer<int> cell_start;
  DeviceBuffer<PairMinimum> block_minima;
  DeviceBuffer<unsigned> bound_bits;
  DeviceBuffer<int> long_run;
};

GridFrame frame_of(const PointBox& box) {
  const double width = static_cast<double>(box.high.x) - box.low.x;
  const double height = static_cast<double>(box.high.y) - box.low.y;
  const double extent = std::max(width, height);
  return {box.low.x, box.low.y, extent > 0.0 ? std::ldexp(1.0, 32) / extent : 0.0, extent};
}

}  // namespace

Module grid_module(const GpuSetup& setup) {
  return setup.jit->module(apps::builtin_program("closest_pair_grid"),
                           {.defines = {{"BLOCK_SIZE", std::to_string(grid_block)}}},
                           setup.context);
}

PointBounds device_bounds(const DeviceBuffer<Point2>& points, const GpuSetup& setup,
                          double& gpu_ms) {
  const Kernel bounds_kernel = grid_module(setup).kernel("grid_bounds");
  const auto n = static_cast<long long>(points.size());
  PointBounds bounds{0xffffffffu, 0xffffffffu, 0u, 0u, n};
  DeviceBuffer<PointBounds> device(setup.context, std::span<const PointBounds>(&bounds, 1));
  const unsigned blocks = grid_stride_blocks(points.size(), grid_block,
                                             setup.context.device().properties().sm_count, 8);
  GpuInterval interval(setup.context);
  bounds_kernel.launch({.grid = blocks, .block = grid_block}, points, n, device);
  gpu_ms += interval.stop();
  device.download(std::span<PointBounds>(&bounds, 1));
  return bounds;
}

PointBox decode_box(const PointBounds& bounds) {
  const auto coordinate = [](unsigned word) {
    return std::bit_cast<float>(float_bits_of_word(word));
  };
  return {{coordinate(bounds.low_x), coordinate(bounds.low_y)},
          {coordinate(bounds.high_x), coordinate(bounds.high_y)}};
}

GpuResult gpu_grid(const DeviceBuffer<Point2>& points, const PointBox& box, const GpuSetup& setup) {
  const Module module = grid_module(setup);
  const std::size_t n = points.size();
  const auto count = static_cast<long long>(n);
  const GridFrame frame = frame_of(box);
  const int table_level = table_level_for(n);
  const unsigned blocks = blocks_for(n, grid_block);
  const LaunchConfig per_point{.grid = blocks, .block = grid_block};
  RadixSort radix(setup.context, *setup.jit, n);
  GridBuffers buffers(setup.context, n, table_level, blocks);
  MinimumTotal total(setup.context, module.kernel("reduce_minima"));
  const Kernel keys = module.kernel("grid_keys");
  GpuResult result;

  GpuInterval sort_interval(setup.context);
  keys.launch(per_point, points, count, frame, 0, buffers.keys[0], buffers.order[0]);
  int sorted_by = radix.sort(buffers.radix_buffers(0), n, RadixKeys::unsigned_int, key_bits);
  buffers.long_run.fill_bytes(0);
  module.kernel("grid_long_runs")
      .launch(per_point, buffers.keys[sorted_by], count, run_limit, buffers.long_run);
  result.sort_ms += sort_interval.stop();
  int long_run = 0;
  buffers.long_run.download(std::span<int>(&long_run, 1));

  GpuInterval gather_interval(setup.context);
  if (long_run != 0) {
    // Sort by the low 32 bits, then stably by the high 32: the order of the 64-bit code.
    keys.launch(per_point, points, count, frame, 1, buffers.keys[0], buffers.order[0]);
    const int by_low = radix.sort(buffers.radix_buffers(0), n, RadixKeys::unsigned_int, key_bits);
    module.kernel("grid_keys_of")
        .launch(per_point, points, buffers.order[by_low], count, frame, buffers.keys[by_low]);
    const int relative =
        radix.sort(buffers.radix_buffers(by_low), n, RadixKeys::unsigned_int, key_bits);
    sorted_by = relative == 0 ? by_low : 1 - by_low;
  }
  const int levels = long_run != 0 ? full_levels : short_levels;
  module.kernel("grid_gather")
      .launch(per_point, points, buffers.order[sorted_by], count, frame, levels, buffers.sorted,
              buffers.sorted_index, buffers.sorted_keys);
  result.sort_ms += gather_interval.stop();

  GpuInterval search_interval(setup.context);
  buffers.bound_bits.memory().fill_words(std::bit_cast<std::uint32_t>(infinite_distance()));
  module.kernel("grid_bound").launch(per_point, buffers.sorted, count, buffers.bound_bits);
  const std::size_t cells = (std::size_t{1} << (2 * table_level)) + 1;
  module.kernel("grid_cell_starts")
      .launch({.grid = blocks_for(cells, grid_block), .block = grid_block}, buffers.sorted_keys,
              count, table_level, buffers.cell_start);
  module.kernel("grid_search")
      .launch(per_point, buffers.sorted, buffers.sorted_index, buffers.sorted_keys, count, frame,
              levels, table_level, buffers.cell_start, buffers.bound_bits, buffers.block_minima);
  total.fold(buffers.block_minima, blocks);
  result.rest_ms += search_interval.stop();
  result.pair = total.pair();
  return result;
}

}  // namespace ptxrt::apps
