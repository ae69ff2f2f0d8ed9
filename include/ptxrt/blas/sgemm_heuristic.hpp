// The shape-aware default of the SGEMM family: a config for any m×n×k on any device with no
// tuning database, from a model of the time each config of a short menu would take
// (docs/perf-notes.md, "SGEMM on every shape"):
//
//   The product runs as tiles(C) × split_k blocks, in rounds of sm_count × the blocks an SM
//   holds (the occupancy model's count from the config's registers, threads and shared memory:
//   often more than its min_blocks). A full round takes those blocks' 2·BM·BN·depth flop each
//   at the SM's share of the config's rate, plus an overhead (a fixed part, the ring's first
//   tiles arriving before the first FFMA, and one block's tile of C stored, which the other
//   resident blocks cannot hide: what makes deep rings and large tiles cost at short K); in the
//   last, partial round the busiest SM holds ceil(rest / sm_count) blocks and runs at its
//   occupancy's share of the rate (the square root of its resident warps times each thread's
//   TM·TN results over about 600, at most 1). A split adds its
//   reduction: the partial products written and read once at memory speed, and a second launch.
//
// The menu's rates are full-round throughputs on an H100's chip (an H200 is the same chip), per
// device, fitted with the model's constants to benches of every menu config at every split on
// 63 shapes, twelve chosen, the others drawn or narrow (docs/perf-data/sgemm-menu-*-h200.json.xz,
// scripts/fit_sgemm_heuristic.py; each entry says what its config measured on its own).
// docs/perf-notes.md, "SGEMM on every shape" and "SGEMM on shapes nobody fitted", give the
// derivation, the held-out measurements and the commands that check the choices; a CPU test checks
// the choice for a table of shapes. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API SgemmMenuEntry {
  SgemmConfig config;   // split_k 1; the heuristic picks the split
  double tflops = 0.0;  // on full rounds of a large product, all 132 SMs of an H100 or H200
  double any_alignment_tflops = 0.0;  // the same through the any-alignment entry (N % 4 != 0)
  int registers = 0;                  // per thread on sm_90, through the aligned entries
  int any_alignment_registers = 0;    // the same through the any-alignment entry
  std::string source;                 // where the rates come from
};

// The configs the heuristic chooses among, largest tiles first.
PTXRT_API const std::vector<SgemmMenuEntry>& sgemm_heuristic_menu();

// SPLIT_K's declared values (ptx_src/sgemm.cu's manifest), ascending: the splits the heuristic
// rates for each menu config.
PTXRT_API const std::vector<int>& sgemm_split_values();

struct PTXRT_API SgemmEstimate {
  SgemmConfig config;
  long long tiles = 0;        // of C
  long long blocks = 0;       // tiles × split_k
  int resident_blocks = 0;    // per SM, by the occupancy model
  long long slots = 0;        // blocks resident at once: sm_count × resident_blocks
  double rounds = 0.0;        // blocks / slots
  double milliseconds = 0.0;  // predicted
};

// The model's prediction for `config` (its split included) at m×n×k on `device`, for a config
// whose full-round rate on an H100 or H200 is `tflops` and whose kernel takes `registers` per
// thread.
PTXRT_API SgemmEstimate sgemm_estimate(const SgemmConfig& config, double tflops, int registers,
                                       const DeviceProperties& device, int m, int n, int k);

// How much slower than predicted sgemm_estimates counts a split, so that it must win clearly to
// be chosen (it needs a workspace and a second launch).
inline constexpr double sgemm_split_penalty = 1.01;

// The tensor cores' configs are rated only where K is this deep or deeper. At shorter K a block's
// fixed costs, higher on the tensor cores than on the FFMAs (C stored from m16n8 fragments, the
// split of every element read), outweigh their rate, and the model's overheads, fitted to the
// FFMAs, do not count them: at K under 224 the FFMAs' best beat the tensor cores' best at 22 of 23
// shapes (H200, up to 2.2x; docs/perf-notes.md, "A and B by chunks on the tensor cores").
inline constexpr int sgemm_tensor_cores_min_k = 224;

// Every menu config that suits `device` at every split worth trying (slices at least 128 deep;
// the tensor cores' where K >= sgemm_tensor_cores_min_k), predicted on 16-byte aligned addresses
// (the path sgemm_path takes there: the aligned rate where B loads by vectors, the copy's time
// added where B is padded), fastest first, a split's time times sgemm_split_penalty.
PTXRT_API std::vector<SgemmEstimate> sgemm_estimates(const DeviceProperties& device, int m, int n,
                                                     int k);

// The first of sgemm_estimates, with VECTOR_A where sgemm_pick_vector_a keeps it. Sizes below 1
// count as 1. Throws Error (invalid_argument) naming the device when no menu config suits it.
PTXRT_API SgemmConfig sgemm_heuristic_config(const DeviceProperties& device, int m, int n, int k);

// Loading A by vectors stages it through registers: on the FFMA configs it costs more than it
// saves where slices are this deep or shallower (H200, each pick's config with and without it,
// 28-160 deep: a median of 10 % slower where B is padded, 4.5 % where it is aligned; at 256, 3 %
// and level; deeper, up to 2 % faster: docs/perf-notes.md, "Vector A at shallow slices"). The
// tensor cores' configs gain from it at every depth measured.
inline constexpr int sgemm_vector_a_min_depth = 256;

// `config` with VECTOR_A kept only where the vector entry runs at m×n×k on aligned addresses
// (sgemm_path: K a multiple of 4, and N one too or B padded; elsewhere the any-alignment entry
// runs, which never loads A by vectors) and, on the FFMA configs, where its slices (its split
// included) are deeper than sgemm_vector_a_min_depth: what sgemm_heuristic_config does to the
// model's first estimate.
PTXRT_API SgemmConfig sgemm_pick_vector_a(const DeviceProperties& device, SgemmConfig config, int m,
                                          int n, int k);

}  // namespace ptxrt
