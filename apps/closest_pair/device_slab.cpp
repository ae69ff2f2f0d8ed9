#include "apps/closest_pair/device_slab.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <numeric>
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
// A splitter's band holds about this many points on each side: a few thousand, while the
// distributed border step reaches only as far as the set's least distance, which for more than a
// few thousand points is far less. A request beyond the noted band, or more noted points than
// their room, finds the points near the edges again with a kernel.
constexpr double noted_points_per_edge = 2048.0;
constexpr std::uint64_t edge_capacity = std::uint64_t{1} << 16;
// A slab's room: its share of the set and this many standard deviations of a sample's share.
constexpr double capacity_deviations = 8.0;
constexpr double infinity = std::numeric_limits<double>::infinity();

float float_of_word(unsigned word) { return std::bit_cast<float>(float_bits_of_word(word)); }

SlabEdges no_edges() { return {-infinity, infinity, edge_capacity}; }

bool is_whole_set(const SlabRange& range) { return range.has_after == 0 && range.has_through == 0; }

std::uint64_t runs_of(std::uint64_t count) {
  return count / run_points + (count % run_points != 0);
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

PointBox census_box(const SlabCensus& census) {
  return decode_box({~census.low_x_complement, ~census.low_y_complement, census.high_x,
                     census.high_y, static_cast<long long>(census.kept)});
}

// The band of the sample pick around `key`, narrowed to about noted_points_per_edge points of the
// set on each side when `band` sample places hold more.
SampledSplitter banded(const SlabPoint& key, const SamplePick& pick, std::uint64_t band,
                       std::uint64_t count, std::uint64_t samples) {
  const double points_in_band =
      static_cast<double>(band) * static_cast<double>(count) / static_cast<double>(samples);
  const double narrowing = std::min(1.0, noted_points_per_edge / points_in_band);
  const double x = key.x;
  return {key, static_cast<float>(x - (x - float_of_word(pick.band_low_word)) * narrowing),
          static_cast<float>(x + (float_of_word(pick.band_high_word) - x) * narrowing)};
}

}  // namespace

std::uint64_t slab_capacity(std::uint64_t count, int parts) {
  if (parts <= 1) return count;
  const double share = 1.0 / parts;
  const double deviation =
      std::sqrt(share * (1.0 - share) / static_cast<double>(SlabKernels::sample_size));
  const double room = (share + capacity_deviations * deviation) * static_cast<double>(count);
  return std::min<std::uint64_t>(count, static_cast<std::uint64_t>(std::ceil(room)) + run_points);
}

void SlabMemoryRelease::operator()(SlabMemory* memory) const {
  if (kernels != nullptr)
    kernels->reserved_.reset(memory);
  else
    delete memory;
}

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
      jit_(&jit),
      module_(jit.module(apps::builtin_program("closest_pair_slab"),
                         {.defines = {{"BLOCK_SIZE", std::to_string(slab_block)},
                                      {"ITEMS", std::to_string(slab_items)}}},
                         context)),
      radix_(context, jit, sample_size),
      sample_keys_(module_.kernel("sample_keys")),
      sample_pick_(module_.kernel("sample_pick")),
      pair_(module_.kernel("slab_pair")),
      make_(module_, "slab_make"),
      indices_(module_, "slab_indices"),
      edges_(module_, "slab_edges"),
      unpack_(module_, "slab_unpack"),
      sample_words_{DeviceBuffer<unsigned>(context, sample_size),
                    DeviceBuffer<unsigned>(context, sample_size)},
      sample_numbers_{DeviceBuffer<int>(context, sample_size),
                      DeviceBuffer<int>(context, sample_size)},
      picks_(context, 0),
      census_(context, 1),
      run_status_(context, 0),
      edge_points_(context, edge_capacity),
      edge_count_(context, 1),
      given_pair_(context, 1),
      found_pair_(context, 1) {}

std::vector<SampledSplitter> SlabKernels::sample_splitters(const PointGenerator& generator,
                                                           std::uint64_t count, int parts) {
  if (parts < 1 || count == 0)
    throw Error(ErrorKind::invalid_argument, "sample_splitters: " + std::to_string(parts) +
                                                 " parts of " + std::to_string(count) + " points");
  if (parts == 1) return {};
  const std::uint64_t samples = std::min(sample_size, count);
  sample_keys_.launch({.grid = blocks_for(samples, slab_block), .block = slab_block}, generator,
                      count, samples, sample_words_[0], sample_numbers_[0]);
  const int sorted = radix_.sort({{sample_words_[0].address(), sample_words_[1].address()},
                                  {sample_numbers_[0].address(), sample_numbers_[1].address()}},
                                 samples, RadixKeys::unsigned_int);
  const auto splitter_count = static_cast<std::size_t>(parts - 1);
  if (picks_.size() < splitter_count) picks_ = DeviceBuffer<SamplePick>(context_, splitter_count);
  // Sample places that hold about noted_points_per_edge points of the set, at least one.
  const std::uint64_t band = std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(std::ceil(noted_points_per_edge * static_cast<double>(samples) /
                                           static_cast<double>(count))),
      1, samples - 1);
  sample_pick_.launch({.grid = 1, .block = slab_block}, sample_numbers_[sorted],
                      sample_words_[sorted], samples, parts, band, picks_);
  std::vector<SamplePick> picks(splitter_count);
  picks_.download(std::span<SamplePick>(picks));
  std::vector<SampledSplitter> splitters;
  for (const SamplePick& pick : picks)
    splitters.push_back(banded(
        generated_key(generator,
                      sample_position(static_cast<std::uint64_t>(pick.number), count, samples)),
        pick, band, count, samples));
  // The GPU ordered the sample by x, then by index: the keys order ties in x by y first.
  std::sort(
      splitters.begin(), splitters.end(),
      [](const SampledSplitter& a, const SampledSplitter& b) { return key_less(a.key, b.key); });
  return splitters;
}

void SlabKernels::reserve(std::uint64_t count, std::uint64_t capacity, ClosestPairMethod method) {
  capacity = std::min(capacity, count);
  // Room for more points than a GPU method takes would never be used: such a slab is counted
  // before any room is made for it (DeviceSlab::generate).
  if (capacity > static_cast<std::uint64_t>(INT_MAX)) return;
  const std::uint64_t runs = capacity < count ? runs_of(count) : 0;
  reserved_ = std::make_unique<SlabMemory>(SlabMemory{
      DeviceBuffer<Point2>(context_, capacity), DeviceBuffer<unsigned long long>(context_, runs)});
  hold_runs(runs);
  if (method == ClosestPairMethod::grid && capacity >= 2)
    grid_solver(std::min<std::uint64_t>(capacity, RadixSort::max_keys));
}

SlabMemoryHandle SlabKernels::slab_memory(std::uint64_t points, std::uint64_t runs) {
  if (points > 0 && reserved_ && reserved_->points.size() >= points &&
      reserved_->run_offsets.size() >= runs)
    return SlabMemoryHandle(reserved_.release(), {this});
  return SlabMemoryHandle(new SlabMemory{DeviceBuffer<Point2>(context_, points),
                                         DeviceBuffer<unsigned long long>(context_, runs)},
                          {});
}

void SlabKernels::hold_runs(std::uint64_t runs) {
  if (run_status_.size() < runs) run_status_ = DeviceBuffer<unsigned long long>(context_, runs);
}

GridSolver& SlabKernels::grid_solver(std::size_t points) {
  if (!grid_ || grid_->capacity() < points)
    grid_.emplace(GpuSetup{context_, jit_, ClosestPairOptions{}.base}, points);  // reads no BASE
  return *grid_;
}

SlabCensus SlabKernels::make(const GeneratedSlab& slab, const SlabEdges& edges, SlabMemory* memory,
                             const DeviceBuffer<SlabPoint>& edge_points) {
  const std::uint64_t runs = runs_of(slab.count);
  const bool placing = memory != nullptr && !is_whole_set(slab.range);
  census_.fill_bytes(0);
  if (placing) {
    hold_runs(runs);
    run_status_.fill_bytes(0);
  }
  const CUdeviceptr points = memory != nullptr ? memory->points.address() : CUdeviceptr{0};
  const CUdeviceptr run_offsets = placing ? memory->run_offsets.address() : CUdeviceptr{0};
  const std::uint64_t capacity = memory != nullptr ? memory->points.size() : 0;
  make_.launch(runs / warps_per_block + 1, slab.generator, slab.count, slab.range, runs, capacity,
               edges, run_status_, run_offsets, census_, points, edge_points);
  return download_one(census_);
}

DeviceSlab::DeviceSlab(SlabKernels& kernels, SlabMemoryHandle memory, std::size_t size)
    : kernels_(&kernels), memory_(std::move(memory)), size_(size), noted_edges_(no_edges()) {}

DeviceSlab DeviceSlab::generate(SlabKernels& kernels, const GeneratedSlab& slab) {
  const bool whole_set = is_whole_set(slab.range);
  if (whole_set) check_slab_size(slab.count);  // before any point is made
  const SlabEdges edges =
      whole_set ? no_edges() : SlabEdges{slab.note_left_until, slab.note_right_from, edge_capacity};
  std::uint64_t room = whole_set ? slab.count : std::min(slab.capacity, slab.count);
  // Room for more points than a slab may hold would be made in vain: counted first, the slab is
  // refused before any room is made, or made in room of its size.
  if (room > static_cast<std::uint64_t>(INT_MAX)) room = 0;
  for (;;) {
    SlabMemoryHandle memory = kernels.slab_memory(room, whole_set ? 0 : runs_of(slab.count));
    const SlabCensus census =
        kernels.make(slab, edges, room > 0 ? memory.get() : nullptr, kernels.edge_points_);
    check_slab_size(census.kept);
    if (census.kept > room) {
      room = census.kept;  // made again, in room of its size
      continue;
    }
    DeviceSlab made(kernels, std::move(memory), census.kept);
    made.generated_from_ = slab;
    made.box_ = census_box(census);
    if (census.edge_count <= edge_capacity) {
      made.noted_edges_ = edges;
      made.edge_points_.resize(census.edge_count);
      kernels.edge_points_.download(std::span<SlabPoint>(made.edge_points_));
    }
    return made;
  }
}

DeviceSlab DeviceSlab::upload(SlabKernels& kernels, std::span<const SlabPoint> points) {
  check_slab_size(points.size());
  DeviceSlab slab(kernels, kernels.slab_memory(points.size(), 0), points.size());
  slab.indices_.emplace(kernels.context_, points.size());
  if (points.empty()) return slab;
  const DeviceBuffer<SlabPoint> records(kernels.context_, points);
  const PointBounds empty_box{0xffffffffu, 0xffffffffu, 0u, 0u,
                              static_cast<long long>(points.size())};
  DeviceBuffer<PointBounds> bounds(kernels.context_, std::span<const PointBounds>(&empty_box, 1));
  kernels.unpack_.launch(blocks_for(points.size(), slab_block), records,
                         static_cast<long long>(points.size()), slab.memory_->points,
                         *slab.indices_, bounds);
  slab.box_ = decode_box(download_one(bounds));
  return slab;
}

DeviceSlab::Pair DeviceSlab::closest_pair(ClosestPairMethod method,
                                          const ClosestPairOptions& options) const {
  const ClosestPairMethod resolved = resolve_device_method(method);
  check_gpu_box(box_, options.base);
  SlabKernels& kernels = *kernels_;
  CUdeviceptr minimum = kernels.given_pair_.address();
  double distance = 0.0;  // the other methods': the grid's comes with its pair
  if (resolved == ClosestPairMethod::grid) {
    GridSolver& solver = kernels.grid_solver(size_);
    solver.search(points(), box_);
    minimum = solver.minimum().address();
  } else {
    ClosestPairOptions on_this_device = options;
    on_this_device.context = kernels.context_;
    const ClosestPair found =
        closest_pair_in_box(kernels.context_, points(), box_, resolved, on_this_device);
    PairMinimum given = no_pair_yet(infinite_distance());
    given.first = static_cast<int>(found.i);
    given.second = static_cast<int>(found.j);
    kernels.given_pair_.upload(std::span<const PairMinimum>(&given, 1));
    distance = found.distance;
  }
  const GeneratedSlab made = generated_from_.value_or(GeneratedSlab{});
  const bool bounded = generated_from_ && !is_whole_set(made.range);
  kernels.pair_.launch({.grid = 1, .block = slab_block}, minimum, memory_->points,
                       indices_ ? indices_->address() : CUdeviceptr{0},
                       bounded ? memory_->run_offsets.address() : CUdeviceptr{0},
                       runs_of(made.count), made.generator, made.count, made.range,
                       kernels.found_pair_);
  const SlabPair found = download_one(kernels.found_pair_);
  Pair pair{found.first, found.second,
            resolved == ClosestPairMethod::grid ? std::sqrt(found.distance_squared) : distance};
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
  SlabKernels& kernels = *kernels_;
  const bool regenerated = generated_from_ && !is_whole_set(generated_from_->range);
  std::uint64_t capacity = edge_capacity;
  for (;;) {
    const DeviceBuffer<SlabPoint> found(kernels.context_, capacity);
    const SlabEdges edges{left_until, right_from, capacity};
    unsigned long long counted = 0;
    if (regenerated) {
      // Its points hold no indices: the set is made again, keeping only those near the edges.
      counted = kernels.make(*generated_from_, edges, nullptr, found).edge_count;
    } else {
      kernels.edge_count_.fill_bytes(0);
      kernels.edges_.launch(blocks_for(size(), slab_block), memory_->points,
                            indices_ ? indices_->address() : CUdeviceptr{0},
                            static_cast<long long>(size()), edges, found, kernels.edge_count_);
      counted = download_one(kernels.edge_count_);
    }
    if (counted <= capacity) {
      near.resize(counted);
      found.download(std::span<SlabPoint>(near));
      return near;
    }
    capacity = counted;  // every one fits the second time
  }
}

Point2 DeviceSlab::point(std::size_t position) const {
  if (position >= size_)
    throw Error(ErrorKind::invalid_argument,
                "slab point " + std::to_string(position) + " of " + std::to_string(size_));
  Point2 found;
  memory_->points.download(std::span<Point2>(&found, 1), position);
  return found;
}

std::vector<SlabPoint> DeviceSlab::download() const {
  std::vector<Point2> coordinates(size_);
  memory_->points.download(std::span<Point2>(coordinates));
  std::vector<unsigned long long> indices(size_);
  if (indices_) {
    indices_->download(std::span<unsigned long long>(indices));
  } else if (generated_from_ && !is_whole_set(generated_from_->range) && size_ > 0) {
    const GeneratedSlab& made = *generated_from_;
    DeviceBuffer<unsigned long long> found(kernels_->context_, size_);
    const std::uint64_t runs = runs_of(made.count);
    kernels_->indices_.launch(runs / warps_per_block + 1, made.generator, made.count, made.range,
                              runs, memory_->run_offsets, found);
    found.download(std::span<unsigned long long>(indices));
  } else {
    std::iota(indices.begin(), indices.end(), 0ull);
  }
  std::vector<SlabPoint> points(size_);
  for (std::size_t k = 0; k < size_; ++k)
    points[k] = {coordinates[k].x, coordinates[k].y, indices[k]};
  return points;
}

}  // namespace ptxrt::apps
