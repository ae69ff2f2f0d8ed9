// A slab of a point set on a GPU, as a rank of a distributed closest pair holds it
// (tools/mpi/closest_pair_slabs.cpp): the points whose keys lie in a range (point_slab.hpp), in
// index order, each with its index in the whole set, and their bounding box. A slab of a
// generated set is made on the GPU by regenerating the set and keeping the range
// (ptx_src/closest_pair_slab.cu), the same points as generate_slab on the CPU; no point travels.
// A slab of points that arrived from other ranks is uploaded.
//
// Ownership and thread safety: SlabKernels holds the kernels and the workspace of the scan and
// the radix sort; it and the slabs made with it are used by one thread at a time. A slab owns
// its device memory and keeps its context alive.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "apps/classic/radix_sort.hpp"
#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "ptx_src/closest_pair_slab.cuh"
#include "ptx_src/point_generator.cuh"

namespace ptxrt::apps {

class SlabKernels {
 public:
  // The points of the sample that places a generated set's splitters.
  static constexpr std::uint64_t sample_size = std::uint64_t{1} << 18;

  // Compiles (or finds in the Jit's caches) the slab kernels, the scan and the radix sort, and
  // allocates the sort's workspace, so that what the slabs do later is their work alone.
  SlabKernels(const Context& context, Jit& jit);

  // Like sample_splitters (point_slab.hpp) over sample_size points, sorted on the GPU by x, then
  // by index: the same splitters on every GPU for the same set. Error(invalid_argument) for fewer
  // than 1 part or no point.
  std::vector<SlabPoint> sample_splitters(const PointGenerator& generator, std::uint64_t count,
                                          int parts);

 private:
  friend class DeviceSlab;

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

  Context context_;
  Module module_;
  DeviceScan scan_;
  RadixSort radix_;
  Kernel sample_keys_;
  Kernel sample_pick_;
  ResidentKernel count_;
  ResidentKernel fill_;
  ResidentKernel edges_;
  ResidentKernel unpack_;
};

class DeviceSlab {
 public:
  // Of the first `count` points of `generator`, those whose keys lie in `range`. Every point of
  // the set is generated (for a bounded range, twice: to count, then to keep); only the kept
  // ones are written. Error(invalid_argument) when the slab would hold 2^31 points or more.
  static DeviceSlab generate(SlabKernels& kernels, const PointGenerator& generator,
                             std::uint64_t count, const SlabRange& range);
  // `points` (indices in the whole set, finite coordinates), uploaded as they are.
  static DeviceSlab upload(SlabKernels& kernels, std::span<const SlabPoint> points);

  std::size_t size() const noexcept { return points_.size(); }
  const PointBox& box() const noexcept { return box_; }

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
  // cover the request; else a kernel reads the slab.
  std::vector<SlabPoint> points_near_edges(double left_until, double right_from) const;

  // Every point with its index, in slab order (for tests).
  std::vector<SlabPoint> download() const;

 private:
  DeviceSlab(SlabKernels& kernels, std::size_t size);

  SlabKernels* kernels_;
  DeviceBuffer<Point2> points_;
  DeviceBuffer<unsigned long long> indices_;
  PointBox box_{};
  // The points noted near the edges when the slab was made: all of those beyond these bounds
  // (infinite bounds: none noted, none needed).
  SlabEdges noted_edges_{};
  std::vector<SlabPoint> edge_points_;
};

}  // namespace ptxrt::apps
