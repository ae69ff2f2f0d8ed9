// The sorts of ptx_src/ against CUB's DeviceRadixSort, timed in one process, for
// docs/perf-notes.md: at each size, the bitonic and radix sorts of float keys, alone and carrying
// their positions (apps::run_sort, each output verified against the CPU once), and CUB's
// SortKeys / SortPairs of the same keys (its output checked to be ordered and a permutation of the
// input); every time is the median of --repeat runs between CUDA events on the default stream,
// inputs restored untimed before each. Prints each sort's ms and Mkey/s and its time over CUB's
// (the goal: the radix sort of 16M keys at most 1.5x CUB's). Exits 1 when a check fails,
// 77 (skipped) without a GPU.
//
// CUB's dispatch is compiled by nvcc (cub_radix_sort.cu); the target is not built by default:
//   cmake --build build --target ptxrt_sort_bench && build/tests/ptxrt_sort_bench [--n N ...]
//       [--repeat 20] [--seed 1]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "apps/classic/sort.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/timing.hpp"
#include "cub_radix_sort.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/memory.hpp"

namespace apps = ptxrt::apps;

namespace {

constexpr int skipped = 77;

struct CubTiming {
  double median_ms = 0.0;
  bool ordered = false;
};

// CUB's sort of the keys run_sort generates for `seed` (values: their positions).
CubTiming time_cub(const ptxrt::Context& context, std::size_t n, bool pairs, int repeats,
                   std::uint64_t seed) {
  const std::vector<float> keys = apps::random_floats(n, seed, 0);
  std::vector<unsigned> positions(n);
  std::iota(positions.begin(), positions.end(), 0u);
  const ptxrt::DeviceBuffer<float> keys_in(context, std::span<const float>(keys));
  ptxrt::DeviceBuffer<float> keys_out(context, n);
  const ptxrt::DeviceBuffer<unsigned> values_in(context, std::span<const unsigned>(positions));
  ptxrt::DeviceBuffer<unsigned> values_out(context, n);
  const int count = static_cast<int>(n);
  const std::size_t temp_bytes = ptxrt::bench::cub_sort_temp_bytes(count, pairs);
  ptxrt::DeviceBuffer<unsigned char> temp(context, std::max<std::size_t>(temp_bytes, 1));

  CubTiming timing;
  timing.median_ms = apps::median_launch_ms(
      context, repeats, [] {},
      [&] {
        ptxrt::bench::cub_sort(temp.address(), temp_bytes, keys_in.address(), keys_out.address(),
                               pairs ? values_in.address() : 0, values_out.address(), count);
      });
  const std::vector<float> sorted = keys_out.download();
  std::vector<float> expected = keys;
  std::sort(expected.begin(), expected.end());
  timing.ordered = sorted == expected;
  if (pairs) {
    const std::vector<unsigned> order = values_out.download();
    for (std::size_t k = 0; k < n && timing.ordered; ++k)
      timing.ordered = order[k] < n && keys[order[k]] == sorted[k];
  }
  return timing;
}

struct Arguments {
  std::vector<std::size_t> sizes{1u << 20, 1u << 24, 16'777'259};
  int repeat = 20;
  std::uint64_t seed = 1;
};

// One table row per (size, variant); false when an output was wrong.
bool run(const Arguments& arguments) {
  const ptxrt::Context context = ptxrt::Context::primary(0);
  ptxrt::Jit& jit = ptxrt::Jit::shared();
  bool all_correct = true;
  std::printf("%11s %-14s %10s %10s %10s %12s  %s\n", "n", "sort", "ms", "Mkey/s", "CUB ms",
              "ms / CUB ms", "verified");
  for (const std::size_t n : arguments.sizes) {
    for (const bool pairs : {false, true}) {
      const CubTiming cub = time_cub(context, n, pairs, arguments.repeat, arguments.seed);
      all_correct = all_correct && cub.ordered;
      std::printf("%11zu %-14s %10.3f %10.1f %10s %12s  %s\n", n, pairs ? "cub-pairs" : "cub",
                  cub.median_ms, static_cast<double>(n) / cub.median_ms * 1e-3, "", "",
                  cub.ordered ? "yes" : "NO");
      const apps::SortVariant variants[] = {
          pairs ? apps::SortVariant::bitonic_pairs : apps::SortVariant::bitonic,
          pairs ? apps::SortVariant::radix_pairs : apps::SortVariant::radix};
      for (const apps::SortVariant variant : variants) {
        const apps::Run sorted =
            apps::run_sort(jit, context, apps::plan_sort(static_cast<std::int64_t>(n), variant),
                           {.seed = arguments.seed, .repeats = arguments.repeat, .verify = true});
        all_correct = all_correct && sorted.passed();
        std::printf("%11zu %-14s %10.3f %10.1f %10.3f %12.3f  %s\n", n,
                    std::string(apps::to_string(variant)).c_str(), sorted.median_ms, sorted.rate,
                    cub.median_ms, sorted.median_ms / cub.median_ms,
                    sorted.passed() ? "yes" : "NO");
      }
    }
  }
  return all_correct;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The bitonic and radix sorts of ptx_src/ against CUB's radix sort"};
  Arguments arguments;
  app.add_option("--n", arguments.sizes, "Numbers of keys (default 2^20, 2^24, 16777259)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  app.add_option("--repeat", arguments.repeat, "Timed runs of each sort")
      ->check(CLI::Range(1, 10000));
  app.add_option("--seed", arguments.seed, "Seed of the random keys");
  CLI11_PARSE(app, argc, argv);
  if (const ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::printf("sort bench: skipped (%s)\n", status.problem.c_str());
    return skipped;
  }
  try {
    return run(arguments) ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "sort bench: %s\n", error.what());
    return 1;
  }
}
