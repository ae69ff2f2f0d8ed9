// Internal: the energy and power of a kernel run back to back, read from NVML's energy counter
// over a window of whole counter steps. Internal to the tuner.
#pragma once

#include <functional>

#include "ptxrt/core/device.hpp"
#include "ptxrt/tune/launch_timer.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "tune/nvml_device.hpp"

namespace ptxrt::detail {

// `run` (one launch, about `median_ms` long) timed back to back by `timer` from one observed step
// of `nvml`'s energy counter to the first step at least policy.energy_window_ms later: the energy
// per run, the mean power, and the SM clock and temperature after. NVML's counter advances in
// steps (about every 100 ms on Hopper), so a span read on either side of a fixed time would see
// zero, one or two steps whatever the kernel drew. Throws Error (driver) naming `device` when the
// counter stands still for 2 s past the window.
PowerObservation observe_power(const NvmlDevice& nvml, LaunchTimer& timer, const Device& device,
                               const std::function<void()>& run, double median_ms,
                               const TimingPolicy& policy);

}  // namespace ptxrt::detail
