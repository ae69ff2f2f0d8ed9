// The grid method (ptx_src/closest_pair_grid.cu): sort the points along a Z-order curve with the
// radix sort (apps/classic/radix_sort), bound the minimum by neighbours on the curve, then search
// each point's pruning radius through the quadtree nodes that the sorted keys spell out. The
// kernel file says why every distribution stays linear and when the 64-bit keys are needed.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "apps/classic/radix_sort.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/sizes.hpp"
#include "ptx_src/closest_pair_morton.cuh"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

namespace {

constexpr unsigned grid_block = 256;
constexpr unsigned reduce_block = 1024;  // REDUCE_THREADS in closest_pair_grid.cu
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

PointBounds device_bounds(DevicePoints points, const GpuSetup& setup, double& gpu_ms) {
  const Kernel bounds_kernel = grid_module(setup).kernel("grid_bounds");
  const auto n = static_cast<long long>(points.count);
  PointBounds bounds{0xffffffffu, 0xffffffffu, 0u, 0u, n};
  DeviceBuffer<PointBounds> device(setup.context, std::span<const PointBounds>(&bounds, 1));
  const unsigned blocks =
      grid_stride_blocks(points.count, grid_block, setup.context.device().properties().sm_count, 8);
  GpuInterval interval(setup.context);
  bounds_kernel.launch({.grid = blocks, .block = grid_block}, points.address, n, device);
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

// The solver's device memory, sized for `capacity` points. The sort's arrays are reused once it
// is done: the sorted 64-bit codes take the room of the two key arrays, the sorted points'
// indices that of the order array the sort did not end in.
struct GridSolver::State {
  State(const GpuSetup& setup, std::size_t points)
      : context(setup.context),
        module(grid_module(setup)),
        radix(setup.context, *setup.jit, points),
        keys(module.kernel("grid_keys")),
        keys_of(module.kernel("grid_keys_of")),
        long_runs(module.kernel("grid_long_runs")),
        gather(module.kernel("grid_gather")),
        bound(module.kernel("grid_bound")),
        cell_starts(module.kernel("grid_cell_starts")),
        search(module.kernel("grid_search")),
        reduce(module.kernel("grid_minimum")),
        capacity(points),
        key_pairs(setup.context, points),
        order{DeviceBuffer<int>(setup.context, points), DeviceBuffer<int>(setup.context, points)},
        sorted(setup.context, points),
        cell_start(setup.context, (std::size_t{1} << (2 * table_level_for(points))) + 1),
        block_minima(setup.context, blocks_for(points, grid_block)),
        bound_bits(setup.context, 1),
        long_run(setup.context, 1),
        minimum(setup.context, 1),
        started(setup.context),
        sorted_event(setup.context),
        searched(setup.context) {}

  // Key array 0 or 1 of the sort, both in key_pairs.
  CUdeviceptr key_array(int which) const {
    return key_pairs.address() + (which == 0 ? 0 : capacity * sizeof(unsigned));
  }
  // The radix sort's double buffers, starting from index `first`.
  RadixBuffers radix_buffers(int first) const {
    return {{key_array(first), key_array(1 - first)},
            {order[first].address(), order[1 - first].address()}};
  }

  Context context;
  Module module;
  RadixSort radix;
  Kernel keys;
  Kernel keys_of;
  Kernel long_runs;
  Kernel gather;
  Kernel bound;
  Kernel cell_starts;
  Kernel search;
  Kernel reduce;
  std::size_t capacity;
  DeviceBuffer<unsigned long long> key_pairs;  // two arrays of 32-bit keys, then the sorted codes
  std::array<DeviceBuffer<int>, 2> order;
  DeviceBuffer<Point2> sorted;
  DeviceBuffer<int> cell_start;
  DeviceBuffer<PairMinimum> block_minima;
  DeviceBuffer<unsigned> bound_bits;
  DeviceBuffer<int> long_run;
  DeviceBuffer<PairMinimum> minimum;
  Event started;
  Event sorted_event;
  Event searched;
};

GridSolver::GridSolver(const GpuSetup& setup, std::size_t capacity)
    : state_(std::make_unique<State>(setup, capacity)) {}
GridSolver::GridSolver(GridSolver&&) noexcept = default;
GridSolver& GridSolver::operator=(GridSolver&&) noexcept = default;
GridSolver::~GridSolver() = default;

std::size_t GridSolver::capacity() const noexcept { return state_->capacity; }

const DeviceBuffer<PairMinimum>& GridSolver::minimum() const noexcept { return state_->minimum; }

void GridSolver::search(DevicePoints points, const PointBox& box) {
  State& state = *state_;
  const std::size_t n = points.count;
  if (n < 2 || n > state.capacity)
    throw Error(ErrorKind::invalid_argument, "grid solver: " + std::to_string(n) +
                                                 " points, it takes 2 to " +
                                                 std::to_string(state.capacity));
  const auto count = static_cast<long long>(n);
  const GridFrame frame = frame_of(box);
  const int table_level = table_level_for(n);
  const unsigned blocks = blocks_for(n, grid_block);
  const LaunchConfig per_point{.grid = blocks, .block = grid_block};

  state.started.record();
  state.keys.launch(per_point, points.address, count, frame, 0, state.key_array(0), state.order[0]);
  int sorted_by = state.radix.sort(state.radix_buffers(0), n, RadixKeys::unsigned_int, key_bits);
  state.long_run.fill_bytes(0);
  state.long_runs.launch(per_point, state.key_array(sorted_by), count, run_limit, state.long_run);
  int long_run = 0;
  state.long_run.download(std::span<int>(&long_run, 1));
  if (long_run != 0) {
    // Sort by the low 32 bits, then stably by the high 32: the order of the 64-bit code.
    state.keys.launch(per_point, points.address, count, frame, 1, state.key_array(0),
                      state.order[0]);
    const int by_low =
        state.radix.sort(state.radix_buffers(0), n, RadixKeys::unsigned_int, key_bits);
    state.keys_of.launch(per_point, points.address, state.order[by_low], count, frame,
                         state.key_array(by_low));
    const int relative =
        state.radix.sort(state.radix_buffers(by_low), n, RadixKeys::unsigned_int, key_bits);
    sorted_by = relative == 0 ? by_low : 1 - by_low;
  }
  const int levels = long_run != 0 ? full_levels : short_levels;
  const DeviceBuffer<int>& sorted_index = state.order[1 - sorted_by];
  state.gather.launch(per_point, points.address, state.order[sorted_by], count, frame, levels,
                      state.sorted, sorted_index, state.key_pairs);
  state.sorted_event.record();

  state.bound_bits.memory().fill_words(std::bit_cast<std::uint32_t>(infinite_distance()));
  state.bound.launch(per_point, state.sorted, count, state.bound_bits);
  const std::size_t cells = (std::size_t{1} << (2 * table_level)) + 1;
  state.cell_starts.launch({.grid = blocks_for(cells, grid_block), .block = grid_block},
                           state.key_pairs, count, table_level, state.cell_start);
  state.search.launch(per_point, state.sorted, sorted_index, state.key_pairs, count, frame, levels,
                      table_level, state.cell_start, state.bound_bits, state.block_minima);
  state.reduce.launch({.grid = 1, .block = reduce_block}, state.block_minima,
                      static_cast<long long>(blocks), state.minimum);
  state.searched.record();
}

GpuResult GridSolver::result() const {
  PairMinimum found;
  state_->minimum.download(std::span<PairMinimum>(&found, 1));
  return {pair_found(found), Event::elapsed_ms(state_->started, state_->sorted_event),
          Event::elapsed_ms(state_->sorted_event, state_->searched)};
}

GpuResult gpu_grid(DevicePoints points, const PointBox& box, const GpuSetup& setup) {
  GridSolver solver(setup, points.count);
  solver.search(points, box);
  return solver.result();
}

}  // namespace ptxrt::apps
