#include "tools/multi_gpu.hpp"

#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "apps/closest_pair/multi_gpu_closest_pair.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/matmul/multi_gpu.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/memory.hpp"
#include "tools/cli.hpp"

namespace ptxrt::cli {
namespace {

// Where the inputs and results live on the host, and how they travel.
struct HostSettings {
  std::string memory = "pinned";  // pinned | pageable
  std::string transfers = "overlapped";
  bool pinned() const { return memory == "pinned"; }
  apps::HostTransfers host_transfers() const { return apps::parse_host_transfers(transfers); }
};

struct MatmulSettings {
  std::size_t n = 8192;
  std::vector<int> devices;
  int tile_width = 16;
  unsigned seed = 1;
  HostSettings host;
};

struct ClosestPairSettings {
  std::size_t n = std::size_t{1} << 20;
  std::vector<int> devices;
  int base = 128;
  std::string distribution = "uniform";
  unsigned seed = 1;
  HostSettings host;
};

// Host memory for `count` values: pinned (portable: every device's copy engine reads it), or a
// plain vector.
template <typename T>
class HostArray {
 public:
  HostArray(std::size_t count, bool pinned, int device) {
    if (pinned)
      pinned_.emplace(Context::primary(device), count);
    else
      pageable_.resize(count);
  }
  std::span<T> span() { return pinned_ ? pinned_->span() : std::span<T>(pageable_); }

 private:
  std::optional<PinnedBuffer<T>> pinned_;
  std::vector<T> pageable_;
};

void print_host_settings(const HostSettings& settings) {
  std::cout << "host memory " << settings.memory << ", transfers " << settings.transfers << "\n";
}

void fill_random(std::span<float> values, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  for (float& value : values) value = distribution(generator);
}

// `value` with `digits` significant digits, as "%.*g" writes it.
std::string significant(double value, int digits) {
  std::ostringstream text;
  text << std::setprecision(digits) << value;
  return text.str();
}

template <typename Run>
void print_totals(const std::string& title, const Run& run) {
  std::cout << title << ": " << fixed(run.wall_ms, 1) << " ms end to end, slowest kernel "
            << fixed(run.slowest_kernel_ms(), 1) << " ms\n";
}

template <typename Run>
void print_speed_up(const Run& one, const Run& all) {
  std::cout << "speed-up: " << fixed(one.wall_ms / all.wall_ms, 2) << "x end to end, "
            << fixed(one.slowest_kernel_ms() / all.slowest_kernel_ms(), 2) << "x in the kernels\n";
}

// "upload 12.3 ms (43.6 GB/s)"
template <typename Share>
std::string upload(const Share& share) {
  return "upload " + fixed(share.upload_ms, 1) + " ms (" + fixed(share.upload_gb_per_s(), 1) +
         " GB/s)";
}

void print_run(const std::string& title, const apps::MultiGpuMatmul& run) {
  print_totals(title, run);
  for (const apps::DeviceShare& share : run.shares)
    std::cout << "  device " << share.device << ": rows " << share.rows.first << ".."
              << share.rows.first + share.rows.count << ", " << upload(share) << ", kernel "
              << fixed(share.kernel_ms, 1) << " ms, download " << fixed(share.download_ms, 1)
              << " ms\n";
}

// Bitwise, so that -0 against +0 or a NaN counts as a difference.
void check_equal(std::span<const float> one, std::span<const float> all) {
  for (std::size_t i = 0; i < one.size(); ++i)
    if (std::memcmp(&one[i], &all[i], sizeof(float)) != 0)
      throw Error(ErrorKind::invalid_argument,
                  "the split result differs from one GPU's at element " + std::to_string(i) + ": " +
                      std::to_string(all[i]) + " instead of " + std::to_string(one[i]));
}

void run_matmul(const MatmulSettings& settings) {
  const std::size_t n = settings.n;
  const std::vector<int> devices = devices_or_all(settings.devices, "--devices");
  const apps::HostTransfers transfers = settings.host.host_transfers();
  HostArray<float> a(n * n, settings.host.pinned(), devices.front());
  HostArray<float> b(n * n, settings.host.pinned(), devices.front());
  HostArray<float> c_one(n * n, settings.host.pinned(), devices.front());
  HostArray<float> c_all(n * n, settings.host.pinned(), devices.front());
  fill_random(a.span(), settings.seed);
  fill_random(b.span(), settings.seed + 1);
  Jit& jit = Jit::shared();
  // Untimed: compiles (or reads the disk cache) and loads the kernel on every device.
  const std::size_t small = 64;
  const std::vector<float> warm(small * small, 1.0f);
  apps::split_matmul(jit, warm, warm, small, small, small,
                     {devices, settings.tile_width, transfers});

  std::cout << "C = A·B, " << n << "x" << n << "x" << n
            << " fp32, matmul_tiled TILE_WIDTH=" << settings.tile_width << "\n";
  print_host_settings(settings.host);
  const apps::MultiGpuMatmul one =
      apps::split_matmul_into(jit, a.span(), b.span(), c_one.span(), n, n, n,
                              {{devices.front()}, settings.tile_width, transfers});
  print_run("1 GPU", one);
  const apps::MultiGpuMatmul all = apps::split_matmul_into(
      jit, a.span(), b.span(), c_all.span(), n, n, n, {devices, settings.tile_width, transfers});
  print_run(std::to_string(devices.size()) + " GPU(s)", all);
  print_speed_up(one, all);
  check_equal(c_one.span(), c_all.span());
  std::cout << "result: bitwise equal to one GPU's\n";
}

void print_run(const std::string& title, const apps::MultiGpuClosestPair& run) {
  print_totals(title, run);
  for (const apps::ClosestPairShare& share : run.shares)
    std::cout << "  device " << share.device << ": tile pairs " << share.tile_pairs.first << ".."
              << share.tile_pairs.first + share.tile_pairs.count << ", " << upload(share)
              << ", kernel " << fixed(share.kernel_ms, 1) << " ms\n";
}

// The pair and its distance, ties included, must be the single-GPU brute force's. Distances are
// printed with 17 digits, which tell any two doubles apart.
void check_equal(const apps::ClosestPair& one, const apps::MultiGpuClosestPair& split,
                 const std::string& title) {
  if (split.i != one.i || split.j != one.j || split.distance != one.distance)
    throw Error(ErrorKind::invalid_argument,
                title + " found (" + std::to_string(split.i) + ", " + std::to_string(split.j) +
                    ") at " + significant(split.distance, 17) + ", one GPU's brute force (" +
                    std::to_string(one.i) + ", " + std::to_string(one.j) + ") at " +
                    significant(one.distance, 17));
}

void run_closest_pair(const ClosestPairSettings& settings) {
  const std::vector<int> devices = devices_or_all(settings.devices, "--devices");
  const apps::HostTransfers transfers = settings.host.host_transfers();
  const std::vector<apps::Point2> generated = apps::generate_points(
      settings.n, apps::parse_point_distribution(settings.distribution), settings.seed);
  HostArray<apps::Point2> stored(generated.size(), settings.host.pinned(), devices.front());
  std::copy(generated.begin(), generated.end(), stored.span().begin());
  const std::span<const apps::Point2> points = stored.span();
  Jit& jit = Jit::shared();
  // Untimed: compiles (or reads the disk cache) and loads the kernels on every device; a tile
  // per device makes at least one tile pair for each.
  const std::size_t warm = std::min(points.size(), devices.size() * std::size_t(settings.base));
  apps::split_closest_pair(jit, points.first(warm), {devices, settings.base, transfers});

  std::cout << "closest pair by brute force, " << settings.n << " " << settings.distribution
            << " points, closest_pair BASE=" << settings.base << "\n";
  print_host_settings(settings.host);
  apps::ClosestPairOptions single;
  single.base = settings.base;
  single.context = Context::primary(devices.front());
  single.jit = &jit;
  const apps::ClosestPair reference =
      apps::closest_pair(points, apps::ClosestPairMethod::brute_force, single);
  const apps::MultiGpuClosestPair one =
      apps::split_closest_pair(jit, points, {{devices.front()}, settings.base, transfers});
  print_run("1 GPU", one);
  const std::string title = std::to_string(devices.size()) + " GPU(s)";
  const apps::MultiGpuClosestPair all =
      apps::split_closest_pair(jit, points, {devices, settings.base, transfers});
  print_run(title, all);
  print_speed_up(one, all);
  check_equal(reference, one, "1 GPU");
  check_equal(reference, all, title);
  std::cout << "result: (" << all.i << ", " << all.j << ") at " << significant(all.distance, 9)
            << ", the single-GPU brute force's pair and distance\n";
}

void add_host_options(CLI::App& command, HostSettings& settings) {
  command
      .add_option("--host-memory", settings.memory,
                  "where the host keeps inputs and results: pinned (page-locked, straight to "
                  "the copy engine) or pageable")
      ->capture_default_str()
      ->check(CLI::IsMember({"pinned", "pageable"}));
  command
      .add_option("--transfers", settings.transfers,
                  "overlapped (async in chunks on a copy stream, pageable memory through "
                  "pinned staging) or synchronous (plain copies before and after the kernels)")
      ->capture_default_str()
      ->check(CLI::IsMember({"overlapped", "synchronous"}));
}

void add_matmul_command(CLI::App& group) {
  auto settings = std::make_shared<MatmulSettings>();
  CLI::App* matmul = group.add_subcommand(
      "matmul", "An n×n×n matmul on one GPU, then split by rows over all: times and speed-up");
  matmul->add_option("--n", settings->n, "matrix size")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{46340}));
  matmul->add_option("--devices", settings->devices, "device ordinals (default: every device)")
      ->delimiter(',');
  matmul->add_option("--tile-width", settings->tile_width, "matmul_tiled's TILE_WIDTH")
      ->capture_default_str()
      ->check(CLI::IsMember({4, 8, 16, 32}));
  matmul->add_option("--seed", settings->seed, "seed of the random inputs")->capture_default_str();
  add_host_options(*matmul, settings->host);
  matmul->callback([settings] { run_matmul(*settings); });
}

void add_closest_pair_command(CLI::App& group) {
  auto settings = std::make_shared<ClosestPairSettings>();
  CLI::App* command = group.add_subcommand(
      "closest-pair",
      "The brute-force closest pair of n points on one GPU, then its pairs split over all: "
      "times, speed-up, and whether the pair is the single-GPU brute force's");
  command->add_option("--n", settings->n, "points")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{2147483647}));
  command->add_option("--devices", settings->devices, "device ordinals (default: every device)")
      ->delimiter(',');
  command->add_option("--base", settings->base, "closest_pair.cu's BASE (points per tile)")
      ->capture_default_str()
      ->check(CLI::IsMember({32, 64, 128, 256, 512, 1024}));
  command->add_option("--dist", settings->distribution, "uniform, normal or clustered")
      ->capture_default_str()
      ->check(CLI::IsMember({"uniform", "normal", "clustered"}));
  command->add_option("--seed", settings->seed, "seed of the random points")->capture_default_str();
  add_host_options(*command, settings->host);
  command->callback([settings] { run_closest_pair(*settings); });
}

}  // namespace

void add_multi_gpu_command(CLI::App& app) {
  CLI::App* group = app.add_subcommand("multi-gpu", "Work split over several GPUs");
  group->require_subcommand(1);
  add_matmul_command(*group);
  add_closest_pair_command(*group);
}

}  // namespace ptxrt::cli
