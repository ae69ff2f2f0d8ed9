// The tuning problem of the SGEMM family, shared by `ptxrt tune sgemm` (which records winners in
// the tuning database) and the tuned choice (which reads them), so that both name a tune alike:
// its problem, space and database key. Pure functions, but sgemm_tuned_choice reads a file;
// thread-safe.
#pragma once

#include "ptxrt/core/device.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "ptxrt/tune/tuning_space.hpp"

namespace ptxrt {

// sgemm.cu's tunable constants and constraints, narrowed to what suits an m×n×k product on
// `device`: each config passes sgemm_config_fits; no tile side beyond the product's (rounded
// up to a power of two, at least 32); tiles smaller than 64×64, with fewer than 8×8 results per
// thread, fewer than 128 threads, or a launch bound of more than 512 threads an SM (the default
// tiles' 256 at 2 blocks) only where 128×128 tiles would fill fewer than two rounds of 2 blocks
// per SM; a split only where the config's tiles fill fewer than 4 rounds, each slice is at least
// 128 deep, and all slices together make at most 16 rounds; BK 8 only where slices are under
// 128 deep (short K, where BK 8's ring fills in half BK 16's steps); but the shape heuristic's pick
// (sgemm_heuristic_config) whatever those rules say. The constraint's description names no
// size, so that tunes of different sizes share one space in the database (for its nearest-size
// choice).
PTXRT_API TuningSpace sgemm_tuning_space(const DeviceProperties& device, int m, int n, int k);

// The tuning problem `ptxrt tune sgemm` tunes on `device`: sizes m, n and k (each 1024 unless
// given), row-major A (m×k) and B (k×n) uniform in [-1, 1) and the output C; the space of
// sgemm_tuning_space at the sizes (a C++ constraint); sgemm_aligned's launch for the resources
// of a config; each config run by sgemm() (with a split's reduction, in a workspace of the
// session's); GFLOP/s. A tune times first the heuristic's pick, what runs untuned, and then its
// next 7 best estimates at the sizes that are configs of the space (KernelProblem::try_first),
// so that a short one starts from the default and measures its winner against it. Keyed by the
// source alone (the key below). It states no reference: an application adds one
// (verify_on_device) and a peer, which the library has no means for.
PTXRT_API KernelProblem sgemm_problem(const DeviceProperties& device);

// The database key of `ptxrt tune sgemm --size MxNxK` on `device`: sgemm_problem's.
PTXRT_API TuningKey sgemm_tuning_key(const DeviceProperties& device, int m, int n, int k);

// The database's pick for m×n×k on `device` (TuningDatabase's choose: this size, the nearest
// size tuned on this device, another device of the same compute capability), else the
// heuristic's config (level declared_default); said in the log at info level. Throws Error (io)
// for a corrupt database.
PTXRT_API TunedChoice sgemm_tuned_choice(const DeviceProperties& device, int m, int n, int k,
                                         const TuningDatabase& database);

}  // namespace ptxrt
