#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>

#include "process.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"

using ptxrt::testing::run_process;

TEST_CASE("format_cuda_version turns the driver's integer into major.minor") {
  CHECK(ptxrt::format_cuda_version(13000) == "13.0");
  CHECK(ptxrt::format_cuda_version(12040) == "12.4");
}

TEST_CASE("with no driver, every entry point throws one clear error and nothing crashes") {
  // An empty library path hides any driver the machine has from the child process.
  const auto empty = std::filesystem::temp_directory_path() / ("ptxrt-no-driver-" + std::to_string(getpid()));
  std::filesystem::create_directories(empty);
  const auto result = run_process({PTXRT_DRIVER_PROBE_PATH},
                                  {"LD_LIBRARY_PATH=" + empty.string(), "LD_PRELOAD="});
  std::filesystem::remove_all(empty);
  if (result.output.find("usable=1") != std::string::npos) {
    MESSAGE("a driver is installed system-wide on this machine; no-driver case not reachable");
    return;
  }
  CHECK(result.exit_code == 0);
  CHECK(result.output.find("problem=no CUDA driver found (libcuda.so.1): ") != std::string::npos);
  CHECK(result.output.find("Device::count threw no_driver: no CUDA driver found (libcuda.so.1)") !=
        std::string::npos);
}

TEST_CASE("the toolkit's stub library is named as such, not as a failed driver call") {
  const std::filesystem::path stub =
      std::filesystem::path(PTXRT_CUDA_LIBRARY_DIR) / "stubs" / "libcuda.so";
  if (!std::filesystem::exists(stub)) {
    MESSAGE("no stub library at " << stub.string());
    return;
  }
  // The stub is libcuda.so; a folder where libcuda.so.1 points to it is what a misconfigured
  // LD_LIBRARY_PATH amounts to.
  const auto folder = std::filesystem::temp_directory_path() / ("ptxrt-stub-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::filesystem::create_symlink(stub, folder / "libcuda.so.1");
  const auto result = run_process({PTXRT_DRIVER_PROBE_PATH}, {"LD_LIBRARY_PATH=" + folder.string()});
  std::filesystem::remove_all(folder);
  if (result.output.find("usable=1") != std::string::npos) {
    MESSAGE("the real driver was loaded ahead of the stub (found through ld.so.cache)");
    return;
  }
  CHECK(result.output.find("stub library was loaded instead of a real driver "
                           "(CUDA_ERROR_STUB_LIBRARY)") != std::string::npos);
  CHECK(result.output.find("Device::count threw no_driver") != std::string::npos);
}

TEST_CASE("driver_status never throws and names the problem when unusable") {
  const ptxrt::DriverStatus status = ptxrt::driver_status();
  if (status.usable) {
    CHECK(status.device_count > 0);
    CHECK(status.problem.empty());
  } else {
    CHECK_FALSE(status.problem.empty());
    CHECK_THROWS_AS(ptxrt::Device::get(0), ptxrt::Error);
  }
}
