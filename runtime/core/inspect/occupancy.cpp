#include "ptxrt/core/occupancy.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/kernel.hpp"

namespace ptxrt {
namespace {

constexpr std::size_t KB = 1024;
constexpr int kWarpSize = 32;
constexpr int kUnlimited = std::numeric_limits<int>::max();

constexpr std::array<std::size_t, 6> kVoltaCarveouts{0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 96 * KB};
constexpr std::array<std::size_t, 2> kTuringCarveouts{32 * KB, 64 * KB};
constexpr std::array<std::size_t, 6> kSmallCarveouts{0,       8 * KB,  16 * KB,
                                                     32 * KB, 64 * KB, 100 * KB};
constexpr std::array<std::size_t, 8> kAmpereCarveouts{0,       8 * KB,   16 * KB,  32 * KB,
                                                      64 * KB, 100 * KB, 132 * KB, 164 * KB};
constexpr std::array<std::size_t, 10> kHopperCarveouts{
    0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 100 * KB, 132 * KB, 164 * KB, 196 * KB, 228 * KB};

ArchLimits make(int major, int minor, int warps, int blocks, std::span<const std::size_t> carveouts,
                int barrier_sets, int gpcs = 0) {
  ArchLimits limits;
  limits.cc_major = major;
  limits.cc_minor = minor;
  limits.max_warps_per_sm = warps;
  limits.max_blocks_per_sm = blocks;
  limits.shared_carveouts = carveouts;
  limits.shared_memory_per_sm = carveouts.back();
  // Turing gives a block all of the SM; from Ampere on the system keeps 1 KB of it per block.
  limits.reserved_shared_memory_per_block = major >= 8 ? KB : 0;
  limits.shared_memory_per_block_optin = limits.shared_memory_per_sm - (major >= 8 ? KB : 0);
  limits.shared_allocation_unit = major >= 8 ? 128 : 256;
  limits.barrier_sets_per_block_slot = barrier_sets;
  limits.gpcs = gpcs;
  return limits;
}

// 7.0 and 7.2 (Volta) stay for reports on kernels built elsewhere, though NVRTC 13.0 no longer
// targets them; sm_88 has no published limits. Columns: major, minor, warps/SM, blocks/SM,
// carveouts, barrier sets per block slot (blocks/SM and barrier rules as in the toolkit's
// cuda_occupancy.h), and for CC 9.0 the GPCs of GH100 (the cluster model's; the whitepaper's 8).
const std::array<ArchLimits, 13>& table() {
  static const std::array<ArchLimits, 13> limits{
      make(7, 0, 64, 32, kVoltaCarveouts, 0),   make(7, 2, 64, 32, kVoltaCarveouts, 0),
      make(7, 5, 32, 16, kTuringCarveouts, 0),  make(8, 0, 64, 32, kAmpereCarveouts, 0),
      make(8, 6, 48, 16, kSmallCarveouts, 0),   make(8, 7, 48, 16, kAmpereCarveouts, 0),
      make(8, 9, 48, 24, kSmallCarveouts, 0),   make(9, 0, 64, 32, kHopperCarveouts, 2, 8),
      make(10, 0, 64, 32, kHopperCarveouts, 2), make(10, 3, 64, 32, kHopperCarveouts, 2),
      make(11, 0, 48, 24, kHopperCarveouts, 1), make(12, 0, 48, 24, kSmallCarveouts, 1),
      make(12, 1, 48, 24, kSmallCarveouts, 1),
  };
  return limits;
}

std::string cc_name(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

template <typename T>
T round_up(T value, T unit) {
  return (value + unit - 1) / unit * unit;
}

int registers_per_warp(const ArchLimits& arch, const KernelResources& kernel) {
  return round_up(kernel.registers * kWarpSize, arch.register_allocation_unit);
}

// Why a block of this shape cannot launch at all, or empty when it can.
std::string launch_failure(const ArchLimits& arch, const KernelResources& kernel, int block_threads,
                           int warps, std::size_t dynamic_smem_bytes,
                           std::size_t shared_per_block) {
  std::string cc = "CC " + cc_name(arch.cc_major, arch.cc_minor);
  std::string block = "a block of " + std::to_string(block_threads) + " threads";
  if (block_threads > arch.max_threads_per_block) {
    return block + " exceeds the " + std::to_string(arch.max_threads_per_block) +
           "-thread limit of " + cc;
  }
  if (kernel.max_threads_per_block > 0 && block_threads > kernel.max_threads_per_block) {
    return block + " exceeds " + kernel.name + "'s __launch_bounds__ of " +
           std::to_string(kernel.max_threads_per_block) + " threads";
  }
  if (kernel.registers > arch.max_registers_per_thread) {
    return kernel.name + " uses " + std::to_string(kernel.registers) +
           " registers per thread, over the " + std::to_string(arch.max_registers_per_thread) +
           " of " + cc;
  }
  // The hardware checks registers as if every sub-partition received the block's warps.
  int registers = registers_per_warp(arch, kernel) * round_up(warps, arch.register_sub_partitions);
  if (registers > arch.registers_per_block) {
    return block + " at " + std::to_string(kernel.registers) + " registers per thread needs " +
           std::to_string(registers) + " registers (warps allocated in groups of " +
           std::to_string(arch.register_sub_partitions) + "), over the " +
           std::to_string(arch.registers_per_block) + " per block of " + cc;
  }
  std::size_t limit = arch.shared_memory_per_block_optin + arch.reserved_shared_memory_per_block;
  if (shared_per_block > limit) {
    return block + " needs " + std::to_string(shared_per_block) +
           " bytes of shared memory (static " + std::to_string(kernel.static_shared_bytes) +
           " + dynamic " + std::to_string(dynamic_smem_bytes) + " + reserved " +
           std::to_string(arch.reserved_shared_memory_per_block) + ", rounded up to " +
           std::to_string(arch.shared_allocation_unit) + "), over the " + std::to_string(limit) +
           " per block of " + cc;
  }
  return {};
}

int blocks_by_registers(const ArchLimits& arch, const KernelResources& kernel, int warps) {
  int per_warp = registers_per_warp(arch, kernel);
  if (per_warp == 0) return kUnlimited;
  int warps_per_sub_partition = arch.registers_per_sm / arch.register_sub_partitions / per_warp;
  return warps_per_sub_partition * arch.register_sub_partitions / warps;
}

int blocks_by_barriers(const ArchLimits& arch, const KernelResources& kernel) {
  if (arch.barrier_sets_per_block_slot == 0 || kernel.barriers == 0) return kUnlimited;
  return arch.max_blocks_per_sm * arch.barrier_sets_per_block_slot / kernel.barriers;
}

std::size_t carveout_for(const ArchLimits& arch, std::size_t bytes) {
  auto fitting = std::find_if(arch.shared_carveouts.begin(), arch.shared_carveouts.end(),
                              [bytes](std::size_t carveout) { return carveout >= bytes; });
  return fitting == arch.shared_carveouts.end() ? arch.shared_memory_per_sm : *fitting;
}

}  // namespace

std::span<const ArchLimits> known_architectures() { return table(); }

const ArchLimits& arch_limits(int major, int minor) {
  for (const ArchLimits& limits : table()) {
    if (limits.cc_major == major && limits.cc_minor == minor) return limits;
  }
  std::string known;
  for (const ArchLimits& limits : table()) {
    known += (known.empty() ? "" : ", ") + cc_name(limits.cc_major, limits.cc_minor);
  }
  throw Error(ErrorKind::invalid_argument, "no occupancy limits for compute capability " +
                                               cc_name(major, minor) + "; known: " + known);
}

std::string_view to_string(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::warps:
      return "warps";
    case OccupancyLimit::registers:
      return "registers";
    case OccupancyLimit::shared_memory:
      return "shared_memory";
    case OccupancyLimit::blocks:
      return "blocks";
    case OccupancyLimit::barriers:
      return "barriers";
    case OccupancyLimit::none_fits:
      return "none_fits";
  }
  return "unknown";
}

Occupancy compute_occupancy(const ArchLimits& arch, const KernelResources& kernel,
                            int block_threads, std::size_t dynamic_smem_bytes) {
  if (block_threads <= 0) {
    throw Error(ErrorKind::invalid_argument,
                "occupancy of " + kernel.name + " asked for a block of " +
                    std::to_string(block_threads) + " threads; a block needs at least one");
  }
  Occupancy result;
  int warps = (block_threads + kWarpSize - 1) / kWarpSize;
  result.registers_per_block = registers_per_warp(arch, kernel) * warps;
  result.shared_bytes_per_block = round_up(
      kernel.static_shared_bytes + dynamic_smem_bytes + arch.reserved_shared_memory_per_block,
      arch.shared_allocation_unit);
  result.reason = launch_failure(arch, kernel, block_threads, warps, dynamic_smem_bytes,
                                 result.shared_bytes_per_block);
  if (!result.reason.empty()) return result;

  result.blocks_by_warps = arch.max_warps_per_sm / warps;
  result.blocks_by_registers = blocks_by_registers(arch, kernel, warps);
  result.blocks_by_shared_memory =
      result.shared_bytes_per_block == 0
          ? kUnlimited
          : static_cast<int>(arch.shared_memory_per_sm / result.shared_bytes_per_block);
  result.blocks_by_barriers = blocks_by_barriers(arch, kernel);
  const std::array<std::pair<OccupancyLimit, int>, 5> limits{{
      {OccupancyLimit::warps, result.blocks_by_warps},
      {OccupancyLimit::registers, result.blocks_by_registers},
      {OccupancyLimit::shared_memory, result.blocks_by_shared_memory},
      {OccupancyLimit::blocks, arch.max_blocks_per_sm},
      {OccupancyLimit::barriers, result.blocks_by_barriers},
  }};
  auto binding = std::min_element(limits.begin(), limits.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
  result.limit = binding->first;
  result.active_blocks_per_sm = binding->second;
  result.active_warps_per_sm = result.active_blocks_per_sm * warps;
  result.fraction = static_cast<double>(result.active_warps_per_sm) / arch.max_warps_per_sm;
  result.shared_carveout_bytes = carveout_for(
      arch, static_cast<std::size_t>(result.active_blocks_per_sm) * result.shared_bytes_per_block);
  return result;
}

long long co_resident_blocks(const Occupancy& occupancy, int sm_count) {
  return static_cast<long long>(occupancy.active_blocks_per_sm) * sm_count;
}

std::vector<int> gpc_sm_counts(const ArchLimits& arch, int sm_count) {
  if (arch.gpcs == 0)
    throw Error(ErrorKind::invalid_argument,
                "the cluster model does not know the GPCs of compute capability " +
                    cc_name(arch.cc_major, arch.cc_minor) + " (known: 9.0)");
  const int tpcs = sm_count / arch.sms_per_tpc;
  std::vector<int> sms(static_cast<std::size_t>(arch.gpcs));
  for (int gpc = 0; gpc < arch.gpcs; ++gpc)
    sms[static_cast<std::size_t>(gpc)] =
        (tpcs / arch.gpcs + (gpc < tpcs % arch.gpcs ? 1 : 0)) * arch.sms_per_tpc;
  sms.front() += sm_count % arch.sms_per_tpc;  // an odd SM out, in the largest GPC
  return sms;
}

int co_resident_clusters(const ArchLimits& arch, const Occupancy& occupancy, int cluster_blocks,
                         int sm_count) {
  if (cluster_blocks < 1 || cluster_blocks > static_cast<int>(max_cluster_blocks))
    throw Error(ErrorKind::invalid_argument, "a cluster of " + std::to_string(cluster_blocks) +
                                                 " blocks is outside 1.." +
                                                 std::to_string(max_cluster_blocks));
  // Measured on the H100 (driver 580): cuOccupancyMaxActiveClusters holds at most 8 blocks of a
  // cluster launch per SM, even where a plain launch of the same kernel holds 32 (32 threads, no
  // shared memory: 1056 clusters of one block on 132 SMs).
  constexpr int max_cluster_launch_blocks_per_sm = 8;
  const int blocks_per_sm =
      std::min(occupancy.active_blocks_per_sm, max_cluster_launch_blocks_per_sm);
  int clusters = 0;
  for (int sms : gpc_sm_counts(arch, sm_count)) clusters += blocks_per_sm * sms / cluster_blocks;
  return clusters;
}

}  // namespace ptxrt
