// The README's library example, whole: upload two matrices, JIT-compile ptx_src/matmul_tiled.cu
// for this GPU, launch it, download the product and check it against the CPU.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ptxrt/core.hpp"

namespace {

// The largest |gpu - cpu| over the matrix, relative to the largest |cpu|; the CPU sums in double.
double relative_error(const std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>& c, int m, int n, int k) {
  double worst = 0, largest = 0;
  std::vector<double> row(n);
  for (int i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j)
        row[j] += double(a[std::size_t(i) * k + p]) * b[std::size_t(p) * n + j];
    for (int j = 0; j < n; ++j) {
      double gpu = c[std::size_t(i) * n + j];
      worst = std::isnan(gpu) ? INFINITY : std::max(worst, std::abs(gpu - row[j]));
      largest = std::max(largest, std::abs(row[j]));
    }
  }
  return worst / largest;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string kernel_file = argc > 1 ? argv[1] : KERNEL_FILE;
  // Not multiples of the tile: the kernel guards every edge.
  const int m = 1000, n = 777, k = 513, tile = 16;
  std::mt19937 generator(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> host_a(std::size_t(m) * k), host_b(std::size_t(k) * n);
  for (float& value : host_a) value = uniform(generator);
  for (float& value : host_b) value = uniform(generator);

  ptxrt::Context context = ptxrt::Context::primary(0);
  ptxrt::Kernel matmul = ptxrt::Jit::shared().kernel(
      ptxrt::Program::from_file(kernel_file), {.defines = {{"TILE_WIDTH", std::to_string(tile)}}},
      context, "matmul_tiled");

  ptxrt::DeviceBuffer<float> a(context, std::span<const float>(host_a));
  ptxrt::DeviceBuffer<float> b(context, std::span<const float>(host_b));
  // NaN everywhere first, so that an element the kernel never writes fails the check.
  const std::vector<float> poison(std::size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
  ptxrt::DeviceBuffer<float> c(context, std::span<const float>(poison));
  matmul.launch({.grid = {ptxrt::blocks_for(n, tile), ptxrt::blocks_for(m, tile)},
                 .block = {unsigned(tile), unsigned(tile)}},
                a, b, c, m, n, k);
  std::vector<float> result = c.download();

  const double error = relative_error(host_a, host_b, result, m, n, k);
  const bool ok = error < 1e-5;
  std::printf("matmul %dx%dx%d on %s (%s): relative error %.1e: %s\n", m, n, k,
              context.device().properties().name.c_str(),
              context.device().properties().arch().c_str(), error, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
} catch (const ptxrt::Error& error) {
  std::fprintf(stderr, "matmul_example: %s\n", error.what());
  return 1;
}
