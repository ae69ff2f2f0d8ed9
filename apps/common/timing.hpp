// Timing a launch sequence the one way every host program and benchmark does it: CUDA events on
// the context's default stream around the launches only, one untimed warm-up run first (it pays
// for module loading, first-touch page mapping and clock ramp-up), then the median of `repeats`.
#pragma once

#include <functional>
#include <vector>

#include "ptxrt/core/context.hpp"

namespace ptxrt::apps {

// The middle value (the mean of the two middle values for an even count); Error(invalid_argument)
// for no samples.
double median(std::vector<double> samples);

// Runs prepare() untimed and then launches() between two events, 1 + repeats times, and returns
// the median of the last `repeats` event times in ms. prepare() restores inputs and poisons
// outputs, so every timed run starts from the same state; both enqueue on the default stream
// (nullptr). Error(invalid_argument) when repeats < 1.
double median_launch_ms(const Context& context, int repeats, const std::function<void()>& prepare,
                        const std::function<void()>& launches);
// The same runs, every timed one's ms in run order (for spreads as well as medians).
std::vector<double> launch_times_ms(const Context& context, int repeats,
                                    const std::function<void()>& prepare,
                                    const std::function<void()>& launches);

}  // namespace ptxrt::apps
