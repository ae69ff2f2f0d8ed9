#include "apps/closest_pair/closest_pair_gpu.hpp"

#include <algorithm>
#include <string>

#include "apps/classic/device_sort.hpp"
#include "apps/classic/radix_sort.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

namespace {

constexpr unsigned scan_block = 1024;
constexpr unsigned reduce_block = 1024;
// Brute force blocks loop over tile pairs; more blocks than this only add block minima to fold.
constexpr unsigned long long brute_force_max_blocks = 1u << 18;

}  // namespace

DeviceScan::DeviceScan(const Context& context, Jit& jit)
    : context_(context),
      scan_blocks_(jit.kernel(apps::builtin_program("closest_pair_scan"),
                              {.defines = {{"BLOCK_SIZE", std::to_string(scan_block)}}}, context,
                              "scan_blocks")),
      scan_add_(jit.kernel(apps::builtin_program("closest_pair_scan"),
                           {.defines = {{"BLOCK_SIZE", std::to_string(scan_block)}}}, context,
                           "scan_add")) {}

void DeviceScan::exclusive(CUdeviceptr in, CUdeviceptr out, std::size_t n) const {
  const unsigned blocks = blocks_for(std::max<std::size_t>(n, 1), scan_block);
  const auto count = static_cast<long long>(n);
  if (blocks == 1) {
    scan_blocks_.launch({.grid = 1, .block = scan_block}, in, out, out + n * sizeof(int), count);
    return;
  }
  // The block totals are scanned by the same two kernels, one level up.
  DeviceBuffer<int> totals(context_, blocks);
  DeviceBuffer<int> offsets(context_, blocks + 1u);
  scan_blocks_.launch({.grid = blocks, .block = scan_block}, in, out, totals, count);
  exclusive(totals.address(), offsets.address(), blocks);
  scan_add_.launch({.grid = blocks_for(n + 1, scan_block), .block = scan_block}, out, offsets,
                   count, static_cast<long long>(blocks));
}

MinimumTotal::MinimumTotal(const Context& context, Kernel reduce_minima)
    : reduce_minima_(std::move(reduce_minima)), total_(context, 1) {
  const PairMinimum none = no_pair_yet(infinite_distance());
  total_.upload(std::span<const PairMinimum>(&none, 1));
}

void MinimumTotal::fold(const DeviceBuffer<PairMinimum>& block_minima, std::size_t count) const {
  reduce_minima_.launch({.grid = 1, .block = reduce_block}, block_minima,
                        static_cast<long long>(count), total_);
}

PairMinimum MinimumTotal::read() const {
  PairMinimum total;
  total_.download(std::span<PairMinimum>(&total, 1));
  return total;
}

PairFound MinimumTotal::pair() const { return pair_found(read()); }

PairFound pair_found(const PairMinimum& minimum) {
  return {static_cast<std::size_t>(minimum.first), static_cast<std::size_t>(minimum.second),
          minimum.distance_squared};
}

unsigned long long brute_force_tile_pairs(std::size_t n, int base) {
  const unsigned long long tiles = blocks_for(n, static_cast<unsigned>(base));
  return tiles * (tiles + 1) / 2;
}

BruteForceRange::BruteForceRange(const Context& context, Kernels kernels, int base, std::size_t n,
                                 unsigned long long first, unsigned long long end)
    : context_(context),
      brute_force_(std::move(kernels.brute_force)),
      base_(static_cast<unsigned>(base)),
      n_(static_cast<long long>(n)),
      first_(static_cast<long long>(first)),
      end_(static_cast<long long>(end)),
      // An empty range still launches one block, which reports no pair.
      blocks_(static_cast<unsigned>(
          std::clamp(end - std::min(first, end), 1ull, brute_force_max_blocks))),
      block_minima_(context, blocks_),
      total_(context, std::move(kernels.reduce_minima)) {}

BruteForceRange::Found BruteForceRange::search(DevicePoints points) {
  GpuInterval interval(context_);
  brute_force_.launch({.grid = blocks_, .block = base_}, points.address, n_, first_, end_,
                      block_minima_);
  total_.fold(block_minima_, blocks_);
  const PairMinimum minimum = total_.read();
  return {minimum, interval.stop()};
}

GpuResult gpu_brute_force(DevicePoints points, const GpuSetup& setup) {
  const CompileOptions options{.defines = {{"BASE", std::to_string(setup.base)}}};
  const Module module = setup.jit->module(apps::builtin_program("closest_pair"), options, setup.context);
  BruteForceRange range(setup.context,
                        {module.kernel("brute_force"), module.kernel("reduce_minima")}, setup.base,
                        points.count, 0, brute_force_tile_pairs(points.count, setup.base));
  const BruteForceRange::Found found = range.search(points);
  return {pair_found(found.minimum), 0.0, found.kernel_ms};
}

void prepare_gpu_method(ClosestPairMethod method, const GpuSetup& setup) {
  grid_module(setup);
  switch (method) {
    case ClosestPairMethod::grid:
      RadixSort(setup.context, *setup.jit, 1);
      return;
    case ClosestPairMethod::divide_conquer:
      DeviceSort(setup.context, *setup.jit);
      DeviceScan(setup.context, *setup.jit);
      break;
    default:
      break;
  }
  setup.jit->module(apps::builtin_program("closest_pair"),
                    {.defines = {{"BASE", std::to_string(setup.base)}}}, setup.context);
}

}  // namespace ptxrt::apps
