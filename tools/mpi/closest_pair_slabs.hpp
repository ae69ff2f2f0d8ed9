// How a rank of `ptxrt closest-pair --mpi` holds and solves its slab: on its GPU
// (apps/closest_pair/device_slab.hpp: a generated set regenerated there, received points
// uploaded) or in host memory with a CPU method. Built with MPI only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/device_slab.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "ptxrt/mpi.hpp"

namespace ptxrt::cli {

// The closest pair of indexed points by a CPU method (the border's solver, and a CPU method's
// slab's).
mpi::ClosestPairSolver cpu_solver(apps::ClosestPairMethod method,
                                  const apps::ClosestPairOptions& options);

// The slab a rank sets device memory aside for in its set-up: of a generated set of `count`
// points cut into `parts` (count 0: none, as for a file, whose size is known only once read).
struct SlabReservation {
  std::uint64_t count = 0;
  int parts = 1;
};

// One rank's means of solving. Constructed during the rank's set-up: with a GPU context in
// `options`, it compiles (or finds) every kernel a GPU slab runs, allocates their workspace and
// the memory of the slab `reservation` describes, and runs them once on a small set, so that the
// timed phases are the work alone. A GPU method needs that context. One thread at a time.
class RankSolver {
 public:
  // `requested`: the method asked for ("auto" is resolved by the set's size, as in one process).
  RankSolver(apps::ClosestPairMethod requested, apps::ClosestPairOptions options,
             const SlabReservation& reservation);

  // The method for a set of `set_size` points.
  apps::ClosestPairMethod method_for(std::uint64_t set_size) const;

  // A slab of points that arrived from the split (mpi::SlabMaker).
  std::unique_ptr<mpi::Slab> slab_of(std::vector<mpi::IndexedPoint> points, std::uint64_t set_size);

  // The first `count` points of (distribution, seed) as a set each rank makes its own slab of:
  // on the GPU for a GPU method, else on the CPU.
  std::unique_ptr<mpi::GeneratedPointSet> generated_set(apps::PointDistribution distribution,
                                                        std::uint64_t seed, std::uint64_t count);

 private:
  apps::ClosestPairMethod requested_;
  apps::ClosestPairOptions options_;
  std::optional<apps::SlabKernels> kernels_;  // with a GPU context
};

}  // namespace ptxrt::cli
