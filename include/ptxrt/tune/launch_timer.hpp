// How the tuner times one launch on the GPU: CUDA events around the launch alone on the default
// stream, with the L2 flushed before (twice its size written), so that no run finds its inputs
// in L2 left there by the one before, or warm (TimingPolicy::l2), as the run before left it. And
// the Measurement a timing makes.
//
// Either way the start event waits in the stream behind work that keeps the GPU busy while the
// host submits the launch: the flush, or when warm a 100 µs wait on the GPU's clock that touches
// no memory. Recorded on an idle GPU, the start event would count the host's time to submit the
// launch (4 to 15 µs a run on an H200, in a tuner whose other threads compile) as the kernel's.
//
// Thread safety: a LaunchTimer belongs to one thread; it holds its context's memory and events.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/module.hpp"
#include "ptxrt/core/stream.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuner.hpp"

namespace ptxrt {

class PTXRT_API LaunchTimer {
 public:
  explicit LaunchTimer(const Context& context);
  // Writes over the L2 (twice its size): what sample() does before each run.
  void flush_l2();
  // One run of `launch` in milliseconds: the L2 flushed first, or as the run before left it.
  double sample(const std::function<void()>& launch, L2Mode l2 = L2Mode::flush);
  // `runs` runs of `launch` back to back (warm), in milliseconds together: an energy window.
  double time_back_to_back(const std::function<void()>& launch, int runs);

 private:
  DeviceMemory scratch_;
  std::uint8_t value_ = 0;
  Module hold_module_;
  Kernel hold_;  // spins for its argument's nanoseconds on one thread
  Event start_;
  Event end_;
};

// A timed config's Measurement: ok (or cut) with the timing's median, spread and runs, and the
// rate `work` per run makes in units of `unit_scale` per second ("GFLOP/s": 1e9); what the
// timing says about itself (cut, a spread that did not settle) goes in the detail.
PTXRT_API Measurement timed_measurement(const TimingResult& timing, double work,
                                        double unit_scale, std::string unit);

// Whether power can be observed here (TimingPolicy::observe_power): NVML (libnvidia-ml.so.1)
// loads and starts. Throws Error (no_driver) naming `user`, the flag or field that asked, when
// not; for a tune to check before it starts.
PTXRT_API void require_power_observation(std::string_view user);

}  // namespace ptxrt
