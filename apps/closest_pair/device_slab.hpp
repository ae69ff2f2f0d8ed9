// A slab of a point set on a GPU, as a rank of a distributed closest pair holds it
// (tools/mpi/closest_pair_slabs.cpp): the points whose keys lie in a range (point_slab.hpp), in
// index order, and their bounding box. A slab of a generated set is made on the GPU by
// regenerating the set and keeping the range (ptx_src/closest_pair_slab.cu), the same points as
// generate_slab on the CPU: no point travels, and a point's index is found again only where it is
// asked for (the pair's two, the points near the edges). The whole set is the slab of no bound,
// its points' indices their positions. A slab of points that arrived from other ranks is uploaded
// with their indices.
//
// Ownership and thread safety: SlabKernels holds the kernels, the workspace of the sample and of
// making slabs, and the device memory that reserve() sets aside; it and the slabs made with it are
// used by one thread at a time, and it outlives them. A slab owns its device memory, or borrows
// the reserved memory and gives it back when destroyed; it keeps its context alive.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "apps/classic/radix_sort.hpp"
#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "ptx_src/closest_pair_slab.cuh"
#include "ptx_src/point_generator.cuh"

namespace ptxrt::apps {

// A splitter of a generated set (SlabKernels::sample_splitters) and its band: x from band_low_x
// to band_high_x holds about 2048 of the set's points on each side of it (the sample's spacing
// tells), the points a slab notes at that edge.
struct SampledSplitter {
  SlabPoint key;
  float band_low_x;
  float band_high_x;
};

// The room to make first for a slab of a set of `count` points cut into `parts` at the quantiles
// of a sample of SlabKernels::sample_size points: its share, and eight standard deviations of the
// share a sample's quantiles give it (the whole set for one part).
std::uint64_t slab_capacity(std::uint64_t count, int parts);

// The slab of a generated set to make: the keys of `range` among the first `count` points of
// `generator` (neither bound: the whole set), noting the points with x at most note_left_until or
// at least note_right_from. It is made in room for `capacity` points first, and made again in room
// of its size when it holds more (0, or more than 2^31 - 1: counted first, then made).
struct GeneratedSlab {
  PointGenerator generator{};
  std::uint64_t count = 0;
  SlabRange range{};
  double note_left_until = -std::numeric_limits<double>::infinity();
  double note_right_from = std::numeric_limits<double>::infinity();
  std::uint64_t capacity = 0;
};

// A slab's device memory: room for its points and, for a bounded generated slab, where each run's
// kept points start.
struct SlabMemory {
  DeviceBuffer<Point2> points;
  DeviceBuffer<unsigned long long> run_offsets;
};

class SlabKernels;

// Frees a slab's memory, or gives it back to the reserve of `kernels` it was borrowed from.
struct SlabMemoryRelease {
  SlabKernels* kernels = nullptr;
  void operator()(SlabMemory* memory) const;
};
using SlabMemoryHandle = std::unique_ptr<SlabMemory, SlabMemoryRelease>;

class SlabKernels {
 public:
  // The points of the sample that places a generated set's splitters.
  static constexpr std::uint64_t sample_size = std::uint64_t{1} << 18;

  // Compiles (or finds in the Jit's caches) the slab kernels and the radix sort, and allocates the
  // sample's and the slabs' workspace, so that what the slabs do later is their work alone.
  SlabKernels(const Context& context, Jit& jit);

  // Like sample_splitters (point_slab.hpp) over sample_size points, sorted on the GPU by x, then
  // by index: the same splitters on every GPU for the same set, each with its band.
  // Error(invalid_argument) for fewer than 1 part or no point.
  std::vector<SampledSplitter> sample_splitters(const PointGenerator& generator,
                                                std::uint64_t count, int parts);

  // Sets aside the device memory of a slab of up to `capacity` points of a set of `count`, and for
  // the grid method that of its solve, so that making and solving it allocate nothing: the next
  // slab made that fits borrows it. Nothing for a capacity above the 2^31 - 1 points a GPU method
  // takes, and a grid solver for at most the radix sort's keys.
  void reserve(std::uint64_t count, std::uint64_t capacity, ClosestPairMethod method);

 private:
  friend class DeviceSlab;
  friend struct SlabMemoryRelease;

  // A kernel launched grid-stride with at most as many blocks as the GPU holds at once: every
  // block starts at once and does an equal share, none waits for a second wave.
  class ResidentKernel {
   public:
    ResidentKernel(const Module& module, const char* name);
    // Over `blocks_of_work` blocks' worth of items (at least one block).
    template <typename... Args>
    void launch(std::uint64_t blocks_of_work, const Args&... args) const;

   private:
    Kernel kernel_;
    std::uint64_t resident_blocks_;
  };

  // Memory for a slab of `points` (with `runs` run offsets): the reserve when it fits, else new.
  SlabMemoryHandle slab_memory(std::uint64_t points, std::uint64_t runs);
  // Room for the status words of `runs` runs.
  void hold_runs(std::uint64_t runs);
  // The reserved grid solver when it takes `points`, else one made for them (and kept).
  GridSolver& grid_solver(std::size_t points);
  // Makes `slab` in `memory` (null: counts it and notes the points near `edges` only, into
  // `edge_points`): its census.
  SlabCensus make(const GeneratedSlab& slab, const SlabEdges& edges, SlabMemory* memory,
                  const DeviceBuffer<SlabPoint>& edge_points);

  Context context_;
  Jit* jit_;
  Module module_;
  RadixSort radix_;
  Kernel sample_keys_;
  Kernel sample_pick_;
  Kernel pair_;
  ResidentKernel make_;
  ResidentKernel indices_;
  ResidentKernel edges_;
  ResidentKernel unpack_;
  std::array<DeviceBuffer<unsigned>, 2> sample_words_;
  std::array<DeviceBuffer<int>, 2> sample_numbers_;
  DeviceBuffer<SamplePick> picks_;
  DeviceBuffer<SlabCensus> census_;
  DeviceBuffer<unsigned long long> run_status_;
  DeviceBuffer<SlabPoint> edge_points_;
  DeviceBuffer<unsigned long long> edge_count_;
  DeviceBuffer<PairMinimum> given_pair_;
  DeviceBuffer<SlabPair> found_pair_;
  std::unique_ptr<SlabMemory> reserved_;
  std::optional<GridSolver> grid_;
};

class DeviceSlab {
 public:
  // The slab `slab` describes. Error(invalid_argument) when it would hold 2^31 points or more.
  static DeviceSlab generate(SlabKernels& kernels, const GeneratedSlab& slab);
  // `points` (indices in the whole set, finite coordinates), uploaded as they are.
  static DeviceSlab upload(SlabKernels& kernels, std::span<const SlabPoint> points);

  std::size_t size() const noexcept { return size_; }
  const PointBox& box() const noexcept { return box_; }
  // Its points on the device, in slab order (for a whole generated set, point k at k).
  DevicePoints points() const noexcept { return {memory_->points.address(), size_}; }
  // The point at `position` (one download).
  Point2 point(std::size_t position) const;

  // The closest pair of the slab (2 points or more) by a GPU method, as closest_pair() for
  // device points finds it (of the pairs at the least distance, the one of least slab positions,
  // which are in index order for a generated slab), with the points' indices in the whole set.
  struct Pair {
    SlabPoint first;  // first.index < second.index
    SlabPoint second;
    double distance = 0.0;
  };
  Pair closest_pair(ClosestPairMethod method, const ClosestPairOptions& options) const;

  // The slab's points with x at most `left_until` or at least `right_from`, in any order. A
  // generated slab answers from the points it noted near its edges when it was made, when those
  // cover the request; else a kernel finds them (a generated slab's by regenerating the set).
  std::vector<SlabPoint> points_near_edges(double left_until, double right_from) const;

  // Every point with its index, in slab order (for tests).
  std::vector<SlabPoint> download() const;

 private:
  DeviceSlab(SlabKernels& kernels, SlabMemoryHandle memory, std::size_t size);

  SlabKernels* kernels_;
  SlabMemoryHandle memory_;
  std::size_t size_;
  std::optional<DeviceBuffer<unsigned long long>> indices_;  // an uploaded slab's
  std::optional<GeneratedSlab> generated_from_;
  PointBox box_{};
  // The points noted near the edges when the slab was made: all of those beyond these bounds
  // (infinite bounds: none noted, none needed).
  SlabEdges noted_edges_{};
  std::vector<SlabPoint> edge_points_;
};

}  // namespace ptxrt::apps
