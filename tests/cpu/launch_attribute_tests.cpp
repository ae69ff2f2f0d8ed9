// The checks a launch with attributes makes before the driver sees it (clusters, cooperative,
// programmatic serialization, priority), and what the offline occupancy model says can be
// resident at once: the same functions the GPU launch path runs, with an H100's numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/occupancy.hpp"

using namespace ptxrt;

namespace {

LaunchAttributeLimits h100() {
  return {.device = 0,
          .cc_major = 9,
          .cc_minor = 0,
          .cluster_launch = true,
          .cooperative_launch = true,
          .lowest_priority = 0,
          .highest_priority = -5};
}

LaunchAttributeLimits a100() {
  LaunchAttributeLimits limits = h100();
  limits.cc_major = 8;
  limits.cluster_launch = false;
  return limits;
}

KernelResources kernel(int registers) {
  KernelResources resources;
  resources.name = std::string("k");  // GCC 12 misreads assigning the literal (-Wrestrict)
  resources.registers = registers;
  return resources;
}

const ArchLimits& hopper() { return arch_limits(9, 0); }

void check_attributes(const LaunchConfig& config, const LaunchAttributeLimits& limits = h100()) {
  check_launch_attributes(config, limits, "kernel 'k'");
}

}  // namespace

TEST_CASE("a cluster that divides the grid within the portable size passes") {
  CHECK_NOTHROW(check_attributes({.grid = {64, 2}, .block = 256, .cluster = Dim3{8}}));
  CHECK_NOTHROW(check_attributes({.grid = {6, 4, 2}, .block = 128, .cluster = Dim3{2, 2, 2}}));
}

TEST_CASE("a cluster that does not divide the grid is refused naming the axis") {
  CHECK_THROWS_WITH_AS(check_attributes({.grid = 10, .block = 256, .cluster = Dim3{4}}),
                       "kernel 'k': cluster 4x1x1 does not divide grid 10x1x1: x = 10 is not a "
                       "multiple of 4",
                       Error);
  CHECK_THROWS_WITH_AS(check_attributes({.grid = {8, 3}, .block = 256, .cluster = Dim3{2, 2}}),
                       "kernel 'k': cluster 2x2x1 does not divide grid 8x3x1: y = 3 is not a "
                       "multiple of 2",
                       Error);
}

TEST_CASE("a cluster over the portable 8 blocks needs the kernel's opt-in, and 16 is the most") {
  const LaunchConfig sixteen{.grid = {8, 8}, .block = 128, .cluster = Dim3{4, 4}};
  CHECK_THROWS_WITH_AS(check_attributes(sixteen),
                       "kernel 'k': cluster 4x4x1 = 16 blocks exceeds the portable maximum of 8 "
                       "blocks; opt the kernel in to non-portable sizes first "
                       "(Kernel::allow_non_portable_cluster_size)",
                       Error);
  LaunchAttributeLimits opted_in = h100();
  opted_in.non_portable_cluster_size_allowed = true;
  CHECK_NOTHROW(check_attributes(sixteen, opted_in));
  CHECK_THROWS_WITH_AS(
      check_attributes({.grid = 64, .block = 128, .cluster = Dim3{32}}, opted_in),
      "kernel 'k': cluster 32x1x1 = 32 blocks exceeds the maximum of 16 blocks per cluster", Error);
}

TEST_CASE("a cluster on a device without clusters names the device and what it needs") {
  CHECK_THROWS_WITH_AS(check_attributes({.grid = 8, .block = 128, .cluster = Dim3{2}}, a100()),
                       "kernel 'k': cluster 2x1x1 needs thread-block clusters, which device 0 "
                       "(compute capability 8.0) lacks: they need 9.0 or newer",
                       Error);
}

TEST_CASE("a cluster with an empty dimension is refused before any division") {
  CHECK_THROWS_WITH_AS(check_attributes({.grid = 8, .block = 128, .cluster = Dim3{2, 0}}),
                       "kernel 'k': cluster 2x0x1 has an empty dimension (every dimension must "
                       "be at least 1)",
                       Error);
}

TEST_CASE("a kernel's __cluster_dims__ must match the launch's cluster and divide its grid") {
  LaunchAttributeLimits compiled = h100();
  compiled.compiled_cluster = Dim3{2};
  CHECK_THROWS_WITH_AS(
      check_attributes({.grid = 8, .block = 128, .cluster = Dim3{4}}, compiled),
      "kernel 'k': cluster 4x1x1 differs from the 2x1x1 the kernel was compiled with "
      "(__cluster_dims__)",
      Error);
  CHECK_THROWS_WITH_AS(check_attributes({.grid = 7, .block = 128}, compiled),
                       "kernel 'k': cluster 2x1x1 does not divide grid 7x1x1: x = 7 is not a "
                       "multiple of 2",
                       Error);
  CHECK_NOTHROW(check_attributes({.grid = 8, .block = 128}, compiled));
  CHECK(launch_cluster({.grid = 8, .block = 128}, compiled)->x == 2);
  CHECK_FALSE(launch_cluster({.grid = 8, .block = 128}, h100()).has_value());
}

TEST_CASE("cooperative, programmatic and priority attributes are checked against the device") {
  LaunchAttributeLimits no_cooperative = a100();
  no_cooperative.cooperative_launch = false;
  CHECK_THROWS_WITH_AS(
      check_attributes({.grid = 8, .block = 128, .cooperative = true}, no_cooperative),
      "kernel 'k': device 0 does not support cooperative launches "
      "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 0)",
      Error);
  CHECK_THROWS_WITH_AS(
      check_attributes({.grid = 8, .block = 128, .programmatic_serialization = true}, a100()),
      "kernel 'k': programmatic stream serialization needs compute capability 9.0 or newer; "
      "device 0 is 8.0",
      Error);
  CHECK_NOTHROW(check_attributes({.grid = 8, .block = 128, .programmatic_serialization = true}));
  CHECK_THROWS_WITH_AS(check_attributes({.grid = 8, .block = 128, .priority = 1}),
                       "kernel 'k': priority 1 is outside the device's range -5 (highest) to 0 "
                       "(lowest)",
                       Error);
  CHECK_THROWS_WITH_AS(check_attributes({.grid = 8, .block = 128, .priority = -6}),
                       doctest::Contains("priority -6 is outside"), Error);
  CHECK_NOTHROW(check_attributes({.grid = 8, .block = 128, .priority = -5}));
}

TEST_CASE("a launch config says whether it has attributes") {
  CHECK_FALSE(LaunchConfig{.grid = 1, .block = 32}.has_attributes());
  CHECK(LaunchConfig{.grid = 1, .block = 32, .cluster = Dim3{1}}.has_attributes());
  CHECK(LaunchConfig{.grid = 1, .block = 32, .cooperative = true}.has_attributes());
  CHECK(LaunchConfig{.grid = 1, .block = 32, .priority = 0}.has_attributes());
}

TEST_CASE("a cooperative grid is limited to the blocks the offline model finds co-resident") {
  // 256 threads at 32 registers: 8 blocks per SM, 132 SMs.
  const Occupancy occupancy = compute_occupancy(hopper(), kernel(32), 256, 0);
  CHECK(co_resident_blocks(occupancy, 132) == 1056);
  const LaunchResidency residency{.sm_count = 132,
                                  .active_blocks_per_sm = occupancy.active_blocks_per_sm};
  CHECK_NOTHROW(check_launch_residency({.grid = 1056, .block = 256, .cooperative = true},
                                       std::nullopt, residency, "kernel 'k'"));
  CHECK_NOTHROW(check_launch_residency({.grid = {33, 32}, .block = 256, .cooperative = true},
                                       std::nullopt, residency, "kernel 'k'"));
  CHECK_THROWS_WITH_AS(
      check_launch_residency({.grid = {33, 33}, .block = 256, .cooperative = true}, std::nullopt,
                             residency, "kernel 'k'"),
      "kernel 'k': cooperative grid 33x33x1 = 1089 blocks exceeds the 1056 blocks that can be "
      "resident at once (8 blocks of 256x1x1 per SM x 132 SMs)",
      Error);
  // The same grid without the attribute is an ordinary launch: nothing must be co-resident.
  CHECK_NOTHROW(check_launch_residency({.grid = 100000, .block = 256}, std::nullopt, residency,
                                       "kernel 'k'"));
}

TEST_CASE("a cooperative grid of 1057 blocks of 256 threads does not fit an H100") {
  const Occupancy occupancy = compute_occupancy(hopper(), kernel(32), 256, 0);
  CHECK_THROWS_WITH_AS(
      check_launch_residency(
          {.grid = 1057, .block = 256, .cooperative = true}, std::nullopt,
          {.sm_count = 132, .active_blocks_per_sm = occupancy.active_blocks_per_sm}, "kernel 'k'"),
      "kernel 'k': cooperative grid 1057x1x1 = 1057 blocks exceeds the 1056 blocks that can be "
      "resident at once (8 blocks of 256x1x1 per SM x 132 SMs)",
      Error);
}

TEST_CASE("a cluster launch needs one resident cluster, a cooperative one all of its clusters") {
  const LaunchResidency none{.sm_count = 132, .active_clusters = 0};
  CHECK_THROWS_WITH_AS(
      check_launch_residency(
          {.grid = 16, .block = 1024, .dynamic_shared_bytes = 200000, .cluster = Dim3{8}}, Dim3{8},
          none, "kernel 'k'"),
      "kernel 'k': no cluster of 8x1x1 blocks (block 1024x1x1, 200000 bytes of dynamic shared "
      "memory each) can be resident at once (cuOccupancyMaxActiveClusters = 0)",
      Error);
  const LaunchResidency sixteen{.sm_count = 132, .active_clusters = 16};
  CHECK_NOTHROW(
      check_launch_residency({.grid = 128, .block = 1024, .cluster = Dim3{8}, .cooperative = true},
                             Dim3{8}, sixteen, "kernel 'k'"));
  CHECK_THROWS_WITH_AS(
      check_launch_residency({.grid = 136, .block = 1024, .cluster = Dim3{8}, .cooperative = true},
                             Dim3{8}, sixteen, "kernel 'k'"),
      "kernel 'k': cooperative grid 136x1x1 = 136 blocks exceeds the 128 blocks that can be "
      "resident at once (16 clusters of 8x1x1 blocks)",
      Error);
}

TEST_CASE("the cluster model spreads an H100's TPCs over its 8 GPCs") {
  CHECK(gpc_sm_counts(hopper(), 132) == std::vector<int>{18, 18, 16, 16, 16, 16, 16, 16});
  CHECK(gpc_sm_counts(hopper(), 114) == std::vector<int>{16, 14, 14, 14, 14, 14, 14, 14});
  CHECK_THROWS_WITH_AS(gpc_sm_counts(arch_limits(8, 0), 108),
                       "the cluster model does not know the GPCs of compute capability 8.0 "
                       "(known: 9.0)",
                       Error);
}

TEST_CASE("clusters resident at once: each GPC holds its block slots over the cluster size") {
  // 1024 threads at 32 registers: 2 blocks per SM (64 warps).
  const Occupancy two_per_sm = compute_occupancy(hopper(), kernel(32), 1024, 0);
  REQUIRE(two_per_sm.active_blocks_per_sm == 2);
  CHECK(co_resident_clusters(hopper(), two_per_sm, 1, 132) == 264);
  CHECK(co_resident_clusters(hopper(), two_per_sm, 2, 132) == 132);
  // 36 slots in an 18-SM GPC hold 4 clusters of 8, 32 slots in a 16-SM GPC hold 4.
  CHECK(co_resident_clusters(hopper(), two_per_sm, 8, 132) == 32);
  // 36 / 16 = 2, 32 / 16 = 2.
  CHECK(co_resident_clusters(hopper(), two_per_sm, 16, 132) == 16);
  // 200 KB of shared memory: one block per SM; a cluster of 16 fits once in each GPC.
  const Occupancy one_per_sm = compute_occupancy(hopper(), kernel(32), 1024, 200 * 1024);
  REQUIRE(one_per_sm.active_blocks_per_sm == 1);
  CHECK(co_resident_clusters(hopper(), one_per_sm, 16, 132) == 8);
  CHECK(co_resident_clusters(hopper(), one_per_sm, 16, 114) == 1);
  // 32 threads: a plain launch holds 32 blocks per SM, a cluster launch 8 (the driver's count).
  const Occupancy thirty_two_per_sm = compute_occupancy(hopper(), kernel(32), 32, 0);
  REQUIRE(thirty_two_per_sm.active_blocks_per_sm == 32);
  CHECK(co_resident_clusters(hopper(), thirty_two_per_sm, 1, 132) == 1056);
  CHECK(co_resident_clusters(hopper(), thirty_two_per_sm, 2, 132) == 528);
  CHECK_THROWS_WITH_AS(co_resident_clusters(hopper(), one_per_sm, 17, 132),
                       "a cluster of 17 blocks is outside 1..16", Error);
}
