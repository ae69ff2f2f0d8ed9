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
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuner.hpp"

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
// method on the rank's device, a CPU one. Of the pairs at the least distance it returns the one
// of least positions in `points`, as every ptxrt method does.
using ClosestPairSolver = std::function<PointPair(std::span<const IndexedPoint> points)>;

// The keys a rank's slab holds, in the order of x, then y, then index: above `after` and up to
// and including `through`; no `after` in the first slab, no `through` in the last.
struct PTXRT_API SlabRange {
  std::optional<IndexedPoint> after;
  std::optional<IndexedPoint> through;
};

// A rank's slab: its part of the set after the split, held where the rank solves it (host
// memory, a GPU). The distributed closest pair asks these of it, from the calling thread.
class PTXRT_API Slab {
 public:
  virtual ~Slab() = default;
  virtual std::uint64_t size() const = 0;
  // The closest pair of its points (asked only of 2 or more). So that the distributed answer is
  // the one-process answer, ties included: of the pairs at the least distance, the one of least
  // (first.index, second.index).
  virtual PointPair closest_pair() = 0;
  // Its points with x at most `left_until` or at least `right_from` (either may be infinite), in
  // any order: the few near the slab's edges, for the pairs across slab borders.
  virtual std::vector<IndexedPoint> points_near_edges(double left_until, double right_from) = 0;
};

// A slab of `points` in host memory, solved by `solve` (a CPU method): the least pair of ties
// is the least by index when `points` are in index order, as the split below hands them over.
PTXRT_API std::unique_ptr<Slab> host_slab(std::vector<IndexedPoint> points,
                                          ClosestPairSolver solve);

// A point set that every rank can make any part of by itself, as a counter-based generator
// does: point k a function of k alone. Then no point travels but the few near slab borders.
class PTXRT_API GeneratedPointSet {
 public:
  virtual ~GeneratedPointSet() = default;
  // How many points the set holds, the same on every rank.
  virtual std::uint64_t size() const = 0;
  // parts - 1 keys in key order that cut the set into `parts` slabs of about equal size (the
  // quantiles of a sample). Asked of every rank, which must each find the same: no message
  // carries them.
  virtual std::vector<IndexedPoint> splitters(int parts) = 0;
  // This rank's slab: the points of the set whose keys lie in `range`, in index order.
  virtual std::unique_ptr<Slab> make_slab(const SlabRange& range) = 0;
};

struct PTXRT_API DistributedClosestPairOptions {
  // The points near the slab borders, gathered on the CPU (usually few): a CPU method. Required.
  ClosestPairSolver solve_border;
  // Points given (not generated): keys each rank contributes to choose the slab splitters; more
  // balance the slabs better.
  std::size_t samples_per_rank = 256;
};

// What one rank did, and how long each phase took it in milliseconds, in the order they run, from
// a start the ranks share (a barrier on entry).
struct PTXRT_API ClosestPairRankStats {
  std::uint64_t input_points = 0;  // read by it, or generated (a generated set: all of them)
  std::uint64_t slab_points = 0;   // in its slab after the split
  std::uint64_t border_points_sent = 0;
  std::uint64_t border_points_received = 0;
  double input_ms = 0.0;   // reading its points, or making its slab of a generated set
  double split_ms = 0.0;   // the splitters; with points given, the exchange and make_slab too
  double solve_ms = 0.0;   // its slab's closest pair
  double border_ms = 0.0;  // the points near the borders found, exchanged and solved
  double reduce_ms = 0.0;  // every rank's answer gathered
  double total_ms = 0.0;   // from the shared start to the answer: the phases' sum
};

struct PTXRT_API DistributedClosestPair {
  PointPair pair;
  std::uint64_t points = 0;                 // in the whole set
  std::vector<ClosestPairRankStats> ranks;  // every rank's, by rank
};

// This rank's part of a point set given point by point (read from a file, received), and what
// makes a Slab of the points a rank gets after the split, told the size of the whole set (to
// choose a method by it): host_slab for a CPU method, an upload for a GPU one.
using PointReader = std::function<std::vector<IndexedPoint>()>;
using SlabMaker =
    std::function<std::unique_ptr<Slab>(std::vector<IndexedPoint> points, std::uint64_t set_size)>;

// The closest pair of a point set spread over the ranks: the union of every rank's `read()`, or a
// generated set. The ranks cut the set, in (x, y, index) order, into one slab each at splitters
// (ties in x are split by y, so points on one vertical line spread too; a slab may be empty).
// Points given: the splitters are quantiles of a random sample (samples_per_rank from each rank,
// seeded by rank, so the same on every run), each point finds its slab by a binary search over
// them, the ranks exchange their points, and a slab reaches make_slab in rank order, each rank's
// points in the order read (with one rank: its points as read, nothing exchanged). Generated:
// each rank asks splitters() itself and makes its own slab; no point travels to split.
//
// Each rank solves its slab, and the ranks gather every slab's answer with the box of its points
// near its right edge (a splitter's x) within the reach of that answer. With delta the least slab
// answer, each rank sends an earlier one only its points within delta of its left edge and of
// that rank's box, and the earlier rank solves those with its own points within delta of its
// right edge near them by solve_border; when no rank sends any, no further message is needed.
// The pair is the one of least (distance, first index, second index) among the ranks' answers:
// the least distance of the whole set, and, when each rank reads its points in index order and
// the ranks hold increasing index ranges (or the set is generated), the pair one process finds,
// ties included.
//
// Error (invalid_argument), on every rank, for fewer than 2 points in all, a coordinate that is
// not finite (points given; naming the point's index), no solve_border, splitters that are not
// parts - 1 keys in key order, or slabs that do not hold the set's points once each; Error
// (invalid_argument) when a slab would exceed the 2^31 - 1 points MPI's counts can carry (points
// given). What make_slab, a Slab or the set throw is thrown on that rank only. Collective.
PTXRT_API DistributedClosestPair closest_pair(MPI_Comm communicator, const PointReader& read,
                                              const SlabMaker& make_slab,
                                              const DistributedClosestPairOptions& options);
PTXRT_API DistributedClosestPair closest_pair(MPI_Comm communicator, GeneratedPointSet& points,
                                              const DistributedClosestPairOptions& options);

}  // namespace ptxrt::mpi
