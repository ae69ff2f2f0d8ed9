// Internal: what a tune observes of a GPU through NVML (energy, SM clock, temperature), with
// libnvidia-ml opened at run time as libcuda is, so that ptxrt loads and tunes without it while
// nothing asks for power. ptxrt only reads: it never sets clocks or power limits.
//
// Thread safety: an NvmlDevice is immutable; NVML's queries may come from any thread.
#pragma once

#include <string_view>

#include "ptxrt/core/device.hpp"

struct nvmlDevice_st;

namespace ptxrt::detail {

// Loads and starts NVML once per process. Throws Error (no_driver) naming `user` (the flag or
// field that asked for power) when libnvidia-ml.so.1 is missing or NVML does not start.
void require_nvml(std::string_view user);

class NvmlDevice {
 public:
  // NVML's view of `device`, matched by its PCI domain, bus and device (CUDA_VISIBLE_DEVICES
  // renumbers CUDA's ordinals, not the bus). Throws as require_nvml, and Error (driver) naming
  // `user` when NVML does not see the device or cannot read its energy counter.
  NvmlDevice(const Device& device, std::string_view user);

  // The energy the GPU used since the driver loaded, in joules.
  double energy_j() const;
  double sm_clock_mhz() const;
  double temperature_c() const;

 private:
  nvmlDevice_st* handle_ = nullptr;
};

}  // namespace ptxrt::detail
