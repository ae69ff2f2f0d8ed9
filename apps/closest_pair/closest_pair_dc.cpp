// The study's bottom-up divide & conquer on the GPU (ptx_src/closest_pair.cu has the kernels and
// the launch sequence): sort by x, brute-force the leaves, then one merge level at a time with
// the running minimum read back and broadcast through the constant `closest_pair_bound`.
#include <array>
#include <string>

#include "apps/classic/device_sort.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

namespace {

// The device arrays of one run, sized for n points.
struct DivideConquerBuffers {
  DivideConquerBuffers(const Context& context, std::size_t n)
      : n_pow2(bitonic_length(n)),
        keys(context, n_pow2),
        order(context, n_pow2),
        by_x(context, n),
        index_by_x(context, n),
        by_y{DeviceBuffer<Point2>(context, n), DeviceBuffer<Point2>(context, n)},
        index_by_y{DeviceBuffer<int>(context, n), DeviceBuffer<int>(context, n)},
        flags(context, n),
        offsets(context, n + 1),
        strip(context, n),
        strip_index(context, n),
        strip_batch(context, n) {}

  std::size_t n_pow2;
  DeviceBuffer<float> keys;
  DeviceBuffer<int> order;
  DeviceBuffer<Point2> by_x;
  DeviceBuffer<int> index_by_x;
  // Ping-pong: each level merges one into the other.
  std::array<DeviceBuffer<Point2>, 2> by_y;
  std::array<DeviceBuffer<int>, 2> index_by_y;
  DeviceBuffer<int> flags;
  DeviceBuffer<int> offsets;
  DeviceBuffer<Point2> strip;
  DeviceBuffer<int> strip_index;
  DeviceBuffer<int> strip_batch;
};

}  // namespace

GpuResult gpu_divide_conquer(DevicePoints points, const GpuSetup& setup) {
  const CompileOptions options{.defines = {{"BASE", std::to_string(setup.base)}}};
  const Module module = setup.jit->module(apps::builtin_program("closest_pair"), options, setup.context);
  const DeviceSort sorter(setup.context, *setup.jit);
  const DeviceScan scan(setup.context, *setup.jit);
  const Symbol<float> bound = module.symbol<float>("closest_pair_bound");
  const auto base = static_cast<unsigned>(setup.base);
  const auto n = static_cast<long long>(points.count);
  const unsigned blocks = blocks_for(points.count, base);
  const LaunchConfig per_point{.grid = blocks, .block = base};

  DivideConquerBuffers buffers(setup.context, points.count);
  DeviceBuffer<PairMinimum> block_minima(setup.context, blocks);
  MinimumTotal total(setup.context, module.kernel("reduce_minima"));
  GpuResult result;

  GpuInterval sort_interval(setup.context);
  module.kernel("dc_prepare_keys")
      .launch({.grid = blocks_for(buffers.n_pow2, base), .block = base}, points.address, n,
              static_cast<long long>(buffers.n_pow2), buffers.keys, buffers.order);
  sorter.sort(buffers.keys, &buffers.order, buffers.n_pow2);
  module.kernel("dc_gather")
      .launch(per_point, points.address, buffers.order, n, buffers.by_x, buffers.index_by_x);
  result.sort_ms = sort_interval.stop();

  GpuInterval leaves_interval(setup.context);
  module.kernel("dc_leaves")
      .launch(per_point, buffers.by_x, buffers.index_by_x, n, buffers.by_y[0],
              buffers.index_by_y[0], block_minima);
  total.fold(block_minima, blocks);
  bound.set(total.read().bound);
  result.rest_ms = leaves_interval.stop();

  const Kernel merge = module.kernel("dc_merge");
  const Kernel strip_flags = module.kernel("dc_strip_flags");
  const Kernel strip_gather = module.kernel("dc_strip_gather");
  const Kernel strip_compare = module.kernel("dc_strip_compare");
  const CUdeviceptr strip_count = buffers.offsets.address() + points.count * sizeof(int);
  int current = 0;
  for (long long length = 2LL * base; length / 2 < n; length *= 2) {
    GpuInterval merge_interval(setup.context);
    merge.launch(per_point, buffers.by_y[current], buffers.index_by_y[current], n, length,
                 buffers.by_y[1 - current], buffers.index_by_y[1 - current]);
    current = 1 - current;
    result.sort_ms += merge_interval.stop();

    GpuInterval strip_interval(setup.context);
    strip_flags.launch(per_point, buffers.by_y[current], buffers.by_x, n, length, buffers.flags);
    scan.exclusive(buffers.flags.address(), buffers.offsets.address(), points.count);
    strip_gather.launch(per_point, buffers.by_y[current], buffers.index_by_y[current],
                        buffers.flags, buffers.offsets, n, length, buffers.strip,
                        buffers.strip_index, buffers.strip_batch);
    strip_compare.launch(per_point, buffers.strip, buffers.strip_index, buffers.strip_batch,
                         strip_count, block_minima);
    total.fold(block_minima, blocks);
    // The next level prunes with everything found so far.
    bound.set(total.read().bound);
    result.rest_ms += strip_interval.stop();
  }
  result.pair = total.pair();
  return result;
}

}  // namespace ptxrt::apps
