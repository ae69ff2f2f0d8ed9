// How many blocks of a kernel fit on one SM, computed from a per-architecture table: no GPU is
// needed, and the answer matches cuOccupancyMaxActiveBlocksPerMultiprocessor (the model follows
// the toolkit's cuda_occupancy.h). From it, what a whole device holds at once: the blocks of a
// cooperative launch and, on CC 9.0, thread-block clusters. Values only; every function is pure
// and thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/resources.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// What one SM of a compute capability holds. From the CUDA C++ Programming Guide's technical
// specifications and the toolkit's occupancy calculator. A limit a device also reports has
// DeviceProperties' name and type (cc_major, registers_per_block, shared_memory_per_sm, ...; byte
// counts std::size_t); the rest (allocation units, sub-partitions, carveouts, GPCs) only the table
// knows.
struct PTXRT_API ArchLimits {
  int cc_major = 0;
  int cc_minor = 0;
  int max_warps_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_threads_per_block = 1024;
  int registers_per_sm = 65536;
  int registers_per_block = 65536;
  int max_registers_per_thread = 255;
  // Registers are given to warps in units of this many (a warp of 32 threads at r registers
  // takes 32*r rounded up to it).
  int register_allocation_unit = 256;
  // The register file is split among this many sub-partitions (warp schedulers); a warp's
  // registers come from one of them, so warps are placed in groups of this size.
  int register_sub_partitions = 4;
  std::size_t shared_memory_per_sm = 0;           // the largest carveout
  std::size_t shared_memory_per_block_optin = 0;  // what a block may use after opting in
  std::size_t shared_allocation_unit = 128;       // a block's shared memory is rounded up to it
  std::size_t reserved_shared_memory_per_block =
      0;  // the system's share of every block (CC >= 8.0)
  // The sizes the L1/shared split can take, ascending; the driver picks one per launch.
  std::span<const std::size_t> shared_carveouts;
  // On CC >= 9.0 named barriers are a per-SM pool of this many sets per block slot; 0 where
  // barriers do not limit occupancy.
  int barrier_sets_per_block_slot = 0;
  // GPCs of the full chip, which bound thread-block clusters (a cluster runs within one GPC);
  // 0 where the cluster model does not know the chip. SMs come in pairs (TPCs) within a GPC.
  int gpcs = 0;
  int sms_per_tpc = 2;
};

// The limits of compute capability major.minor. Throws Error (invalid_argument) listing the known
// capabilities for any other.
PTXRT_API const ArchLimits& arch_limits(int major, int minor);

// The capabilities arch_limits knows, ascending ("7.5", "8.0", ...).
PTXRT_API std::span<const ArchLimits> known_architectures();

// What keeps more blocks off the SM. On a tie, the one declared first is reported.
enum class OccupancyLimit { warps, registers, shared_memory, blocks, barriers, none_fits };
PTXRT_API std::string_view to_string(OccupancyLimit limit);

struct PTXRT_API Occupancy {
  int active_blocks_per_sm = 0;
  int active_warps_per_sm = 0;
  double fraction = 0.0;  // active warps over the SM's maximum
  OccupancyLimit limit = OccupancyLimit::none_fits;
  std::string reason;  // why not even one block fits; empty otherwise
  // Blocks each resource alone would allow (a large number where it does not limit at all).
  int blocks_by_warps = 0;
  int blocks_by_registers = 0;
  int blocks_by_shared_memory = 0;
  int blocks_by_barriers = 0;
  int registers_per_block = 0;             // as allocated: per-warp rounding included
  std::size_t shared_bytes_per_block = 0;  // static + dynamic + reserved, rounded to the unit
  // The smallest carveout that holds the active blocks' shared memory: the split the driver
  // can choose without lowering occupancy, leaving the rest to L1.
  std::size_t shared_carveout_bytes = 0;
};

// Occupancy of `kernel` launched with `block_threads` threads and `dynamic_smem_bytes` of dynamic
// shared memory per block. Assumes the kernel has opted in to the shared memory it asks for
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) and has no carveout preference set. A block
// that cannot launch at all gives limit none_fits with the reason. Throws Error
// (invalid_argument) when block_threads is not positive.
PTXRT_API Occupancy compute_occupancy(const ArchLimits& arch, const KernelResources& kernel,
                                      int block_threads, std::size_t dynamic_smem_bytes);

// The most blocks a cooperative launch may have on a device of `sm_count` SMs: all of them must
// be resident at once, so active_blocks_per_sm x sm_count (what the driver allows, and what
// check_launch_residency in kernel.hpp checks).
PTXRT_API long long co_resident_blocks(const Occupancy& occupancy, int sm_count);

// How the model groups a device's SMs into GPCs: its TPCs spread over the architecture's GPCs as
// evenly as they go (132 SMs of CC 9.0's 8 GPCs: 2 of 18 and 6 of 16), largest first. The driver
// knows which TPCs each chip lost to harvesting and does not say; this is the model's guess.
// Error(invalid_argument) where the architecture's GPCs are unknown.
PTXRT_API std::vector<int> gpc_sm_counts(const ArchLimits& arch, int sm_count);

// Clusters of `cluster_blocks` blocks, each the block `occupancy` describes, resident at once
// on a device of `sm_count` SMs, modelled like cuOccupancyMaxActiveClusters: a cluster's blocks
// run within one GPC, so a GPC of s SMs holds floor(active_blocks_per_sm x s / cluster_blocks)
// clusters, with at most 8 blocks per SM (what the driver allows a cluster launch on CC 9.0,
// measured). The approximation is the GPC grouping (gpc_sm_counts): clusters of 1 or 2 blocks
// divide every GPC's even SM count, so they come out as the driver says however the chip was
// harvested; for larger ones the most even grouping is an upper bound, which a chip whose GPCs
// are less even than the model's stays under (the GPU test checks both and prints the two).
// Error(invalid_argument) for an architecture without the model's GPCs (known: CC 9.0) or
// cluster_blocks outside 1..16.
PTXRT_API int co_resident_clusters(const ArchLimits& arch, const Occupancy& occupancy,
                                   int cluster_blocks, int sm_count);

}  // namespace ptxrt
