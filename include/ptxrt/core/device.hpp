// A CUDA device and what it can do. Thread safety: Device is an immutable value; share it freely.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <string>

#include "ptxrt/export.hpp"

namespace ptxrt {

// What a device reports. These names are the ones every limit has in ptxrt (ArchLimits, the
// occupancy model, LaunchLimits, the tuner's device model and the CLI's JSON use them too), as
// cudaDeviceProp users know them; every byte count is a std::size_t.
struct PTXRT_API DeviceProperties {
  int ordinal = 0;
  std::string name;
  // Where the device sits on PCI, as nvidia-smi and NVML write it ("00000000:65:00.0"): what
  // matches a CUDA ordinal to the device in NVML and other tools, whose ordinals may differ.
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t l2_cache_bytes = 0;
  std::size_t shared_memory_per_block = 0;        // without opting in (48 KiB)
  std::size_t shared_memory_per_block_optin = 0;  // the most a kernel may opt in to
  std::size_t shared_memory_per_sm = 0;
  std::size_t reserved_shared_memory_per_block = 0;
  int registers_per_block = 0;
  int registers_per_sm = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int warp_size = 0;
  std::array<int, 3> max_block_dim{};
  std::array<int, 3> max_grid_dim{};
  int clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int driver_version = 0;
  // What the device can launch and allocate (the launch attributes and memory kinds check them).
  bool cooperative_launch = false;         // grid-wide sync through a cooperative launch
  bool cluster_launch = false;             // thread-block clusters (CC 9.0 and newer)
  bool managed_memory = false;             // cuMemAllocManaged
  bool concurrent_managed_access = false;  // host and device touch managed memory at once; prefetch
  bool memory_pools = false;               // cuMemAllocAsync and memory pools

  std::string compute_capability() const;  // "9.0"
  std::string arch() const;                // "sm_90"
  // Peak DRAM bandwidth the clock and bus imply: 2 transfers per clock (DDR) × bus width.
  double theoretical_bandwidth_gb_per_s() const;
};

// A human-readable table of the properties, one "name: value" line each.
PTXRT_API std::string format_properties(const DeviceProperties& properties);

class PTXRT_API Device {
 public:
  // Number of devices the driver sees. Throws Error(no_driver|no_device) when there are none.
  static int count();
  // Throws Error(invalid_argument) for an ordinal out of range, naming the count.
  static Device get(int ordinal);

  int ordinal() const noexcept { return properties_.ordinal; }
  CUdevice handle() const noexcept { return handle_; }
  const DeviceProperties& properties() const noexcept { return properties_; }

 private:
  Device(CUdevice handle, DeviceProperties properties)
      : handle_(handle), properties_(std::move(properties)) {}
  CUdevice handle_;
  DeviceProperties properties_;
};

}  // namespace ptxrt
