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
// The field defaults are sgemm.cu's: 128×128×8, 256 threads, 8×8 per thread.
struct SgemmConfig {
  int warps_m = 4;     // WARPS_M: warps of a block along M
  int warps_n = 2;     // WARPS_N: along N
  int lanes_m = 4;     // LANES_M: lanes of a warp along M (32 / lanes_m along N)
  int thread_m = 8;    // TM
  int thread_n = 8;    // TN
  int block_k = 8;     // BK
  int stages = 3;      // STAGES: shared-memory buffers in the cp.async ring
  int min_blocks = 2;  // MIN_BLOCKS: blocks per SM promised to __launch_bounds__

  int lanes_n() const { return 32 / lanes_m; }
  int block_m() const { return warps_m * lanes_m * thread_m; }
  int block_n() const { return warps_n * lanes_n() * thread_n; }
  int threads() const { return 32 * warps_m * warps_n; }
  // The cp.async ring: per stage BK rows of A (transposed, padded by 4 floats) and of B.
  std::size_t shared_bytes() const;
  // The most registers a thread may use under __launch_bounds__(threads, min_blocks).
  int register_cap(const DeviceProperties& device) const;

  std::vector<Define> defines() const;
  // "128x128x8 8x8/thread 4x2 warps lanes 4x8 3 stages min 2 blocks/SM", for tables and messages.
  std::string describe() const;

  bool operator==(const SgemmConfig&) const = default;
};

// Why `config` cannot run, or should not be tried, on `device`; nothing when it can. Checked:
// each constant is in sgemm.cu's declared set; the block's threads; the ring's shared memory
// against the per-block opt-in limit; min_blocks blocks fitting in one SM (threads, shared
// memory with the per-block reserve); and the register cap leaving room for the thread_m ×
// thread_n accumulators plus one A and one B fragment (below that the compiler must spill).
std::optional<std::string> sgemm_config_problem(const SgemmConfig& config,
                                                const DeviceProperties& device);

// The configs a tuner should search on `device`, each without a problem, default first.
std::vector<SgemmConfig> sgemm_configs(const DeviceProperties& device);
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

// Whether sgemm_aligned may run: n % 4 == 0 and B and C 16-byte aligned (A is read a float at a
// time, so its alignment does not matter).
bool sgemm_alignment_allows_vectors(CUdeviceptr b, CUdeviceptr c, int n);

// C = A·B for row-major A (m×k), B (k×n), C (m×n) on `stream` (nullptr: the context's default),
// asynchronously. Picks the aligned entry when sgemm_alignment_allows_vectors. Throws Error
// (invalid_argument) for a negative size, a buffer smaller than its matrix (naming it, its size
// and the size needed) or a config with a problem on the context's device; does nothing when m
// or n is 0; with k == 0 writes zeros.
void sgemm(Jit& jit, const Context& context, const DeviceBuffer<float>& a,
           const DeviceBuffer<float>& b, DeviceBuffer<float>& c, int m, int n, int k,
           const SgemmConfig& config, CUstream stream = nullptr);

}  // namespace ptxrt::host
