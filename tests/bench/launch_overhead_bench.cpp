// The cost of a launch through ptxrt's typed, checked API against a raw cuLaunchKernel of the
// same empty kernel in the same process: host time per launch, the GPU drained at the end.
#include <chrono>
#include <cstdio>

#include "driver_api.hpp"
#include "ptxrt/driver.hpp"
#include "ptxrt/jit.hpp"
#include "ptxrt/ptxrt.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <typename Launch>
double microseconds_per_launch(const ptxrt::Context& context, int launches, Launch launch) {
  for (int i = 0; i < 1000; ++i) launch();  // warm-up
  context.synchronize();
  const auto start = Clock::now();
  for (int i = 0; i < launches; ++i) launch();
  context.synchronize();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / launches;
}

}  // namespace

int main() {
  if (const ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::printf("launch overhead: skipped (%s)\n", status.problem.c_str());
    return 0;
  }
  const ptxrt::Context context = ptxrt::Context::primary(0);
  ptxrt::Jit jit([] {
    ptxrt::JitOptions options;
    options.cache_directory.clear();
    return options;
  }());
  const ptxrt::Kernel kernel = jit.kernel(
      ptxrt::Program::from_string(
          "extern \"C\" __global__ void empty(float* out, int n) { if (n < 0) out[0] = 1.0f; }",
          "empty.cu"),
      {}, context, "empty");
  ptxrt::DeviceBuffer<float> out(context, 1);
  const int n = 1;
  constexpr int launches = 200000;
  double raw_best = 1e9, typed_best = 1e9;
  // Alternate the two several times and keep each one's best: the host's noise only adds.
  for (int round = 0; round < 5; ++round) {
    ptxrt::ContextGuard guard(context);
    CUdeviceptr address = out.address();
    void* parameters[] = {&address, const_cast<int*>(&n)};
    const auto& api = ptxrt::detail::driver();
    raw_best = std::min(raw_best, microseconds_per_launch(context, launches, [&] {
                          api.cuLaunchKernel(kernel.handle(), 1, 1, 1, 32, 1, 1, 0, nullptr,
                                             parameters, nullptr);
                        }));
    typed_best = std::min(typed_best, microseconds_per_launch(context, launches, [&] {
                            kernel.launch({.grid = 1, .block = 32}, out, n);
                          }));
  }
  std::printf("empty-kernel launch, host time per launch (best of 5 x %d)\n", launches);
  std::printf("  raw cuLaunchKernel:      %.3f us\n", raw_best);
  std::printf("  ptxrt Kernel::launch:    %.3f us  (%.2fx raw)\n", typed_best,
              typed_best / raw_best);
  return 0;
}
