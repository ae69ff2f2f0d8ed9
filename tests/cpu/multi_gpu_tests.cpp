// How the split matmul divides rows between devices (no GPU needed).
#include <doctest/doctest.h>

#include "host/multi_gpu.hpp"
#include "ptxrt/error.hpp"

using ptxrt::host::RowBlock;
using ptxrt::host::split_rows;

namespace {

std::vector<std::size_t> counts(const std::vector<RowBlock>& blocks) {
  std::vector<std::size_t> result;
  for (const RowBlock& block : blocks) result.push_back(block.count);
  return result;
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
