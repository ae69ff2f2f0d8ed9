// The launch checks as pure functions of a recorded parameter layout and device limits: the
// same code the GPU launch path runs, exercised without a GPU.
#include <doctest/doctest.h>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/kernel.hpp"

using namespace ptxrt;

namespace {

// matmul(const float*, const float*, float*, int, int, int) as cuFuncGetParamInfo reports it.
const std::vector<ParameterInfo> matmul_layout = {{0, 8}, {8, 8}, {16, 8}, {24, 4}, {28, 4},
                                                  {32, 4}};

template <typename... Args>
void check_with(const Args&...) {
  check_arguments_against_layout(matmul_layout, detail::SignatureOf<Args...>::value,
                                 "kernel 'matmul'");
}

LaunchLimits h100_limits(int kernel_max_threads = 1024, int static_shared = 0) {
  LaunchLimits limits;
  limits.max_block_dim = {1024, 1024, 64};
  limits.max_grid_dim = {2147483647, 65535, 65535};
  limits.max_threads_per_block = kernel_max_threads;
  limits.static_shared_bytes = static_shared;
  limits.shared_memory_per_block_optin = 232448;
  return limits;
}

}  // namespace

TEST_CASE("arguments matching the layout pass, pointers and buffers alike") {
  CUdeviceptr a = 0, b = 0, c = 0;
  CHECK_NOTHROW(check_with(a, b, c, 1, 2, 3));
  float* pointer = nullptr;
  CHECK_NOTHROW(check_with(pointer, pointer, pointer, 1u, 2, 3));
}

TEST_CASE("a wrong argument count is rejected with both counts") {
  CUdeviceptr a = 0;
  CHECK_THROWS_WITH_AS(check_with(a, a, a, 1, 2),
                       "kernel 'matmul': takes 6 argument(s), but 5 were given", Error);
}

TEST_CASE("a wrong argument size names the position, both sizes and the C++ type") {
  CUdeviceptr a = 0;
  CHECK_THROWS_WITH_AS(check_with(a, a, a, 1, 2, 3.0),
                       "kernel 'matmul': argument 5 is 4 bytes in the kernel, but a 8-byte double "
                       "was given",
                       Error);
  CHECK_THROWS_WITH_AS(check_with(a, 1, a, 1, 2, 3),
                       "kernel 'matmul': argument 1 is 8 bytes in the kernel, but a 4-byte int was "
                       "given",
                       Error);
}

TEST_CASE("buffers become device pointers in the argument list") {
  using Converted = decltype(detail::kernel_argument(std::declval<const DeviceBuffer<float>&>()));
  CHECK(std::is_same_v<Converted, CUdeviceptr>);
}

TEST_CASE("a 2048-thread block exceeds the kernel's limit") {
  CHECK_THROWS_WITH_AS(check_launch_geometry({.grid = 1, .block = {64, 32}}, h100_limits(), "k"),
                       "k: block 64x32x1 = 2048 threads exceeds the kernel's max 1024 threads per "
                       "block",
                       Error);
  CHECK_THROWS_WITH_AS(check_launch_geometry({.grid = 1, .block = 512}, h100_limits(256), "k"),
                       "k: block 512x1x1 = 512 threads exceeds the kernel's max 256 threads per "
                       "block",
                       Error);
}

TEST_CASE("block and grid dimensions are checked per axis") {
  CHECK_THROWS_WITH_AS(check_launch_geometry({.grid = 1, .block = {1, 1, 128}}, h100_limits(), "k"),
                       "k: block 1x1x128 has z = 128, over the device's max 64", Error);
  CHECK_THROWS_WITH_AS(check_launch_geometry({.grid = {1, 70000}, .block = 32}, h100_limits(), "k"),
                       "k: grid 1x70000x1 has y = 70000, over the device's max 65535", Error);
  CHECK_THROWS_WITH_AS(check_launch_geometry({.grid = 0, .block = 32}, h100_limits(), "k"),
                       doctest::Contains("has an empty dimension"), Error);
  CHECK_NOTHROW(check_launch_geometry({.grid = {100000, 2}, .block = {32, 32}}, h100_limits(), "k"));
}

TEST_CASE("dynamic shared memory is limited to the opt-in maximum less static memory") {
  CHECK_NOTHROW(check_launch_geometry({.grid = 1, .block = 32, .dynamic_shared_bytes = 232448},
                                      h100_limits(), "k"));
  CHECK_THROWS_WITH_AS(
      check_launch_geometry({.grid = 1, .block = 32, .dynamic_shared_bytes = 232448},
                            h100_limits(1024, 8192), "k"),
      "k: 232448 bytes of dynamic shared memory exceed the 224256 bytes available (opt-in limit "
      "232448 minus 8192 static)",
      Error);
}

TEST_CASE("blocks_for covers any count") {
  CHECK(blocks_for(1, 256) == 1);
  CHECK(blocks_for(256, 256) == 1);
  CHECK(blocks_for(257, 256) == 2);
  CHECK(blocks_for(0, 256) == 0);
}
