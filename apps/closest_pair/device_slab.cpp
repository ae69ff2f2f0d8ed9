#include "apps/closest_pair/device_slab.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <limits>
#include <optional>
#include <string>

#include "apps/closest_pair/point_slab.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "ptx_src/closest_pair_morton.cuh"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

namespace {

constexpr unsigned slab_block = 256;
constexpr unsigned slab_items = 32;
constexpr unsigned warps_per_block = slab_block / 32;
// Consecutive indices one warp makes at a time (RUN in closest_pair_slab.cu).
constexpr std::uint64_t run_points = 32u * slab_items;
// A generated slab notes the points within this many (at an even density in x) of each edge
// it shares with another slab: a few thousand points, while the distributed border step reaches
// only as far as the set's least distance, which for more than a few thousand points is far
// less. A request beyond the noted width, or a capacity overflow, reads the slab with a kernel.
constexpr double noted_points_per_edge = 2048.0;
constexpr std::uint64_t edge_capacity = std::uint64_t{1} << 16;
constexpr double infinity = std::numeric_limits<double>::infinity();

float float_of_word(unsigned word) { return std::bit_cast<float>(float_bits_of_word(word)); }

SlabEdges no_edges() { return {-infinity, infinity, edge_capacity}; }

// Edges at the noted width around the range's bounds, from the slab's census.
SlabEdges edges_to_note(const SlabRange& range, const SlabCensus& census) {
  SlabEdges edges = no_edges();
  if (census.kept == 0) return edges;
  const double extent =
      static_cast<double>(float_of_word(census.high_x)) - float_of_word(census.low_x);
  const double width = extent * noted_points_per_edge / static_cast<double>(census.kept);
  if (range.has_after != 0) edges.left_until = static_cast<double>(range.after.x) + width;
  if (range.has_through != 0) edges.right_from = static_cast<double>(range.through.x) - width;
  return edges;
}

void check_slab_size(std::uint64_t size) {
  if (size > static_cast<std::uint64_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument,
                "closest pair: a slab of " + std::to_string(size) +
                    " points exceeds the 2^31 - 1 a GPU method takes: use more ranks");
}

template <typename T>
T download_one(const DeviceBuffer<T>& buffer) {
  T value{};
  buffer.download(std::span<T>(&value, 1));
  return value;
}

PointBounds empty_bounds(std::size_t size) {
  return {0xffffffffu, 0xffffffffu, 0u, 0u, static_cast<long long>(size)};
}

}  // namespace

SlabKernels::ResidentKernel::ResidentKernel(const Module& module, const char* name)
    : kernel_(module.kernel(name)),
      resident_blocks_(static_cast<std::uint64_t>(
          std::max(1LL, kernel_.max_cooperative_blocks(Dim3{slab_block})))) {}

template <typename... Args>
void SlabKernels::ResidentKernel::launch(std::uint64_t blocks_of_work, const Args&... args) const {
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::uint64_t>(blocks_of_work, 1, resident_blocks_));
  kernel_.launch({.grid = blocks, .block = slab_block}, args...);
}

SlabKernels::SlabKernels(const Context& context, Jit& jit)
    : context_(context),
      module_(jit.module(apps::builtin_program("closest_pair_slab"),
                         {.defines = {{"BLOCK_SIZE", std::to_string(slab_block)},
                                      {"ITEMS", std::to_string(slab_items)}}},
                         context)),
      scan_(context, jit),
      radix_(context, jit, sample_size),
      sample_keys_(module_.kernel("sample_keys")),
      sample_pick_(module_.kernel("sample_pick")),
      count_(module_, "slab_count"),
      fill_(module_, "slab_fill"),
      edges_(module_, "slab_edges"),
      unpack_(module_, "slab_unpack") {}

std::vector<SlabPoint> SlabKernels::sample_splitters(const PointGenerator& generator,
                                                     std::uint64_t count, int parts) {
  if (parts < 1 || count == 0)
    throw Error(ErrorKind::invalid_argument, "sample_splitters: " + std::to_string(parts) +
                                                 " parts of " + std::to_string(count) + " points");
  if (parts == 1) return {};
  const std::uint64_t samples = std::min(sample_size, count);
  std::array<DeviceBuffer<unsigned>, 2> keys{DeviceBuffer<unsigned>(context_, samples),
                                             DeviceBuffer<unsigned>(context_, samples)};
  std::array<DeviceBuffer<int>, 2> numbers{DeviceBuffer<int>(context_, samples),
                                           DeviceBuffer<int>(context_, samples)};
  sample_keys_.launch({.grid = blocks_for(samples, slab_block), .block = slab_block}, generator,
                      count, samples, keys[0], numbers[0]);
  const int sorted = radix_.sort(
      {{keys[0].address(), keys[1].address()}, {numbers[0].address(), numbers[1].address()}},
      samples, RadixKeys::unsigned_int);
  DeviceBuffer<int> picked(context_, static_cast<std::size_t>(parts - 1));
  sample_pick_.launch({.grid = 1, .block = slab_block}, numbers[sorted], samples, parts, picked);
  std::vector<SlabPoint> splitters;
  for (int number : picked.download())
    splitters.push_back(generated_key(
        generator, sample_position(static_cast<std::uint64_t>(number), count, samples)));
  // The GPU ordered the sample by x, then by index: the keys order ties in x by y first.
  std::sort(splitters.begin(), splitters.end(), key_less);
  return splitters;
}

DeviceSlab::DeviceSlab(SlabKernels& kernels, std::size_t size)
    : kernels_(&kernels),
      points_(kernels.context_, size),
      indices_(kernels.context_, size),
      noted_edges_(no_edges()) {}

DeviceSlab DeviceSlab::generate(SlabKernels& kernels, const PointGenerator& generator,
                                std::uint64_t count, const SlabRange& range) {
  const Context& context = kernels.context_;
  const std::uint64_t runs = count / run_points + (count % run_points != 0 ? 1 : 0);
  const std::uint64_t blocks_of_runs = runs / warps_per_block + 1;
  const bool whole_set = range.has_after == 0 && range.has_through == 0;
  std::uint64_t kept = count;
  SlabEdges edges = no_edges();
  std::optional<DeviceBuffer<int>> run_offsets;
  if (!whole_set) {
    DeviceBuffer<int> run_counts(context, runs);
    const SlabCensus empty{0, 0xffffffffu, 0u};
    DeviceBuffer<SlabCensus> census(context, std::span<const SlabCensus>(&empty, 1));
    kernels.count_.launch(blocks_of_runs, generator, count, range, runs, run_counts, census);
    const SlabCensus counted = download_one(census);
    kept = counted.kept;
    check_slab_size(kept);  // before the scan, whose sums are ints
    run_offsets.emplace(context, runs + 1);
    kernels.scan_.exclusive(run_counts.address(), run_offsets->address(), runs);
    edges = edges_to_note(range, counted);
  }
  check_slab_size(kept);
  DeviceSlab slab(kernels, kept);
  const PointBounds empty_box = empty_bounds(kept);
  DeviceBuffer<PointBounds> bounds(context, std::span<const PointBounds>(&empty_box, 1));
  DeviceBuffer<SlabPoint> edge_points(context, whole_set ? 0 : edge_capacity);
  DeviceBuffer<unsigned long long> edge_count(context, 1);
  edge_count.fill_bytes(0);
  kernels.fill_.launch(blocks_of_runs, generator, count, range, runs,
                       run_offsets ? run_offsets->address() : CUdeviceptr{0}, edges, slab.points_,
                       slab.indices_, bounds, edge_points, edge_count);
  slab.box_ = decode_box(download_one(bounds));
  const unsigned long long noted = download_one(edge_count);
  if (noted <= edge_capacity) {
    slab.noted_edges_ = edges;
    slab.edge_points_.resize(noted);
    edge_points.download(std::span<SlabPoint>(slab.edge_points_));
  }
  return slab;
}

DeviceSlab DeviceSlab::upload(SlabKernels& kernels, std::span<const SlabPoint> points) {
  check_slab_size(points.size());
  DeviceSlab slab(kernels, points.size());
  if (points.empty()) return slab;
  const Context& context = kernels.context_;
  const DeviceBuffer<SlabPoint> records(context, points);
  const PointBounds empty_box = empty_bounds(points.size());
  DeviceBuffer<PointBounds> bounds(context, std::span<const PointBounds>(&empty_box, 1));
  kernels.unpack_.launch(blocks_for(points.size(), slab_block), records,
                         static_cast<long long>(points.size()), slab.points_, slab.indices_,
                         bounds);
  slab.box_ = decode_box(download_one(bounds));
  return slab;
}

DeviceSlab::Pair DeviceSlab::closest_pair(ClosestPairMethod method,
                                          const ClosestPairOptions& options) const {
  ClosestPairOptions on_this_device = options;
  on_this_device.context = points_.context();
  const ClosestPair found = closest_pair_in_box(points_, box_, method, on_this_device);
  const auto point_at = [this](std::size_t position) {
    Point2 coordinates;
    points_.download(std::span<Point2>(&coordinates, 1), position);
    unsigned long long index = 0;
    indices_.download(std::span<unsigned long long>(&index, 1), position);
    return SlabPoint{coordinates.x, coordinates.y, index};
  };
  Pair pair{point_at(found.i), point_at(found.j), found.distance};
  if (pair.second.index < pair.first.index) std::swap(pair.first, pair.second);
  return pair;
}

std::vector<SlabPoint> DeviceSlab::points_near_edges(double left_until, double right_from) const {
  std::vector<SlabPoint> near;
  if (left_until <= noted_edges_.left_until && right_from >= noted_edges_.right_from) {
    const SlabEdges requested{left_until, right_from, 0};
    for (const SlabPoint& point : edge_points_)
      if (near_slab_edge(requested, point.x)) near.push_back(point);
    return near;
  }
  const Context& context = kernels_->context_;
  std::uint64_t capacity = edge_capacity;
  for (;;) {
    DeviceBuffer<SlabPoint> found(context, capacity);
    DeviceBuffer<unsigned long long> count(context, 1);
    count.fill_bytes(0);
    kernels_->edges_.launch(blocks_for(size(), slab_block), points_, indices_,
                            static_cast<long long>(size()),
                            SlabEdges{left_until, right_from, capacity}, found, count);
    const unsigned long long counted = download_one(count);
    if (counted <= capacity) {
      near.resize(counted);
      found.download(std::span<SlabPoint>(near));
      return near;
    }
    capacity = counted;  // every one fits the second time
  }
}

std::vector<SlabPoint> DeviceSlab::download() const {
  const std::vector<Point2> coordinates = points_.download();
  const std::vector<unsigned long long> indices = indices_.download();
  std::vector<SlabPoint> points(size());
  for (std::size_t k = 0; k < size(); ++k)
    points[k] = {coordinates[k].x, coordinates[k].y, indices[k]};
  return points;
}

}  // namespace ptxrt::apps
