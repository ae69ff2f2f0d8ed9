// How the split matmul divides rows and the split closest pair divides tile pairs between
// devices, and how devices are chosen (no GPU needed).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "apps/closest_pair/multi_gpu_closest_pair.hpp"
#include "apps/matmul/multi_gpu.hpp"
#include "ptx_src/closest_pair_math.cuh"
#include "ptxrt/core/error.hpp"

using ptxrt::apps::RowBlock;
using ptxrt::apps::split_rows;
using ptxrt::apps::split_tile_pairs;

namespace {

std::vector<std::size_t> counts(const std::vector<RowBlock>& blocks) {
  std::vector<std::size_t> result;
  for (const RowBlock& block : blocks) result.push_back(block.count);
  return result;
}

// The brute-force kernel's walk over tile pairs [first, first + count), on the CPU: calls
// visit(i, j) for every pair it compares.
template <class Visit>
void walk_tile_pairs(std::size_t n, int base, RowBlock range, Visit visit) {
  const auto size = static_cast<long long>(n);
  for (std::size_t k = range.first; k < range.first + range.count; ++k) {
    long long tile_a = 0, tile_b = 0;
    triangle_tile_pair(static_cast<long long>(k), tile_a, tile_b);
    for (long long t = 0; t < base && tile_a * base + t < size; ++t)
      for (long long u = tile_a == tile_b ? t + 1 : 0; u < base && tile_b * base + u < size; ++u)
        visit(tile_a * base + t, tile_b * base + u);
  }
}

// The pairs a tile pair holds: a diagonal one the pairs within its tile, others tile by tile.
std::uint64_t pairs_in(std::size_t n, int base, RowBlock range) {
  const auto size = static_cast<long long>(n);
  const auto tile_size = [&](long long tile) {
    return std::min<long long>(base, size - tile * base);
  };
  std::uint64_t pairs = 0;
  for (std::size_t k = range.first; k < range.first + range.count; ++k) {
    long long tile_a = 0, tile_b = 0;
    triangle_tile_pair(static_cast<long long>(k), tile_a, tile_b);
    const long long a = tile_size(tile_a), b = tile_size(tile_b);
    pairs += static_cast<std::uint64_t>(tile_a == tile_b ? a * (a - 1) / 2 : a * b);
  }
  return pairs;
}

}  // namespace

TEST_CASE("rows split into whole tiles, as even as tiles allow, the remainder last") {
  // 8192 rows = 512 tiles of 16: 256 each.
  CHECK(counts(split_rows(8192, 2, 16)) == std::vector<std::size_t>{4096, 4096});
  // 301 rows = 19 tiles (the last partial): 7, 6, 6 tiles.
  const auto blocks = split_rows(301, 3, 16);
  CHECK(counts(blocks) == std::vector<std::size_t>{112, 96, 93});
  CHECK(blocks[1].first == 112);
  CHECK(blocks[2].first == 208);
}

TEST_CASE("more parts than tiles leaves the last parts empty, at the end") {
  const auto blocks = split_rows(20, 4, 16);
  CHECK(counts(blocks) == std::vector<std::size_t>{16, 4, 0, 0});
  CHECK(blocks[3].first == 20);
}

TEST_CASE("one part takes every row") {
  CHECK(counts(split_rows(1000, 1, 32)) == std::vector<std::size_t>{1000});
}

TEST_CASE("split_rows refuses zero parts or a zero granule") {
  CHECK_THROWS_AS(split_rows(10, 0, 16), ptxrt::Error);
  CHECK_THROWS_AS(split_rows(10, 2, 0), ptxrt::Error);
}

TEST_CASE("split tile pairs cover every pair of the brute force exactly once") {
  for (std::size_t n : {2u, 3u, 31u, 32u, 33u, 100u, 257u}) {
    for (std::size_t parts : {1u, 2u, 3u, 5u, 8u}) {
      CAPTURE(n);
      CAPTURE(parts);
      std::vector<int> visits(n * n, 0);
      const std::vector<RowBlock> ranges = split_tile_pairs(n, 32, parts);
      REQUIRE(ranges.size() == parts);
      std::size_t next = 0;
      for (const RowBlock& range : ranges) {
        CHECK(range.first == next);  // contiguous, in order
        next += range.count;
        walk_tile_pairs(n, 32, range, [&](long long i, long long j) {
          ++visits[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)];
        });
      }
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) REQUIRE(visits[i * n + j] == (i < j ? 1 : 0));
    }
  }
}

TEST_CASE("split tile pairs balance the pairs, where an even split of rows would not") {
  const std::size_t n = 100'000;
  const std::uint64_t total = std::uint64_t{n} * (n - 1) / 2;
  for (std::size_t parts = 2; parts <= 8; ++parts) {
    CAPTURE(parts);
    for (const RowBlock& range : split_tile_pairs(n, 128, parts)) {
      const double share = static_cast<double>(pairs_in(n, 128, range)) /
                           (static_cast<double>(total) / static_cast<double>(parts));
      // The diagonal tile pairs hold half the pairs of the others, and the first ranges hold
      // more of them: 1.3% at 8 parts for this n, shrinking as 1/n.
      CHECK(share > 0.985);
      CHECK(share < 1.015);
    }
  }
  // Rows 0..n/2 of the pairs (i, j > i) hold three quarters of them.
  const std::uint64_t first_half_of_rows = total - std::uint64_t{n / 2} * (n / 2 - 1) / 2;
  CHECK(static_cast<double>(first_half_of_rows) / static_cast<double>(total) ==
        doctest::Approx(0.75).epsilon(0.001));
}

TEST_CASE("with fewer tile pairs than devices the first take one each and the rest none") {
  // 2 points, and 3 points over 4 devices: one tile, one tile pair.
  CHECK(counts(split_tile_pairs(2, 128, 2)) == std::vector<std::size_t>{1, 0});
  CHECK(counts(split_tile_pairs(3, 32, 4)) == std::vector<std::size_t>{1, 0, 0, 0});
  // 65 points in tiles of 32: 3 tiles, 6 tile pairs over 4 devices.
  CHECK(counts(split_tile_pairs(65, 32, 4)) == std::vector<std::size_t>{2, 2, 1, 1});
  CHECK_THROWS_AS(split_tile_pairs(10, 0, 2), ptxrt::Error);
  CHECK_THROWS_AS(split_tile_pairs(10, 32, 0), ptxrt::Error);
}

TEST_CASE("a device list is 'all' or distinct ordinals separated by commas") {
  using ptxrt::parse_device_list;
  CHECK_FALSE(parse_device_list("all").has_value());
  CHECK(parse_device_list("0") == std::vector<int>{0});
  CHECK(parse_device_list("2,0,1") == std::vector<int>{2, 0, 1});
  CHECK_THROWS_WITH_AS(parse_device_list("0,,1"),
                       "--devices '0,,1': '' is not a device ordinal; expected 'all' or ordinals "
                       "such as 0,1",
                       ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_device_list("-1"), doctest::Contains("'-1' is not a device ordinal"),
                       ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_device_list("1x"), doctest::Contains("'1x' is not a device ordinal"),
                       ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_device_list(""), doctest::Contains("'' is not a device ordinal"),
                       ptxrt::Error);
  CHECK_THROWS_WITH_AS(parse_device_list("0,1,0"), "--devices '0,1,0': device 0 is listed twice",
                       ptxrt::Error);
}

TEST_CASE("devices timed together must be one model: the same name and compute capability") {
  ptxrt::DeviceProperties first;
  first.ordinal = 0;
  first.name = "NVIDIA H100 80GB HBM3";
  first.cc_major = 9;
  ptxrt::DeviceProperties twin = first;
  twin.ordinal = 1;
  CHECK_NOTHROW(ptxrt::require_one_model(std::vector{first, twin}));
  ptxrt::DeviceProperties other = twin;
  other.ordinal = 2;
  other.name = "NVIDIA A100-SXM4-80GB";
  other.cc_major = 8;
  CHECK_THROWS_WITH_AS(ptxrt::require_one_model(std::vector{first, twin, other}),
                       "device 2 (NVIDIA A100-SXM4-80GB, 8.0) is not the model of device 0 "
                       "(NVIDIA H100 80GB HBM3, 9.0): timings are comparable on one model only",
                       ptxrt::Error);
  ptxrt::DeviceProperties renamed = twin;
  renamed.name = "NVIDIA H100 PCIe";
  CHECK_THROWS_AS(ptxrt::require_one_model(std::vector{first, renamed}), ptxrt::Error);
}

TEST_CASE("host transfers are overlapped or synchronous, by name") {
  using ptxrt::apps::HostTransfers;
  CHECK(ptxrt::apps::parse_host_transfers("overlapped") == HostTransfers::overlapped);
  CHECK(ptxrt::apps::parse_host_transfers("synchronous") == HostTransfers::synchronous);
  CHECK(ptxrt::apps::to_string(HostTransfers::synchronous) == "synchronous");
  CHECK_THROWS_WITH_AS(ptxrt::apps::parse_host_transfers("pinned"),
                       "host transfers 'pinned' are unknown: expected overlapped or synchronous",
                       ptxrt::Error);
  CHECK(ptxrt::apps::MultiGpuMatmulOptions{}.transfers == HostTransfers::overlapped);
}

TEST_CASE("a device's upload rate is its bytes over its time, in GB/s") {
  ptxrt::apps::DeviceShare share;
  CHECK(share.upload_gb_per_s() == 0.0);
  share.upload_bytes = 512'000'000;
  share.upload_ms = 20.0;
  CHECK(share.upload_gb_per_s() == doctest::Approx(25.6));
}
