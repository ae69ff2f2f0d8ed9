// What the launch features buy, each against its peer measured in the same process:
//   - graph replay: host time per kernel of replaying a captured graph of 100 launches against
//     100 launches on a stream (goal: <= 0.3x);
//   - the cooperative single-launch sum against the multi-pass sum, at 2^20 and 2^28 (GPU time);
//   - the thread-block-cluster histogram against the per-block one (GPU time);
//   - uploads: pinned async against pageable synchronous, and pageable through pinned staging.
// Ratios only: the absolute numbers are the machine's. Exits 77 (skipped) without a GPU, 1 when
// a reduction or histogram fails its verification.
//
//   ptxrt_launch_features_bench [--check]    (--check: small sizes, for CTest)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/classic/histogram.hpp"
#include "apps/classic/reduce.hpp"
#include "apps/common/staged_copy.hpp"
#include "apps/common/timing.hpp"
#include "empty_kernel.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/ptxrt.hpp"

namespace apps = ptxrt::apps;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int skipped = 77;
constexpr int graph_kernels = 100;

struct Sizes {
  int graph_batches = 500;
  std::vector<long long> reduce{1ll << 20, 1ll << 28};
  long long histogram = 1ll << 26;
  std::size_t upload_bytes = std::size_t{256} << 20;
  int repeats = 10;
};

Sizes check_sizes() { return {20, {1ll << 16, 3'000'017}, 1'000'003, std::size_t{16} << 20, 2}; }

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Host time per kernel of 100 launches on a stream, and of one replay of the same 100 captured:
// batches alternate, each drained untimed, and the median of each is kept.
void bench_graph_replay(const ptxrt::Context& context, const Sizes& sizes) {
  const ptxrt::Kernel kernel = ptxrt::bench::empty_kernel(context);
  ptxrt::DeviceBuffer<float> out(context, 1);
  const int n = 1;
  ptxrt::Stream stream(context);
  const ptxrt::LaunchConfig config{.grid = 1, .block = 32, .stream = stream.handle()};
  auto launch_all = [&] {
    for (int i = 0; i < graph_kernels; ++i) kernel.launch(config, out, n);
  };
  stream.begin_capture();
  launch_all();
  const ptxrt::GraphExec exec = stream.end_capture().instantiate();
  std::vector<double> launches_us, replay_us;
  for (int batch = 0; batch < sizes.graph_batches + 10; ++batch) {
    auto start = Clock::now();
    launch_all();
    const double launched = microseconds_since(start);
    stream.synchronize();
    start = Clock::now();
    exec.launch(stream);
    const double replayed = microseconds_since(start);
    stream.synchronize();
    if (batch < 10) continue;  // warm-up
    launches_us.push_back(launched / graph_kernels);
    replay_us.push_back(replayed / graph_kernels);
  }
  const double launches = apps::median(launches_us), replay = apps::median(replay_us);
  std::printf("graph replay: host time per kernel, %d empty kernels (median of %d batches)\n",
              graph_kernels, sizes.graph_batches);
  std::printf("  %d launches on a stream:   %.3f us per kernel\n", graph_kernels, launches);
  std::printf(
      "  one graph replay:          %.3f us per kernel  (%.2fx the launches; goal <= 0.3x)\n",
      replay, replay / launches);
}

// False when a verification failed.
bool bench_cooperative_reduce(const ptxrt::Context& context, const Sizes& sizes) {
  std::printf("cooperative sum (one launch, grid-wide sync) vs the multi-pass sum, GPU time\n");
  const apps::RunOptions options{.seed = 1, .repeats = sizes.repeats, .verify = true};
  bool passed = true;
  for (long long n : sizes.reduce) {
    const apps::Run passes = apps::run_reduce(
        ptxrt::Jit::shared(), context, apps::plan_reduce(n, apps::ReduceVariant::sum), options);
    const apps::Run cooperative =
        apps::run_reduce(ptxrt::Jit::shared(), context,
                         apps::plan_reduce(n, apps::ReduceVariant::cooperative), options);
    std::printf("  n=%lld: %d passes %.4f ms, cooperative (grid %u) %.4f ms: %.2fx the time%s\n", n,
                passes.launches, passes.median_ms, cooperative.grid.x, cooperative.median_ms,
                cooperative.median_ms / passes.median_ms,
                passes.passed() && cooperative.passed() ? "" : "  VERIFICATION FAILED");
    passed = passed && passes.passed() && cooperative.passed();
  }
  return passed;
}

// False when a verification failed.
bool bench_histogram(const ptxrt::Context& context, const Sizes& sizes) {
  if (!context.device().properties().cluster_launch) {
    std::printf("histogram: no thread-block clusters on this device, skipped\n");
    return true;
  }
  bool passed = true;
  std::printf("histogram of %lld values: clusters (distributed shared memory) vs one per block\n",
              sizes.histogram);
  const apps::RunOptions options{.seed = 1, .repeats = sizes.repeats, .verify = true};
  for (const char* bins : {"4096", "16384", "32768"}) {
    const apps::Run block = apps::run_histogram(
        ptxrt::Jit::shared(), context,
        apps::plan_histogram(sizes.histogram, apps::HistogramVariant::block, {{"BINS", bins}}),
        options);
    for (const char* cluster : {"2", "4", "8"}) {
      const apps::Run clustered =
          apps::run_histogram(ptxrt::Jit::shared(), context,
                              apps::plan_histogram(sizes.histogram, apps::HistogramVariant::cluster,
                                                   {{"BINS", bins}, {"CLUSTER_SIZE", cluster}}),
                              options);
      std::printf(
          "  %s bins: block %.4f ms (grid %u), cluster of %s %.4f ms (grid %u): %.2fx the "
          "block's speed%s\n",
          bins, block.median_ms, block.grid.x, cluster, clustered.median_ms, clustered.grid.x,
          block.median_ms / clustered.median_ms,
          block.passed() && clustered.passed() ? "" : "  VERIFICATION FAILED");
      passed = passed && block.passed() && clustered.passed();
    }
  }
  return passed;
}

// GB/s of `copy` moving `bytes`: the median of `repeats` host-timed runs, each drained.
template <typename Copy>
double upload_rate(std::size_t bytes, int repeats, Copy copy) {
  std::vector<double> seconds;
  for (int run = 0; run <= repeats; ++run) {
    const auto start = Clock::now();
    copy();
    if (run > 0) seconds.push_back(microseconds_since(start) / 1e6);
  }
  return static_cast<double>(bytes) / apps::median(seconds) / 1e9;
}

void bench_uploads(const ptxrt::Context& context, const Sizes& sizes) {
  const std::size_t bytes = sizes.upload_bytes;
  std::vector<std::byte> pageable(bytes, std::byte{1});
  ptxrt::PinnedMemory pinned(context, bytes);
  std::fill_n(static_cast<std::byte*>(pinned.data()), bytes, std::byte{1});
  ptxrt::DeviceMemory device(context, bytes);
  const ptxrt::Stream stream(context);
  apps::StagedCopier copier(context);
  const double synchronous =
      upload_rate(bytes, sizes.repeats, [&] { device.upload_bytes(pageable.data(), bytes); });
  const double direct = upload_rate(bytes, sizes.repeats, [&] {
    device.upload_bytes_async(pinned.data(), bytes, stream);
    stream.synchronize();
  });
  const double staged = upload_rate(bytes, sizes.repeats, [&] {
    copier.upload(device, 0, pageable, stream);
    stream.synchronize();
  });
  std::printf("upload of %zu MiB, host to device\n", bytes >> 20);
  std::printf("  pageable, synchronous:          %.1f GB/s\n", synchronous);
  std::printf("  pinned, async on a stream:      %.1f GB/s  (%.2fx pageable)\n", direct,
              direct / synchronous);
  std::printf("  pageable through pinned staging: %.1f GB/s  (%.2fx pageable)\n", staged,
              staged / synchronous);
}

}  // namespace

int main(int argc, char** argv) {
  bool check = false;
  CLI::App app(
      "Graph replay, cooperative and cluster kernels, and upload rates against their "
      "peers, measured in one process");
  app.add_flag("--check", check, "small sizes: a quick run for CTest");
  CLI11_PARSE(app, argc, argv);
  if (const ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::printf("launch features bench: skipped (%s)\n", status.problem.c_str());
    return skipped;
  }
  const Sizes sizes = check ? check_sizes() : Sizes{};
  const ptxrt::Context context = ptxrt::Context::primary(0);
  std::printf("%s\n", context.device().properties().name.c_str());
  bench_graph_replay(context, sizes);
  const bool reduced = bench_cooperative_reduce(context, sizes);
  const bool counted = bench_histogram(context, sizes);
  bench_uploads(context, sizes);
  return reduced && counted ? 0 : 1;
}
