#include <doctest/doctest.h>

#include "jit/nvrtc_check.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/error.hpp"

using namespace ptxrt;

TEST_CASE("an NVRTC failure names the call, the result and what was being done") {
  try {
    check(NVRTC_ERROR_INVALID_OPTION, "nvrtcCompileProgram", "compiling matmul_tiled.cu");
    FAIL("check did not throw");
  } catch (const Error& error) {
    CHECK(std::string(error.what()) ==
          "nvrtcCompileProgram failed: NVRTC_ERROR_INVALID_OPTION while compiling "
          "matmul_tiled.cu");
    CHECK(error.kind() == ErrorKind::nvrtc);
    CHECK(error.call() == "nvrtcCompileProgram");
    CHECK(error.code() == NVRTC_ERROR_INVALID_OPTION);
    CHECK(error.context() == "compiling matmul_tiled.cu");
  }
}

TEST_CASE("illegal-address results are sticky, invalid-value results are not") {
  CHECK(is_sticky_result(CUDA_ERROR_ILLEGAL_ADDRESS));
  CHECK(is_sticky_result(CUDA_ERROR_LAUNCH_FAILED));
  CHECK_FALSE(is_sticky_result(CUDA_ERROR_INVALID_VALUE));
  CHECK_FALSE(is_sticky_result(CUDA_ERROR_OUT_OF_MEMORY));
}

TEST_CASE("a driver failure names the call and code, and flags sticky errors") {
  try {
    check(CUDA_ERROR_ILLEGAL_ADDRESS, "cuCtxSynchronize", "waiting for 'fault'");
    FAIL("check did not throw");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK(message.rfind("cuCtxSynchronize failed: ", 0) == 0);
    CHECK(message.find("while waiting for 'fault'") != std::string::npos);
    CHECK(message.find("sticky error: the context is now unusable") != std::string::npos);
    CHECK(error.is_sticky());
    CHECK(error.code() == CUDA_ERROR_ILLEGAL_ADDRESS);
  }
}

TEST_CASE("device properties format as a table with derived bandwidth") {
  DeviceProperties p;
  p.name = "NVIDIA H100 80GB HBM3";
  p.pci_bus_id = "00000000:65:00.0";
  p.cc_major = 9;
  p.cc_minor = 0;
  p.sm_count = 132;
  p.memory_clock_khz = 2619000;
  p.memory_bus_width_bits = 5120;
  p.driver_version = 13000;
  p.cooperative_launch = true;
  p.cluster_launch = true;
  p.managed_memory = true;
  p.memory_pools = true;
  CHECK(p.arch() == "sm_90");
  CHECK(p.compute_capability() == "9.0");
  CHECK(p.theoretical_bandwidth_gb_per_s() == doctest::Approx(3352.32));
  const std::string table = format_properties(p);
  CHECK(table.find("device 0: NVIDIA H100 80GB HBM3\n  PCI bus id:                00000000:65:00.0\n") !=
        std::string::npos);
  CHECK(table.find("compute capability:        9.0 (sm_90)") != std::string::npos);
  CHECK(table.find("3352 GB/s theoretical") != std::string::npos);
  CHECK(table.find("driver:                    CUDA 13.0") != std::string::npos);
  CHECK(table.find("launches:                  cooperative yes, clusters yes\n") !=
        std::string::npos);
  CHECK(table.find("memory kinds:              managed yes, pools yes\n") != std::string::npos);
}
