// C = A·B in fp32 through ptx_src/sgemm.cu: its compile-time constants as a value (SgemmConfig),
// which of them suit a device, the launch geometry they imply, and the launch itself.
//
// Everything but sgemm() is a pure function of its arguments (no GPU), safe from any thread.
// sgemm() is as thread-safe as the Jit and Kernel it uses: call it from any number of threads.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ptxrt/device.hpp"
#include "ptxrt/image.hpp"
#include "ptxrt/jit.hpp"
#include "ptxrt/kernel.hpp"
#include "ptxrt/memory.hpp"

namespace ptxrt::host {

// One specialization of sgemm.cu, field for define (see the file's manifest). The block tile is
// block_m() × block_n() × block_k; each thread holds thread_m × thread_n results.
// The field defaults are sgemm.cu's: 128×128×16, 256 threads, 8×8 per thread.
struct SgemmConfig {
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

  int lanes_n() const { return 32 / lanes_m; }
  int block_m() const { return warps_m * lanes_m * thread_m; }
  int block_n() const { return warps_n * lanes_n() * thread_n; }
  int threads() const { return 32 * warps_m * warps_n; }
  // The cp.async ring: per stage BK rows of A (transposed, padded by 4 floats) and of B.
  std::size_t shared_bytes() const;
  // The most registers a thread may use under __launch_bounds__(threads, min_blocks).
  int register_cap(const DeviceProperties& device) const;

  std::vector<Define> defines() const;
  // "128x128x16 8x8/thread 4x2 warps lanes 4x8 3 stages min 2 blocks/SM", then those of
  // " group 8", " vector A", " skip idle warps" that are on; for tables and messages.
  std::string describe() const;

  bool operator==(const SgemmConfig&) const = default;
};

// `base` with the constants `defines` name (WARPS_M=4, TM=8, VECTOR_A=1, ...) set from their
// integer values. Throws Error (invalid_argument) for a name sgemm.cu does not declare or a value
// that is not an integer.
SgemmConfig sgemm_config_with(SgemmConfig base, const std::vector<Define>& defines);

// Why `config` cannot run, or should not be tried, on `device`; nothing when it can. Checked:
// each constant is in sgemm.cu's declared set; the block's threads; the ring's shared memory
// against the per-block opt-in limit; min_blocks blocks fitting in one SM (threads, shared
// memory with the per-block reserve); and the register cap leaving room for the thread_m ×
// thread_n accumulators plus one A and one B fragment (below that the compiler must spill).
std::optional<std::string> sgemm_config_problem(const SgemmConfig& config,
                                                const DeviceProperties& device);

// The configs worth knowing on `device`, each without a problem, default first: every one is
// checked by the GPU tests, and each is a candidate for some shapes (sgemm_candidates).
std::vector<SgemmConfig> sgemm_configs(const DeviceProperties& device);

// What decides the tile choice at m×n×k: skinny (k · 16 <= min(m, n): the per-block prologue
// and the write of C weigh), ragged (otherwise, when M or N is not a multiple of 128: edge tiles,
// wave quantization, and for N % 4 != 0 the any-alignment entry), square (the rest).
enum class SgemmShape { square, ragged, skinny };
SgemmShape sgemm_shape_of(int m, int n, int k);
const char* to_string(SgemmShape shape);

// The configs a benchmark sweeps at m×n×k on `device`: the default first, then those of
// sgemm_configs listed for sgemm_shape_of(m, n, k) (docs/perf-notes.md says why each).
std::vector<SgemmConfig> sgemm_candidates(const DeviceProperties& device, int m, int n, int k);
// The one to use untuned: the first of sgemm_configs, 128×128×16 with 8×8 per thread, 256
// threads and 3 stages where it fits (docs/perf-notes.md says why). Throws Error
// (invalid_argument) naming the device when no config suits it.
SgemmConfig default_sgemm_config(const DeviceProperties& device);

// The launch for an m×n product (K is walked inside a block): one block per block_m()×block_n()
// tile of C (x along N, y along M), threads() threads, shared_bytes() of dynamic shared memory, and
// the entry point: "sgemm_aligned" when `aligned`, else "sgemm".
struct SgemmLaunch {
  LaunchConfig launch;
  std::string entry;
};
SgemmLaunch sgemm_launch(const SgemmConfig& config, int m, int n, bool aligned);

// Whether sgemm_aligned may run `config`: n % 4 == 0 and B and C 16-byte aligned, and with
// config.vector_a also k % 4 == 0 and A 16-byte aligned (otherwise A is read a float at a time,
// so its alignment does not matter).
bool sgemm_alignment_allows_vectors(const SgemmConfig& config, CUdeviceptr a, CUdeviceptr b,
                                    CUdeviceptr c, int n, int k);

// Compiles `config` and loads it into `context`, as sgemm() would on first use: a benchmark
// calls it from several threads at once to compile its configs in parallel (the Jit is
// thread-safe and compiles different configs concurrently).
void prepare_sgemm(Jit& jit, const Context& context, const SgemmConfig& config);

// C = A·B for row-major A (m×k), B (k×n), C (m×n) on `stream` (nullptr: the context's default),
// asynchronously. Picks the aligned entry when sgemm_alignment_allows_vectors. Throws Error
// (invalid_argument) for a negative size, a buffer smaller than its matrix (naming it, its size
// and the size needed) or a config with a problem on the context's device; does nothing when m
// or n is 0; with k == 0 writes zeros.
void sgemm(Jit& jit, const Context& context, const DeviceBuffer<float>& a,
           const DeviceBuffer<float>& b, DeviceBuffer<float>& c, int m, int n, int k,
           const SgemmConfig& config, CUstream stream = nullptr);

}  // namespace ptxrt::host
