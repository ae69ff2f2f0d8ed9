// Prints what ptxrt makes of the driver this process sees, then what a device call says: run by
// the CPU tests under a changed LD_LIBRARY_PATH (a toolkit stub, no driver at all).
#include <cstdio>

#include "ptxrt/core/device.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"

int main() {
  const ptxrt::DriverStatus status = ptxrt::driver_status();
  std::printf("usable=%d devices=%d problem=%s\n", status.usable, status.device_count,
              status.problem.c_str());
  try {
    std::printf("device count %d\n", ptxrt::Device::count());
  } catch (const ptxrt::Error& error) {
    std::printf("Device::count threw %s: %s\n", std::string(to_string(error.kind())).c_str(),
                error.what());
  }
  return 0;
}
