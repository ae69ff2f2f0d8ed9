// ptxrt under MPI: the optional library ptxrt::mpi (built when ptxrt is configured with
// PTXRT_MPI=ON, the default where CMake finds an MPI; link ptxrt::mpi, which brings MPI's own
// target). It places each rank on a GPU, spreads one tune's configs over the ranks, and finds the
// closest pair of a point set spread over the ranks. The core library never needs MPI.
//
// Collectives: every function taking a communicator must be called by all of its ranks, in the
// same order. An Error thrown on one rank only (a solver or measurer that fails there) leaves the
// others waiting in the next collective: end the job then (MPI_Abort), as `ptxrt` does. Errors
// every rank can see (bad input) are thrown on every rank alike. The library makes MPI calls from
// the calling thread only (a tune's compile threads make none), so MPI_THREAD_FUNNELED suffices;
// it works on a duplicate of the communicator given, whose errors it checks and throws as
// Error (io) naming the MPI call.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/tuner.hpp"

namespace ptxrt::mpi {

// MPI initialized for the object's lifetime (MPI_Init_thread, MPI_THREAD_FUNNELED) and finalized
// by its destructor; an MPI that was initialized already is left as it was found. One per
// process; Error (io) when the MPI cannot provide the thread level.
class PTXRT_API Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

 private:
  bool finalize_ = false;
};

// Where one rank runs.
struct PTXRT_API Placement {
  int rank = 0;  // in the communicator
  int size = 1;
  int node_rank = 0;  // among the communicator's ranks sharing this node (MPI_COMM_TYPE_SHARED)
  int node_size = 1;
  std::string host;  // MPI_Get_processor_name

  // "rank 1 of 4 on node7".
  std::string describe() const;
};

// This rank's placement in `communicator`. Collective. Warns once (ptxrt's log) when the rank may
// use only 1 of its node's CPUs, naming the launcher options that give it more: Open MPI's mpirun
// binds each rank to one core when it starts 2 or fewer, and ptxrt's compile threads and CPU
// methods would all share that core.
PTXRT_API Placement placement(MPI_Comm communicator);

// Every rank's `text`, by rank: for the little a program's ranks must tell each other beside
// the collectives below (which device each took, whether any was interrupted). Collective.
PTXRT_API std::vector<std::string> gather_text(MPI_Comm communicator, const std::string& text);

// The GPU ordinal the rank with node-local rank `node_rank` takes: devices[node_rank %
// devices.size()] when devices are listed (`--devices`), else node_rank % visible. Ranks share a
// GPU when a node has more of them than GPUs. Error (no_device) when `visible` is 0;
// Error (invalid_argument) naming the ordinal when a listed one is not below `visible`. Asks no
// GPU.
PTXRT_API int device_for_rank(int node_rank, std::span<const int> devices, int visible);

// How long a distributed tune waits for a word from another rank before it counts that rank as
// lost: longer than a live rank can go silent, which is one config's compile (120 s at most by
// default) and measurement (its worker is replaced after 300 s).
inline constexpr std::chrono::seconds default_silence_limit{600};

// ptxrt::tune with the configs spread over the communicator's ranks: rank r tunes share {r, size}
// (options.share must be left whole), compiling its configs on its own threads and timing them
// with its own `measurer` (its GPU's worker). Every rank records each measurement in
// options.database as it lands, so the database must be one file all ranks reach (its lock orders
// their writes; a local disk for the ranks of one node, else a shared file system with working
// flock). The best time so far reaches the other ranks as it is found (non-blocking messages, read
// before each config is handed to the measurer), so a config is cut by a faster one timed on any
// rank that has arrived.
//
// A rank that dies loses only its config in progress, provided the launcher lets the others run
// on (Open MPI 4: `mpirun --mca orte_abort_on_non_zero_status 0`; by default it ends the job):
// the ranks exchange only non-blocking messages and each sends a sign of life at most once a
// second while it tunes, so the others finish their shares, and a rank not heard from for
// `silence_limit` counts as lost. Then every other rank throws Error (io) naming the lost ranks
// once its share is done and recorded; a tune run again with options.resume times only what is
// missing.
//
// Returns, on every rank, the report of the whole tune: the space and its constraint pruning
// once; every rank's results, resumed configs, resource pruning and compile failures, each list in
// enumeration order; the counts summed; the winner over all; the slowest rank's wall time. With
// the exhaustive strategy and no budget or time limit, it times the configs a one-process tune
// times and picks the winner it picks (timing noise aside). `progress` reports this rank's share.
// Collective.
PTXRT_API TuneReport tune(MPI_Comm communicator, const TuningSpace& space,
                          const CandidateCompiler& compile, Measurer& measurer,
                          const TuneOptions& options,
                          const std::function<void(const TuneProgress&)>& progress = {},
                          std::chrono::seconds silence_limit = default_silence_limit);

// A point of a set spread over ranks, with its index in the whole set (distinct across ranks).
struct PTXRT_API IndexedPoint {
  float x = 0.0f;
  float y = 0.0f;
  std::uint64_t index = 0;
};

// Two points of the whole set, first.index < second.index, and their distance: the fp64
// distance of the two float points, as every ptxrt closest-pair method measures it.
struct PTXRT_API PointPair {
  IndexedPoint first;
  IndexedPoint second;
  double distance = 0.0;
};

// The closest pair of `points` (at least 2, finite), by whatever method a rank uses: a GPU
// method on the rank's device, a CPU one.
using ClosestPairSolver = std::function<PointPair(std::span<const IndexedPoint> points)>;

struct PTXRT_API DistributedClosestPairOptions {
  ClosestPairSolver solve_slab;  // a rank's slab: most of its points
  // The points near a slab's border (usually few): a CPU method. Empty: solve_slab.
  ClosestPairSolver solve_border;
  // Keys each rank contributes to choose the slab splitters: more balance the slabs better.
  std::size_t samples_per_rank = 256;
};

// What one rank did.
struct PTXRT_API ClosestPairRankStats {
  std::uint64_t input_points = 0;  // given to it
  std::uint64_t slab_points = 0;   // in its slab after the split
  std::uint64_t border_points_sent = 0;
  std::uint64_t border_points_received = 0;
  double split_ms = 0.0;   // sample, splitters, partition, exchange (none with one rank)
  double slab_ms = 0.0;    // solve_slab
  double border_ms = 0.0;  // the exchange near the borders and solve_border
};

struct PTXRT_API DistributedClosestPair {
  PointPair pair;
  std::uint64_t points = 0;                 // in the whole set
  std::vector<ClosestPairRankStats> ranks;  // every rank's, by rank
  double wall_ms = 0.0;                     // this rank's, from the call to the answer
};

// The closest pair of the union of every rank's `points`. The ranks cut the set, in (x, y,
// index) order, into one slab each at splitters drawn from a random sample (seeded by rank, so
// the same on every run; ties in x are split by y, so points on one vertical line spread too; a
// slab may be empty): each point finds its slab by a binary search over the splitters, and no
// rank sorts its points. A slab reaches its solver in rank order, each rank's points in the order
// given; with one rank, nothing is split or exchanged and the solver gets `points` as they are.
// With delta the smallest slab answer, each rank sends an earlier one only its points within
// delta of that rank's slab's right band (x within delta of its greatest x, y within delta of the
// band's y range), and the earlier rank solves its band with them. The pair is the one of least
// (distance, first index, second index) among the ranks' answers: its distance is the whole
// set's minimum, and when several pairs are that close, any one of them may be returned, as with
// one process. Error (invalid_argument), on every rank, for fewer than 2 points in all, a
// coordinate that is not finite (naming the point's index), or no solve_slab; Error
// (invalid_argument) when a slab would exceed the 2^31 - 1 points MPI's counts can carry.
// Collective.
PTXRT_API DistributedClosestPair closest_pair(MPI_Comm communicator,
                                              std::vector<IndexedPoint> points,
                                              const DistributedClosestPairOptions& options);

}  // namespace ptxrt::mpi
