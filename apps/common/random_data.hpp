// Reproducible random inputs: the same (seed, stream) gives the same values on every platform
// run with the same standard library. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptxrt::apps {

// `count` floats uniform in [low, high). `stream` tells apart the inputs of one run (a and b).
std::vector<float> random_floats(std::size_t count, std::uint64_t seed, unsigned stream = 0,
                                 float low = -1.0f, float high = 1.0f);
// `count` integers uniform in [0, bound).
std::vector<std::uint32_t> random_uints(std::size_t count, std::uint64_t seed, unsigned stream,
                                        std::uint32_t bound);

}  // namespace ptxrt::apps
