// `ptxrt demo`: the main job of the README. With a GPU it compiles the seed's tiled matmul for
// the device, runs it on fresh random data of an awkward size, checks it against the CPU and says
// how fast it was; without one it says so and shows what needs no GPU: the compile and the
// resource report with occupancy.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/reference.hpp"
#include "cli.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/ptxrt.hpp"

namespace ptxrt::cli {
namespace {

constexpr int tile_widths[] = {8, 16, 32};

void show_resources(const Target& target) {
  const Program program = apps::builtin_program("matmul_tiled");
  const auto [major, minor] = compute_capability_of(target.arch);
  std::vector<std::vector<std::string>> rows;
  for (int tile : tile_widths) {
    CompileOptions options{.defines = {{"TILE_WIDTH", std::to_string(tile)}}, .target = target};
    const auto start = std::chrono::steady_clock::now();
    const Image image = compile(program, options);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const KernelResources kernel = image_resources(image).at(0);
    const Occupancy occupancy = compute_occupancy(arch_limits(major, minor), kernel, tile * tile, 0);
    char compile_ms[32], percent[32];
    std::snprintf(compile_ms, sizeof compile_ms, "%.0f ms", ms);
    std::snprintf(percent, sizeof percent, "%.0f%%", 100 * occupancy.fraction);
    rows.push_back({std::to_string(tile), compile_ms, std::to_string(kernel.registers),
                    std::to_string(kernel.static_shared_bytes),
                    std::to_string(kernel.spill_store_bytes.value_or(0)),
                    std::to_string(occupancy.active_blocks_per_sm), percent,
                    std::string(to_string(occupancy.limit))});
  }
  std::cout << "matmul_tiled.cu compiled for " << target.arch << " (NVRTC "
            << format_cuda_version(nvrtc_version()) << "):\n";
  print_table(std::cout,
              {"TILE_WIDTH", "compile", "registers", "smem B", "spills B", "blocks/SM",
               "occupancy", "limited by"},
              rows);
}

bool run_on_gpu() {
  const Context context = Context::primary(0);
  const DeviceProperties& device = context.device().properties();
  const std::size_t m = 1000, n = 777, k = 513;
  std::mt19937 generator(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n);
  for (float& value : a) value = uniform(generator);
  for (float& value : b) value = uniform(generator);
  const std::vector<float> expected = apps::matmul(a, b, m, n, k);

  DeviceBuffer<float> device_a(context, std::span<const float>(a));
  DeviceBuffer<float> device_b(context, std::span<const float>(b));
  DeviceBuffer<float> device_c(context, m * n);
  std::cout << "\nOn " << device.name << " (" << device.arch() << "), C = A·B with M=" << m
            << " N=" << n << " K=" << k << " (not multiples of any tile):\n";
  bool all_passed = true;
  std::vector<std::vector<std::string>> rows;
  for (int tile : tile_widths) {
    const Kernel kernel = Jit::shared().kernel(
        apps::builtin_program("matmul_tiled"), {.defines = {{"TILE_WIDTH", std::to_string(tile)}}},
        context, "matmul_tiled");
    const auto t = static_cast<unsigned>(tile);
    const LaunchConfig config{.grid = {blocks_for(n, t), blocks_for(m, t)}, .block = {t, t}};
    device_c.memory().fill_words(0x7fc00000u);  // NaN: an element left unwritten fails the check
    Event start(context), stop(context);
    start.record();
    kernel.launch(config, device_a, device_b, device_c, static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(k));
    stop.record();
    const float ms = Event::elapsed_ms(start, stop);
    const apps::Deviation deviation = apps::compare(device_c.download(), expected);
    const bool passed = deviation.max_relative_error <= 1e-4;
    all_passed = all_passed && passed;
    char time[32], rate[32], error[32];
    std::snprintf(time, sizeof time, "%.3f ms", ms);
    std::snprintf(rate, sizeof rate, "%.0f GFLOP/s", 2.0 * m * n * k / ms / 1e6);
    std::snprintf(error, sizeof error, "%.1e", deviation.max_relative_error);
    rows.push_back({std::to_string(tile), to_string(config.grid), to_string(config.block), time,
                    rate, error, passed ? "PASS" : "FAIL"});
  }
  print_table(std::cout, {"TILE_WIDTH", "grid", "block", "time (1st run)", "rate", "max rel err", ""},
              rows);
  return all_passed;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  CLI::App* demo = app.add_subcommand(
      "demo", "Compile the tiled matmul, report its resources, and (with a GPU) run and verify it");
  demo->callback([] {
    const DriverStatus status = driver_status();
    std::cout << "ptxrt demo\n";
    if (status.usable)
      std::cout << "driver: CUDA " << format_cuda_version(status.version) << ", "
                << status.device_count << " device(s)\n\n";
    else
      std::cout << "no GPU here: " << status.problem
                << "\nShowing what needs no GPU: compiling for " << fallback_arch
                << " and the resource report.\n\n";
    // Without a GPU the reason is said above, so not again by --arch auto's note.
    show_resources(
        choose_target(status.usable ? "auto" : std::string(fallback_arch), ImageFormat::cubin));
    if (!status.usable) return;
    if (!run_on_gpu()) throw CLI::RuntimeError(1);
  });
}

}  // namespace ptxrt::cli
