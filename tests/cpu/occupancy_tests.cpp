// Occupancy from the architecture table, against numbers worked out by hand from the occupancy
// calculator's rules (CC 9.0 is an H100: 64 warps, 32 blocks, 64K registers, 228 KB shared).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/occupancy.hpp"

namespace {

ptxrt::KernelResources kernel(int registers, std::size_t static_shared_bytes = 0) {
  ptxrt::KernelResources resources;
  resources.name = std::string("k");
  resources.registers = registers;
  resources.static_shared_bytes = static_shared_bytes;
  return resources;
}

const ptxrt::ArchLimits& hopper() { return ptxrt::arch_limits(9, 0); }

}  // namespace

TEST_CASE("the CC 9.0 table matches an H100") {
  const auto& arch = hopper();
  CHECK(arch.max_warps_per_sm == 64);
  CHECK(arch.max_blocks_per_sm == 32);
  CHECK(arch.registers_per_sm == 65536);
  CHECK(arch.shared_memory_per_sm == 228 * 1024);
  CHECK(arch.shared_memory_per_block_optin == 227 * 1024);
  CHECK(arch.reserved_shared_memory_per_block == 1024);
  CHECK(arch.shared_carveouts.size() == 10);
}

TEST_CASE("256 threads at 32 registers fill a CC 9.0 SM with 8 blocks, limited by warps") {
  auto result = ptxrt::compute_occupancy(hopper(), kernel(32), 256, 0);
  CHECK(result.active_blocks_per_sm == 8);
  CHECK(result.active_warps_per_sm == 64);
  CHECK(result.fraction == 1.0);
  CHECK(result.limit == ptxrt::OccupancyLimit::warps);
  CHECK(result.blocks_by_registers == 8);  // a tie: warps is reported
  CHECK(result.registers_per_block == 8192);
  CHECK(result.shared_bytes_per_block == 1024);  // the system's reserve alone
  CHECK(result.shared_carveout_bytes == 8 * 1024);
  CHECK(result.reason.empty());
}

TEST_CASE("128 registers per thread leave room for 2 blocks of 256 threads") {
  auto result = ptxrt::compute_occupancy(hopper(), kernel(128), 256, 0);
  CHECK(result.active_blocks_per_sm == 2);
  CHECK(result.active_warps_per_sm == 16);
  CHECK(result.fraction == 0.25);
  CHECK(result.limit == ptxrt::OccupancyLimit::registers);
}

TEST_CASE("registers are allocated per warp in units of 256") {
  // 37 x 32 = 1184 rounds up to 1280 per warp; a sub-partition's 16384 hold 12 such warps.
  auto result = ptxrt::compute_occupancy(hopper(), kernel(37), 128, 0);
  CHECK(result.registers_per_block == 1280 * 4);
  CHECK(result.blocks_by_registers == 12);
  CHECK(result.active_blocks_per_sm == 12);
  CHECK(result.fraction == 0.75);
  CHECK(result.limit == ptxrt::OccupancyLimit::registers);
}

TEST_CASE("48 KB of dynamic shared memory per block allows 4 blocks on CC 9.0") {
  // 48 KB + 1 KB reserved = 50176 bytes; 233472 / 50176 = 4.65.
  auto result = ptxrt::compute_occupancy(hopper(), kernel(32), 256, 48 * 1024);
  CHECK(result.shared_bytes_per_block == 50176);
  CHECK(result.active_blocks_per_sm == 4);
  CHECK(result.active_warps_per_sm == 32);
  CHECK(result.fraction == 0.5);
  CHECK(result.limit == ptxrt::OccupancyLimit::shared_memory);
  CHECK(result.shared_carveout_bytes == 196 * 1024);  // 4 x 50176 is exactly 196 KB
}

TEST_CASE("static shared memory and the allocation unit count toward the shared limit") {
  // 100 static + 20000 dynamic + 1024 reserved = 21124, rounded to 128: 21248; 233472 / 21248 = 10.
  auto result = ptxrt::compute_occupancy(hopper(), kernel(16, 100), 64, 20000);
  CHECK(result.shared_bytes_per_block == 21248);
  CHECK(result.active_blocks_per_sm == 10);
  CHECK(result.limit == ptxrt::OccupancyLimit::shared_memory);
}

TEST_CASE("small blocks are limited by the 32 blocks an SM can hold") {
  auto result = ptxrt::compute_occupancy(hopper(), kernel(16), 32, 0);
  CHECK(result.active_blocks_per_sm == 32);
  CHECK(result.active_warps_per_sm == 32);
  CHECK(result.fraction == 0.5);
  CHECK(result.limit == ptxrt::OccupancyLimit::blocks);
}

TEST_CASE("on CC 9.0 a kernel using 4 named barriers fits 16 blocks") {
  auto resources = kernel(16);
  resources.barriers = 4;
  auto result = ptxrt::compute_occupancy(hopper(), resources, 32, 0);
  CHECK(result.blocks_by_barriers == 16);
  CHECK(result.active_blocks_per_sm == 16);
  CHECK(result.limit == ptxrt::OccupancyLimit::barriers);
}

TEST_CASE("a 2048-thread block does not fit") {
  auto result = ptxrt::compute_occupancy(hopper(), kernel(32), 2048, 0);
  CHECK(result.limit == ptxrt::OccupancyLimit::none_fits);
  CHECK(result.active_blocks_per_sm == 0);
  CHECK(result.fraction == 0.0);
  CHECK(result.reason == "a block of 2048 threads exceeds the 1024-thread limit of CC 9.0");
}

TEST_CASE("a block larger than the kernel's __launch_bounds__ does not fit") {
  auto resources = kernel(32);
  resources.max_threads_per_block = 256;
  auto result = ptxrt::compute_occupancy(hopper(), resources, 512, 0);
  CHECK(result.limit == ptxrt::OccupancyLimit::none_fits);
  CHECK(result.reason == "a block of 512 threads exceeds k's __launch_bounds__ of 256 threads");
}

TEST_CASE("a 1024-thread block at 255 registers per thread does not fit the register file") {
  auto result = ptxrt::compute_occupancy(hopper(), kernel(255), 1024, 0);
  CHECK(result.limit == ptxrt::OccupancyLimit::none_fits);
  CHECK(result.reason.find("needs 262144 registers") != std::string::npos);
}

TEST_CASE("a block may use exactly the opt-in shared memory limit, and not a byte more") {
  auto at_limit = ptxrt::compute_occupancy(hopper(), kernel(32), 128, 227 * 1024);
  CHECK(at_limit.active_blocks_per_sm == 1);
  CHECK(at_limit.shared_carveout_bytes == 228 * 1024);
  auto over = ptxrt::compute_occupancy(hopper(), kernel(32), 128, 227 * 1024 + 1);
  CHECK(over.limit == ptxrt::OccupancyLimit::none_fits);
  CHECK(over.reason ==
        "a block of 128 threads needs 233600 bytes of shared memory (static 0 + dynamic 232449 "
        "+ reserved 1024, rounded up to 128), over the 233472 per block of CC 9.0");
}

TEST_CASE("CC 8.6 holds 48 warps, so 256-thread blocks stop at 6") {
  auto result = ptxrt::compute_occupancy(ptxrt::arch_limits(8, 6), kernel(32), 256, 0);
  CHECK(result.active_blocks_per_sm == 6);
  CHECK(result.active_warps_per_sm == 48);
  CHECK(result.fraction == 1.0);
  CHECK(result.limit == ptxrt::OccupancyLimit::warps);
}

TEST_CASE("CC 7.5 reserves no shared memory per block and allocates it in 256-byte units") {
  const auto& turing = ptxrt::arch_limits(7, 5);
  auto result = ptxrt::compute_occupancy(turing, kernel(32), 128, 40 * 1024 + 1);
  CHECK(result.shared_bytes_per_block == 40 * 1024 + 256);
  CHECK(result.active_blocks_per_sm == 1);
  CHECK(result.fraction == 0.125);
  CHECK(result.limit == ptxrt::OccupancyLimit::shared_memory);
  CHECK(result.shared_carveout_bytes == 64 * 1024);
}

TEST_CASE("CC 7.0 fits two blocks of 48 KB in its 96 KB of shared memory") {
  const auto& volta = ptxrt::arch_limits(7, 0);
  auto result = ptxrt::compute_occupancy(volta, kernel(32), 256, 48 * 1024);
  CHECK(result.active_blocks_per_sm == 2);
  CHECK(result.limit == ptxrt::OccupancyLimit::shared_memory);
  CHECK(result.fraction == 0.25);
}

TEST_CASE("arch_limits names the known capabilities when asked for an unknown one") {
  try {
    ptxrt::arch_limits(6, 1);
    FAIL("CC 6.1 was accepted");
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    CHECK(std::string(error.what()) ==
          "no occupancy limits for compute capability 6.1; known: 7.0, 7.2, 7.5, 8.0, 8.6, 8.7, "
          "8.9, 9.0, "
          "10.0, 10.3, 11.0, 12.0, 12.1");
  }
}

TEST_CASE(
    "every known architecture keeps its carveouts ascending and ending at shared_memory_per_sm") {
  for (const auto& arch : ptxrt::known_architectures()) {
    CAPTURE(arch.cc_major);
    CAPTURE(arch.cc_minor);
    CHECK(std::is_sorted(arch.shared_carveouts.begin(), arch.shared_carveouts.end()));
    CHECK(arch.shared_carveouts.back() == arch.shared_memory_per_sm);
    CHECK(arch.shared_memory_per_block_optin + arch.reserved_shared_memory_per_block ==
          arch.shared_memory_per_sm);
  }
}

TEST_CASE("compute_occupancy rejects a block of no threads") {
  CHECK_THROWS_AS(ptxrt::compute_occupancy(hopper(), kernel(32), 0, 0), ptxrt::Error);
}

TEST_CASE("to_string names each occupancy limit") {
  CHECK(ptxrt::to_string(ptxrt::OccupancyLimit::warps) == "warps");
  CHECK(ptxrt::to_string(ptxrt::OccupancyLimit::registers) == "registers");
  CHECK(ptxrt::to_string(ptxrt::OccupancyLimit::shared_memory) == "shared_memory");
  CHECK(ptxrt::to_string(ptxrt::OccupancyLimit::blocks) == "blocks");
  CHECK(ptxrt::to_string(ptxrt::OccupancyLimit::barriers) == "barriers");
  CHECK(ptxrt::to_string(ptxrt::OccupancyLimit::none_fits) == "none_fits");
}
