// Facts about the CUDA driver, for programs that want to know before they ask for a device.
#pragma once

#include <string>

#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API DriverStatus {
  bool usable = false;  // a driver loaded, initialised, and at least one device present
  int version = 0;      // cuDriverGetVersion (13000 = CUDA 13.0); 0 when none loaded
  int device_count = 0;
  std::string problem;   // why it is not usable ("no CUDA driver found (libcuda.so.1): ...")
};

// Never throws: the status of the driver this process sees. Thread-safe; loads it on first use.
PTXRT_API DriverStatus driver_status();

// "13.0" from 13000.
PTXRT_API std::string format_cuda_version(int version);

}  // namespace ptxrt
