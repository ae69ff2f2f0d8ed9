// Eight threads, one Jit, three specializations of the tiled matmul of ptx_src/ (TILE_WIDTH 8, 16,
// 32), all asked for at once: the Jit compiles (or loads from its disk cache) each specialization
// once and every other request waits for that one result. Each thread multiplies matrices of its
// own ragged sizes on its own stream and checks every product against the CPU.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ptxrt/core.hpp"

namespace {

constexpr int thread_count = 8, rounds = 4;
constexpr unsigned tiles[] = {8, 16, 32};

// One product on `stream`, checked element by element against a double-precision CPU product.
bool multiply_and_check(ptxrt::Jit& jit, const ptxrt::Program& program,
                        const ptxrt::Context& context, const ptxrt::Stream& stream, unsigned tile,
                        std::mt19937& generator) {
  std::uniform_int_distribution<int> size(33, 300);
  const int m = size(generator), n = size(generator), k = size(generator);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(std::size_t(m) * k), b(std::size_t(k) * n);
  for (float& value : a) value = uniform(generator);
  for (float& value : b) value = uniform(generator);

  ptxrt::Kernel matmul = jit.kernel(program, {.defines = {{"TILE_WIDTH", std::to_string(tile)}}},
                                    context, "matmul_tiled");
  ptxrt::DeviceBuffer<float> device_a(context, std::span<const float>(a));
  ptxrt::DeviceBuffer<float> device_b(context, std::span<const float>(b));
  const std::vector<float> poison(std::size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
  ptxrt::DeviceBuffer<float> device_c(context, std::span<const float>(poison));
  matmul.launch({.grid = {ptxrt::blocks_for(n, tile), ptxrt::blocks_for(m, tile)},
                 .block = {tile, tile},
                 .stream = stream},
                device_a, device_b, device_c, m, n, k);
  stream.synchronize();
  const std::vector<float> c = device_c.download();

  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double expected = 0;
      for (int p = 0; p < k; ++p)
        expected += double(a[std::size_t(i) * k + p]) * b[std::size_t(p) * n + j];
      if (!(std::abs(c[std::size_t(i) * n + j] - expected) <= 1e-4 * (1 + std::abs(expected))))
        return false;
    }
  return true;
}

}  // namespace

int main(int argc, char** argv) try {
  ptxrt::Context context = ptxrt::Context::primary(0);
  ptxrt::Jit jit;  // shared by every thread: its caches are thread-safe and single-flight
  // Read once and shared by every thread, as an application would.
  const ptxrt::Program program = ptxrt::Program::from_file(argc > 1 ? argv[1] : KERNEL_FILE);
  std::atomic<int> right{0}, wrong{0};
  std::vector<std::jthread> threads;
  for (int index = 0; index < thread_count; ++index)
    threads.emplace_back([&, index] {
      std::mt19937 generator(std::random_device{}() + index);
      ptxrt::Stream stream(context);  // a stream belongs to one thread at a time
      for (int round = 0; round < rounds; ++round) {
        const unsigned tile = tiles[(index + round) % std::size(tiles)];
        (multiply_and_check(jit, program, context, stream, tile, generator) ? right : wrong)++;
      }
    });
  threads.clear();  // joins

  // Each specialization loaded once, however many threads asked for it at the same moment.
  const ptxrt::JitStats stats = jit.stats();
  const bool ok = wrong == 0 && stats.module_loads == std::size(tiles);
  std::printf(
      "%d threads x %d products on %s: %d right, %d wrong; %zu specializations: %llu "
      "compiled, %llu from the disk cache, %llu modules loaded: %s\n",
      thread_count, rounds, context.device().properties().name.c_str(), right.load(), wrong.load(),
      std::size(tiles), static_cast<unsigned long long>(stats.compiles),
      static_cast<unsigned long long>(stats.disk_hits),
      static_cast<unsigned long long>(stats.module_loads), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
} catch (const ptxrt::Error& error) {
  std::fprintf(stderr, "threads_example: %s\n", error.what());
  return 1;
}
