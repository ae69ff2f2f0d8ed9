// The split matmul on every visible GPU (one is enough): bitwise equal to one device's result,
// and to the CPU within the reference's bound.
#include <doctest/doctest.h>

#include <cstring>

#include "gpu_fixture.hpp"
#include "host/multi_gpu.hpp"
#include "host/reference.hpp"

using namespace ptxrt;
using ptxrt::testing::random_floats;

TEST_CASE("a matmul split over every device equals one device's result bit for bit") {
  const std::size_t m = 301, n = 203, k = 157;  // no multiple of any tile
  const auto a = random_floats(m * k, 71), b = random_floats(k * n, 72);
  Jit& jit = ptxrt::testing::test_jit();
  const std::vector<int> devices = host::all_devices();
  MESSAGE("splitting over " << devices.size() << " device(s)");

  const host::MultiGpuMatmul one = host::split_matmul(jit, a, b, m, n, k, {{0}, 16});
  const host::MultiGpuMatmul all = host::split_matmul(jit, a, b, m, n, k, {devices, 16});
  REQUIRE(one.c.size() == m * n);
  REQUIRE(all.c.size() == m * n);
  CHECK(std::memcmp(one.c.data(), all.c.data(), m * n * sizeof(float)) == 0);
  // k·2^-24 relative to max|C| is the bound for a float dot product of length k.
  CHECK(host::max_relative_error(all.c, host::matmul(a, b, m, n, k)) <= 1e-5);

  REQUIRE(all.shares.size() == devices.size());
  std::size_t covered = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    CHECK(all.shares[i].device == devices[i]);
    CHECK(all.shares[i].rows.first == covered);
    covered += all.shares[i].rows.count;
    if (all.shares[i].rows.count > 0) CHECK(all.shares[i].kernel_ms > 0);
  }
  CHECK(covered == m);
  CHECK(all.wall_ms > 0);
}

TEST_CASE("split_matmul refuses a device listed twice and inputs of the wrong size") {
  const std::vector<float> square(16, 1.0f);
  Jit& jit = ptxrt::testing::test_jit();
  CHECK_THROWS_WITH_AS(host::split_matmul(jit, square, square, 4, 4, 4, {{0, 0}, 16}),
                       doctest::Contains("device 0 is listed twice"), Error);
  CHECK_THROWS_WITH_AS(host::split_matmul(jit, square, square, 4, 5, 4, {{0}, 16}),
                       doctest::Contains("B holds 16 floats, but its dimensions make 20"), Error);
}
