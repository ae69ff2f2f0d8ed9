// The configurations of the builtin SGEMM kernel family (ptx_src/sgemm.cu) as values: its
// compile-time constants, which of them suit a device, and the launches a config implies.
//
// Everything here is a pure function of its arguments (no GPU); thread-safe.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ptxrt/core/device.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/verdict.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// One specialization of sgemm.cu, field for define (see the file's manifest). The block tile is
// block_m() × block_n() × block_k; each thread holds thread_m × thread_n results; with
// split_k > 1, K is cut into split_k slices, one block each, summed by sgemm_split_reduce.
// The field defaults are sgemm.cu's: 128×128×16, 256 threads, 8×8 per thread, no split.
struct PTXRT_API SgemmConfig {
  int warps_m = 4;               // WARPS_M: warps of a block along M
  int warps_n = 2;               // WARPS_N: along N
  int lanes_m = 4;               // LANES_M: lanes of a warp along M (32 / lanes_m along N)
  int thread_m = 8;              // TM
  int thread_n = 8;              // TN
  int block_k = 16;              // BK
  int stages = 3;                // STAGES: shared-memory buffers in the cp.async ring
  int min_blocks = 2;            // MIN_BLOCKS: blocks per SM promised to __launch_bounds__
  int group_m = 1;               // GROUP_M: tile rows consecutive blocks walk down (1: by row)
  bool vector_a = false;         // VECTOR_A: A by 16-byte loads through registers (aligned entry)
  bool skip_idle_warps = false;  // SKIP_IDLE_WARPS: no FFMAs for warps wholly outside C
  int split_k = 1;               // SPLIT_K: slices of K, summed in order by a second kernel
  // TF32X3: the same tiles on the tensor cores, each operand split into two TF32 parts (three
  // products a term, fp32 accuracy; compute capability 8.0 or newer). Other bits than the FFMAs'.
  bool tf32x3 = false;

  int lanes_n() const { return 32 / lanes_m; }
  int block_m() const { return warps_m * lanes_m * thread_m; }
  int block_n() const { return warps_n * lanes_n() * thread_n; }
  int threads() const { return 32 * warps_m * warps_n; }
  // The cp.async ring: per stage BK rows of A (transposed, padded by 4 floats) and of B; with
  // tf32x3, BM rows of A (padded by 4) and BK rows of B (padded by 8).
  std::size_t shared_bytes() const;
  // The most registers a thread may use under __launch_bounds__(threads, min_blocks).
  int register_cap(const DeviceProperties& device) const;

  std::vector<Define> defines() const;
  // "128x128x16 8x8/thread 4x2 warps lanes 4x8 3 stages min 2 blocks/SM", then those of
  // " group 8", " vector A", " skip idle warps", " split 4", " 3xTF32" that are on; for tables
  // and messages.
  std::string describe() const;

  bool operator==(const SgemmConfig&) const = default;
};

// `base` with the constants `defines` names set from their integer values (WARPS_M=4, TM=8,
// VECTOR_A=1, SPLIT_K=4, ...): how a tuning database's config or a command line's -D become a
// config. Throws Error (invalid_argument) for a name sgemm.cu does not declare or a value that
// is not an integer; whether the values are declared ones is sgemm_config_fits' business.
PTXRT_API SgemmConfig sgemm_config_with(SgemmConfig base, const std::vector<Define>& defines);

// Whether `config` can run, and should be tried, on `device`, and if not why. Checked:
// each constant is in sgemm.cu's declared set; tf32x3 only from compute capability 8.0; the
// block's threads; the ring's shared memory against the per-block opt-in limit; min_blocks
// blocks fitting in one SM (threads, shared memory with the per-block reserve); and the register
// cap leaving room for the thread_m × thread_n accumulators plus one A and one B fragment (below
// that the compiler must spill).
PTXRT_API Verdict sgemm_config_fits(const SgemmConfig& config, const DeviceProperties& device);

// The block_m() × block_n() tiles that cover an m×n C.
PTXRT_API long long sgemm_tiles(const SgemmConfig& config, int m, int n);

// The depth of each of split_k slices of K, as sgemm.cu cuts them: whole block_k tiles, as even
// as that allows (k itself when split_k is 1, and never more than k).
PTXRT_API int sgemm_slice_depth(const SgemmConfig& config, int k);

// The floats of workspace an m×n product with `config` needs: split_k stacked partial products of
// m rows, n rounded up to a multiple of 4 floats apart (so that they go by float4 whatever n), or
// none without a split.
PTXRT_API std::size_t sgemm_workspace_floats(const SgemmConfig& config, int m, int n);

// Which of the family's entries a product runs, and on which B.
enum class SgemmPath {
  any_alignment,  // "sgemm": A a float at a time, B by realigned 16-byte chunks, C's ragged rows
                  // by 16-byte stores
  vectors,        // "sgemm_aligned": B (and A with vector_a) by 16-byte loads, C by 16-byte stores
  vector_b,       // "sgemm_pitched_b" on B as it is: B by 16-byte loads, C as in any_alignment
  padded_b,       // "sgemm_pad_rows" copies B to rows of sgemm_b_pitch, then as vector_b
};

// A product whose B rows are not 16-byte aligned copies B to padded rows first where the copy
// (sgemm_pad_ms: 2·k·n floats of traffic and a launch of a few µs) takes at most this share of
// the product's time reckoned at sgemm_pad_reference_gflop_per_sm on every SM. Below that share
// the 16-byte loads win back more than the copy costs; above it the copy mostly costs more (H200,
// 16 ragged shapes benched padded and not: of the ten at a share of 0.21 or less nine gained, up
// to 0.74× → 0.97× cuBLAS, and one ran level; of the six at 0.28 or more four lost;
// docs/perf-notes.md, "Padding B where it pays").
inline constexpr double sgemm_pad_b_max_share = 0.25;
// A mid-size product's rate on an H100 or H200: 40 TFLOP/s on 132 SMs.
inline constexpr double sgemm_pad_reference_gflop_per_sm = 303.0;

// Whether a B whose rows are not 16-byte aligned is copied to padded rows.
enum class SgemmPadding {
  automatic,  // where the copy pays (sgemm_padding_pays)
  always,     // whenever B's rows are not 16-byte aligned and k > 0
  never,      // B then loads by realigned 16-byte chunks (a float at a time in the largest tiles)
};

// The time in ms the copy of a k×n B to rows of n rounded up to a multiple of 4 takes on
// `device`: a launch (about 6 µs on an H100 and an H200, with the product waiting on it) and B
// read and its copy written at 0.8 of the theoretical DRAM bandwidth (a streaming copy).
PTXRT_API double sgemm_pad_ms(const DeviceProperties& device, int n, int k);

// Whether SgemmPadding::automatic copies a ragged B of an m×n×k product on `device`:
// sgemm_pad_ms at most sgemm_pad_b_max_share of 2·m·n·k flop at sgemm_pad_reference_gflop_per_sm
// on each of the device's SMs.
PTXRT_API bool sgemm_padding_pays(const DeviceProperties& device, int m, int n, int k);

// The path sgemm() takes for `config` on `device` at these addresses: where n % 4 == 0 and B is
// 16-byte aligned, vectors if what the product writes is too (C, or with a split the workspace,
// always aligned), else vector_b; otherwise padded_b where `padding` allows (automatic:
// sgemm_padding_pays), k > 0 and n leaves room for the pitch; else any_alignment. With
// config.vector_a every path but any_alignment also needs k % 4 == 0 and A 16-byte aligned
// (any_alignment otherwise).
PTXRT_API SgemmPath sgemm_path(const DeviceProperties& device, const SgemmConfig& config, int m,
                               int n, int k, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                               SgemmPadding padding = SgemmPadding::automatic);

// B's row pitch in floats on `path`: n, or n rounded up to a multiple of 4 for padded_b.
PTXRT_API int sgemm_b_pitch(SgemmPath path, int n);

// The launch for an m×n product (K is walked inside a block): one block per block_m()×block_n()
// tile of C (x along N, y along M) and slice of K (z), threads() threads, shared_bytes() of
// dynamic shared memory, and the entry point: "sgemm", "sgemm_aligned" on the vectors path, or
// "sgemm_pitched_b" (which takes B's pitch after k) on vector_b and padded_b.
struct PTXRT_API SgemmLaunch {
  LaunchConfig launch;
  std::string entry;
};
PTXRT_API SgemmLaunch sgemm_launch(const SgemmConfig& config, int m, int n, SgemmPath path);

// The launch of sgemm_pad_rows for a B of `rows` rows padded to `pitch` floats: 256 threads a block
// along a row's float4s, rows spread over at most 16 blocks per SM of `device` in all.
PTXRT_API LaunchConfig sgemm_pad_launch(const DeviceProperties& device, int rows, int pitch);

// How many groups of sgemm_split_reduce's threads add a split's slices side by side: the largest
// power of two up to 8 that is at most split_k.
PTXRT_API int sgemm_reduce_groups(int split_k);

// The launch of sgemm_split_reduce for `config` over an m×n C: 256 threads a block, each group
// of them (sgemm_reduce_groups) on one float4 of the workspace's pitched rows, enough blocks for
// all of them, at most 16 per SM of `device` (the kernel's grid-stride loop does the rest). From
// compute capability 9.0 it follows the product by programmatic dependent launch: its blocks are
// set up during the product's last epilogues and wait there for the product's end.
PTXRT_API LaunchConfig sgemm_reduce_launch(const SgemmConfig& config,
                                           const DeviceProperties& device, int m, int n);

}  // namespace ptxrt
