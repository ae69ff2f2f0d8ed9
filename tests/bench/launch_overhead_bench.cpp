// The cost of a launch through ptxrt's typed, checked API against a raw cuLaunchKernel of the
// same empty kernel in the same process: host time per launch, the GPU drained at the end.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "driver/driver_api.hpp"
#include "empty_kernel.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/ptxrt.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// A batch short enough that the driver's launch queue never fills: a full queue would time the
// GPU draining it, the same for both, instead of the host's cost of a launch.
constexpr int batch_launches = 256;
constexpr int batches = 2000;

template <typename Launch>
double batch_microseconds(const ptxrt::Context& context, Launch launch) {
  const auto start = Clock::now();
  for (int i = 0; i < batch_launches; ++i) launch();
  const double elapsed = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  context.synchronize();
  return elapsed / batch_launches;
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

}  // namespace

int main() {
  if (const ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::printf("launch overhead: skipped (%s)\n", status.problem.c_str());
    return 0;
  }
  const ptxrt::Context context = ptxrt::Context::primary(0);
  const ptxrt::Kernel kernel = ptxrt::bench::empty_kernel(context);
  ptxrt::DeviceBuffer<float> out(context, 1);
  const int n = 1;
  ptxrt::ContextGuard guard(context);
  CUdeviceptr address = out.address();
  void* parameters[] = {&address, const_cast<int*>(&n)};
  const auto& api = ptxrt::detail::driver();
  const auto raw = [&] {
    api.cuLaunchKernel(kernel.handle(), 1, 1, 1, 32, 1, 1, 0, nullptr, parameters, nullptr);
  };
  const auto typed = [&] { kernel.launch({.grid = 1, .block = 32}, out, n); };
  for (int i = 0; i < 20; ++i) batch_microseconds(context, raw), batch_microseconds(context, typed);
  // Batches alternate, so drift in the host's clock or load falls on both alike.
  std::vector<double> raw_us, typed_us;
  for (int i = 0; i < batches; ++i) {
    raw_us.push_back(batch_microseconds(context, raw));
    typed_us.push_back(batch_microseconds(context, typed));
  }
  const double raw_median = median(raw_us), typed_median = median(typed_us);
  std::printf("empty-kernel launch, host time per launch (median of %d alternating batches of %d)\n",
              batches, batch_launches);
  std::printf("  raw cuLaunchKernel:      %.3f us\n", raw_median);
  std::printf("  ptxrt Kernel::launch:    %.3f us  (%.2fx raw)\n", typed_median,
              typed_median / raw_median);
  return 0;
}
