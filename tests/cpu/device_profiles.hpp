// Devices as the driver would report them, for the tests of choices made without a GPU (the
// SGEMM configs, heuristic and tuning space).
#pragma once

#include "ptxrt/core/device.hpp"

namespace ptxrt::testing {

// An H100 SXM: 132 SMs, 227 KiB of shared memory per block at most.
inline DeviceProperties h100() {
  DeviceProperties device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.cc_major = 9;
  device.sm_count = 132;
  device.shared_memory_per_block = 48 * 1024;
  device.shared_memory_per_block_optin = 227 * 1024;
  device.shared_memory_per_sm = 228 * 1024;
  device.registers_per_block = 65536;
  device.registers_per_sm = 65536;
  device.max_threads_per_block = 1024;
  device.max_threads_per_sm = 2048;
  device.max_blocks_per_sm = 32;
  device.max_block_dim = {1024, 1024, 64};
  device.max_grid_dim = {2147483647, 65535, 65535};
  device.warp_size = 32;
  device.memory_clock_khz = 2619000;  // HBM3: 3.35 TB/s in all
  device.memory_bus_width_bits = 5120;
  return device;
}

// An H200: the H100's chip with faster memory (what the SGEMM heuristic was fitted on).
inline DeviceProperties h200() {
  DeviceProperties device = h100();
  device.name = "NVIDIA H200";
  device.memory_clock_khz = 3134313;  // HBM3e: 4.81 TB/s in all, as an H200 reports it
  device.memory_bus_width_bits = 6144;
  return device;
}

// A Turing card: 64 KiB of shared memory per block at most, 1024 threads per SM.
inline DeviceProperties turing() {
  DeviceProperties device = h100();
  device.name = "Tesla T4";
  device.cc_major = 7;
  device.cc_minor = 5;
  device.sm_count = 40;
  device.shared_memory_per_block_optin = 64 * 1024;
  device.shared_memory_per_sm = 64 * 1024;
  device.max_threads_per_sm = 1024;
  return device;
}

}  // namespace ptxrt::testing
