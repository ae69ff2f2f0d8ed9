// The bitonic sort's launch plan, checked without a GPU by running each launch's compare-exchange
// steps on the host exactly as bitonic_sort.cu's kernels do.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <random>
#include <vector>

#include "apps/classic/device_sort.hpp"
#include "ptxrt/core/error.hpp"

using ptxrt::apps::DeviceSortLaunch;

namespace {

// One step (distance j, stage k) over the whole array: the pairs of a launch are disjoint, so
// the order within a step does not matter.
void step(std::vector<float>& keys, long long j, long long k) {
  const auto n = static_cast<long long>(keys.size());
  for (long long pair = 0; pair < n / 2; ++pair) {
    const long long lower = 2 * pair - (pair & (j - 1));
    const bool ascending = (lower & k) == 0;
    float& a = keys[static_cast<std::size_t>(lower)];
    float& b = keys[static_cast<std::size_t>(lower + j)];
    if (ascending ? b < a : a < b) std::swap(a, b);
  }
}

void simulate(std::vector<float>& keys, const std::vector<DeviceSortLaunch>& plan,
              long long block) {
  const long long chunk = std::min<long long>(2 * block, static_cast<long long>(keys.size()));
  for (const DeviceSortLaunch& launch : plan) {
    switch (launch.kind) {
      case DeviceSortLaunch::Kind::sort_shared:
        for (long long k = 2; k <= chunk; k *= 2)
          for (long long j = k / 2; j > 0; j /= 2) step(keys, j, k);
        break;
      case DeviceSortLaunch::Kind::merge_global:
        step(keys, launch.j, launch.k);
        break;
      case DeviceSortLaunch::Kind::merge_shared:
        for (long long j = std::min(launch.k / 2, block); j > 0; j /= 2) step(keys, j, launch.k);
        break;
    }
  }
}

}  // namespace

TEST_CASE("the bitonic plan sorts every power-of-two length for every block size") {
  std::mt19937 generator(17);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int block : {128, 256, 512, 1024}) {
    for (std::size_t n : {1u, 2u, 64u, 256u, 2048u, 4096u, 32768u}) {
      CAPTURE(block);
      CAPTURE(n);
      std::vector<float> keys(n);
      for (float& key : keys) key = value(generator);
      std::vector<float> expected = keys;
      std::sort(expected.begin(), expected.end());
      simulate(keys, ptxrt::apps::bitonic_plan(n, block), block);
      CHECK(keys == expected);
    }
  }
}

TEST_CASE("the bitonic plan follows bitonic_sort.cu's protocol") {
  const auto plan = ptxrt::apps::bitonic_plan(8192, 512);
  // One shared sort of the 8 chunks of 1024, then stages 2048 (j = 1024 global) and 4096 and
  // 8192 (j = 2048, 1024 and 4096, 2048, 1024 global), each closed by a shared merge.
  using Kind = DeviceSortLaunch::Kind;
  const std::vector<DeviceSortLaunch> expected{
      {Kind::sort_shared, 0, 0, 8},        {Kind::merge_global, 1024, 2048, 8},
      {Kind::merge_shared, 0, 2048, 8},    {Kind::merge_global, 2048, 4096, 8},
      {Kind::merge_global, 1024, 4096, 8}, {Kind::merge_shared, 0, 4096, 8},
      {Kind::merge_global, 4096, 8192, 8}, {Kind::merge_global, 2048, 8192, 8},
      {Kind::merge_global, 1024, 8192, 8}, {Kind::merge_shared, 0, 8192, 8}};
  CHECK(plan == expected);
  CHECK(ptxrt::apps::bitonic_plan(64, 512) ==
        std::vector<DeviceSortLaunch>{{Kind::sort_shared, 0, 0, 1}});
}

TEST_CASE("the bitonic plan rejects a length that is not a power of two and an unknown block") {
  CHECK_THROWS_WITH_AS(ptxrt::apps::bitonic_plan(1000, 512),
                       "bitonic sort: length 1000 is not a power of two", ptxrt::Error);
  CHECK_THROWS_WITH_AS(ptxrt::apps::bitonic_plan(1024, 100),
                       "bitonic sort: block size 100 is not one of 128, 256, 512, 1024",
                       ptxrt::Error);
}

TEST_CASE("padding for the sort appends NaN keys and INT_MAX values up to a power of two") {
  const std::vector<float> keys{3.0f, 1.0f, 2.0f};
  const std::vector<int> values{0, 1, 2};
  const auto padded = ptxrt::apps::pad_for_sort(keys, values);
  REQUIRE(padded.keys.size() == 4);
  CHECK(padded.keys[2] == 2.0f);
  CHECK(std::isnan(padded.keys[3]));
  CHECK(padded.values == std::vector<int>{0, 1, 2, INT_MAX});
  CHECK(ptxrt::apps::bitonic_length(0) == 1);
  CHECK(ptxrt::apps::bitonic_length(1025) == 2048);
}
