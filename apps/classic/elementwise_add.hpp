// What vecadd and matadd share: c = a + b over n floats of random input, timed with c poisoned
// before every run, rated in GB/s of the minimal traffic (12 bytes per element: two reads, one
// write) and, when verifying, compared exactly with the CPU reference (one rounding per element).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "apps/common/run.hpp"
#include "ptxrt/core/context.hpp"
#include "ptxrt/core/memory.hpp"

namespace ptxrt::apps {

// Enqueues the kernel once over the device buffers a, b and c.
using AddLaunch = std::function<void(const DeviceBuffer<float>& a, const DeviceBuffer<float>& b,
                                     DeviceBuffer<float>& c)>;
// The CPU result for the host copies of a and b.
using AddReference =
    std::function<std::vector<float>(std::span<const float> a, std::span<const float> b)>;

// Fills in run's median time and rate and, with options.verify, its comparison.
void time_elementwise_add(Run& run, const Context& context, const RunOptions& options,
                          std::size_t n, const AddLaunch& launch, const AddReference& reference);

}  // namespace ptxrt::apps
