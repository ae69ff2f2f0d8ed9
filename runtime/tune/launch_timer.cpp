#include "ptxrt/tune/launch_timer.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "tune/nvml_device.hpp"

namespace ptxrt {

namespace {

// One thread that spins on the GPU's nanosecond clock: PTX for any device the driver runs, which
// JIT-compiles it once per LaunchTimer.
constexpr std::string_view hold_ptx = R"(.version 6.0
.target sm_50
.address_size 64
.visible .entry ptxrt_hold(.param .u64 nanoseconds)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [nanoseconds];
  mov.u64 %rd2, %globaltimer;
SPIN:
  mov.u64 %rd3, %globaltimer;
  sub.s64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra SPIN;
  ret;
}
)";

// Longer than the host takes to record an event and submit a launch, with room for a busy host.
constexpr std::uint64_t hold_nanoseconds = 100'000;

}  // namespace

LaunchTimer::LaunchTimer(const Context& context)
    : scratch_(context,
               2 * std::max(context.device().properties().l2_cache_bytes, std::size_t{1} << 20)),
      hold_module_(Module::load(context, hold_ptx, {}, "the launch timer's hold")),
      hold_(hold_module_.kernel("ptxrt_hold")),
      start_(context),
      end_(context) {}

void LaunchTimer::flush_l2() { scratch_.fill_bytes(++value_); }

double LaunchTimer::sample(const std::function<void()>& launch, L2Mode l2) {
  if (l2 == L2Mode::flush)
    flush_l2();
  else
    hold_.launch({.grid = 1, .block = 1}, hold_nanoseconds);
  return time_back_to_back(launch, 1);
}

double LaunchTimer::time_back_to_back(const std::function<void()>& launch, int runs) {
  start_.record();
  for (int run = 0; run < runs; ++run) launch();
  end_.record();
  return Event::elapsed_ms(start_, end_);
}

void require_power_observation(std::string_view user) { detail::require_nvml(user); }

Measurement timed_measurement(const TimingResult& timing, double work, double unit_scale,
                              std::string unit) {
  Measurement measurement;
  measurement.status = timing.cut ? MeasurementStatus::cut : MeasurementStatus::ok;
  measurement.median_ms = timing.median_ms;
  measurement.spread = timing.spread;
  measurement.runs = timing.runs;
  measurement.rate = timing.median_ms > 0.0 ? work / (timing.median_ms * 1e-3) / unit_scale : 0.0;
  measurement.rate_unit = std::move(unit);
  if (timing.cut)
    measurement.detail = "cut after " + std::to_string(timing.runs) + " runs: slower than the best";
  else if (!timing.converged)
    measurement.detail = "spread " + std::to_string(timing.spread * 100.0) + "% after " +
                         std::to_string(timing.runs) + " runs";
  return measurement;
}

}  // namespace ptxrt
