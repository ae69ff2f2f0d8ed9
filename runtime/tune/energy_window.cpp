#include "tune/energy_window.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"
#include "tune/seconds_since.hpp"

namespace ptxrt::detail {

namespace {

// Kernel time between two reads of the energy counter: short against its step, so that a step
// is placed within a batch.
constexpr double energy_batch_ms = 2.0;
// Bounds the batch of a kernel that takes next to no time.
constexpr double max_batch_runs = 1e5;
// How long past the window the counter may stand still before the observation is refused.
constexpr double counter_silence_s = 2.0;

}  // namespace

PowerObservation observe_power(const NvmlDevice& nvml, LaunchTimer& timer, const Device& device,
                               const std::function<void()>& run, double median_ms,
                               const TimingPolicy& policy) {
  const int batch_runs =
      static_cast<int>(std::clamp(std::ceil(energy_batch_ms / median_ms), 1.0, max_batch_runs));
  const auto started = std::chrono::steady_clock::now();
  const double give_up_s = policy.energy_window_ms * 1e-3 + counter_silence_s;
  // Back to back, not flushed: the flushes would add their own energy. Runs batches until the
  // counter leaves `energy`; its new value, the runs added to `runs`.
  const auto next_step = [&](double energy, long long& runs) {
    for (;;) {
      timer.time_back_to_back(run, batch_runs);
      runs += batch_runs;
      if (const double now = nvml.energy_j(); now != energy) return now;
      if (seconds_since(started) > give_up_s)
        throw Error(ErrorKind::driver, "observing power: NVML's energy counter of device " +
                                           std::to_string(device.ordinal()) + " (" +
                                           device.properties().name + ") did not advance in " +
                                           number_text(give_up_s) + " s of kernel runs");
    }
  };
  long long runs = 0;
  const double first = next_step(nvml.energy_j(), runs);
  const auto window_start = std::chrono::steady_clock::now();
  runs = 0;
  double last = first;
  while (seconds_since(window_start) * 1e3 < policy.energy_window_ms) last = next_step(last, runs);
  const double energy = last - first;
  return {.energy_j = energy / static_cast<double>(runs),
          .power_w = energy / seconds_since(window_start),
          .sm_clock_mhz = nvml.sm_clock_mhz(),
          .temperature_c = nvml.temperature_c()};
}

}  // namespace ptxrt::detail
