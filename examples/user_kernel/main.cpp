// Your own kernel file through ptxrt: compile kernels/polynomial.cu (which includes a header
// beside it) for this GPU with -D DEGREE, fill its __constant__ coefficient table by name, launch,
// and check every output against the CPU.
//   user_kernel_example [path/to/polynomial.cu]
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ptxrt/core.hpp"

int main(int argc, char** argv) try {
  const std::string kernel_file = argc > 1 ? argv[1] : KERNEL_FILE;
  const int degree = 7, n = 1'000'003, block = 256;  // n: not a multiple of the block
  std::mt19937 generator(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> coefficients(16), x(n);
  for (float& value : coefficients) value = uniform(generator);
  for (float& value : x) value = uniform(generator);

  ptxrt::Context context = ptxrt::Context::primary(0);
  ptxrt::Module module =
      ptxrt::Jit::shared().module(ptxrt::Program::from_file(kernel_file),
                                  {.defines = {{"DEGREE", std::to_string(degree)}}}, context);
  // Checked against the symbol's size: a table of the wrong length is an Error naming it.
  module.symbol<float>("coefficients").set(std::span<const float>(coefficients));

  ptxrt::DeviceBuffer<float> device_x(context, std::span<const float>(x));
  const std::vector<float> poison(n, std::numeric_limits<float>::quiet_NaN());
  ptxrt::DeviceBuffer<float> device_y(context, std::span<const float>(poison));
  module.kernel("evaluate_polynomial")
      .launch({.grid = {ptxrt::blocks_for(n, block)}, .block = {unsigned(block)}}, device_x,
              device_y, n);
  const std::vector<float> y = device_y.download();

  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double expected = 0;
    for (int power = degree; power >= 0; --power) expected = expected * x[i] + coefficients[power];
    const double error = std::abs(y[i] - expected);
    worst = std::isnan(y[i]) ? INFINITY : std::max(worst, error);
  }
  const bool ok = worst < 1e-5;
  std::printf("degree-%d polynomial at %d points on %s: max error %.1e: %s\n", degree, n,
              context.device().properties().name.c_str(), worst, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
} catch (const ptxrt::Error& error) {
  std::fprintf(stderr, "user_kernel_example: %s\n", error.what());
  return 1;
}
