#include "tools/multi_gpu.hpp"

#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>

#include "host/multi_gpu.hpp"
#include "ptxrt/error.hpp"

namespace ptxrt::cli {
namespace {

struct MatmulSettings {
  std::size_t n = 8192;
  std::vector<int> devices;
  int tile_width = 16;
  unsigned seed = 1;
};

std::vector<float> random_matrix(std::size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

void print_run(const char* title, const host::MultiGpuMatmul& run) {
  std::cout << title << ": " << format("%.1f", run.wall_ms) << " ms end to end, slowest kernel "
            << format("%.1f", run.slowest_kernel_ms()) << " ms\n";
  for (const host::DeviceShare& share : run.shares)
    std::cout << "  device " << share.device << ": rows " << share.rows.first << ".."
              << share.rows.first + share.rows.count << ", upload "
              << format("%.1f", share.upload_ms) << " ms, kernel "
              << format("%.1f", share.kernel_ms) << " ms, download "
              << format("%.1f", share.download_ms) << " ms\n";
}

// Bitwise, so that -0 against +0 or a NaN counts as a difference.
void check_equal(const std::vector<float>& one, const std::vector<float>& all) {
  for (std::size_t i = 0; i < one.size(); ++i)
    if (std::memcmp(&one[i], &all[i], sizeof(float)) != 0)
      throw Error(ErrorKind::invalid_argument,
                  "the split result differs from one GPU's at element " + std::to_string(i) +
                      ": " + std::to_string(all[i]) + " instead of " + std::to_string(one[i]));
}

void run_matmul(const MatmulSettings& settings) {
  const std::size_t n = settings.n;
  const std::vector<int> devices =
      settings.devices.empty() ? host::all_devices() : settings.devices;
  const std::vector<float> a = random_matrix(n * n, settings.seed);
  const std::vector<float> b = random_matrix(n * n, settings.seed + 1);
  Jit& jit = Jit::shared();
  // Untimed: compiles (or reads the disk cache) and loads the kernel on every device.
  const std::size_t small = 64;
  const std::vector<float> warm(small * small, 1.0f);
  host::split_matmul(jit, warm, warm, small, small, small, {devices, settings.tile_width});

  std::cout << "C = A·B, " << n << "x" << n << "x" << n << " fp32, matmul_tiled TILE_WIDTH="
            << settings.tile_width << "\n";
  const host::MultiGpuMatmul one =
      host::split_matmul(jit, a, b, n, n, n, {{devices.front()}, settings.tile_width});
  print_run("1 GPU", one);
  const host::MultiGpuMatmul all =
      host::split_matmul(jit, a, b, n, n, n, {devices, settings.tile_width});
  print_run((std::to_string(devices.size()) + " GPU(s)").c_str(), all);
  std::cout << "speed-up: " << format("%.2f", one.wall_ms / all.wall_ms) << "x end to end, "
            << format("%.2f", one.slowest_kernel_ms() / all.slowest_kernel_ms())
            << "x in the kernels\n";
  check_equal(one.c, all.c);
  std::cout << "result: bitwise equal to one GPU's\n";
}

}  // namespace

void add_multi_gpu_command(CLI::App& app) {
  CLI::App* group = app.add_subcommand("multi-gpu", "Work split over several GPUs");
  group->require_subcommand(1);
  auto settings = std::make_shared<MatmulSettings>();
  CLI::App* matmul = group->add_subcommand(
      "matmul", "An n×n×n matmul on one GPU, then split by rows over all: times and speed-up");
  matmul->add_option("--n", settings->n, "matrix size")->capture_default_str()->check(
      CLI::Range(std::size_t{1}, std::size_t{46340}));
  matmul->add_option("--devices", settings->devices, "device ordinals (default: every device)")
      ->delimiter(',');
  matmul->add_option("--tile-width", settings->tile_width, "matmul_tiled's TILE_WIDTH")
      ->capture_default_str()
      ->check(CLI::IsMember({4, 8, 16, 32}));
  matmul->add_option("--seed", settings->seed, "seed of the random inputs")->capture_default_str();
  matmul->callback([settings] { run_matmul(*settings); });
}

}  // namespace ptxrt::cli
