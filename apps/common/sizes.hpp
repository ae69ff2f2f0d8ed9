// Problem sizes as the host programs take them: checked before anything touches the driver, so
// that a zero, a negative or an overflowing size is a clear Error(invalid_argument) naming the
// size, with no GPU needed. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace ptxrt::apps {

// `value` as a count, or Error(invalid_argument) "<what> must be at least 1, got <value>".
std::size_t positive_size(std::string_view what, std::int64_t value);

// `value` as a kernel's `int` parameter: positive and at most INT_MAX.
int positive_int(std::string_view what, std::int64_t value);

// The product of `factors`, or Error(invalid_argument) when it (or its byte size with
// `element_bytes`) does not fit in size_t. `what` names the product in the message ("m*k").
std::size_t checked_product(std::string_view what, std::initializer_list<std::size_t> factors,
                            std::size_t element_bytes = 1);

// The smallest power of two >= count (1 for 0); Error(invalid_argument) above 2^62.
std::uint64_t next_power_of_two(std::uint64_t count);

// Blocks for a grid-stride loop: enough to cover `count` items at `per_block` items per block,
// but no more than `blocks_per_sm` resident blocks on each of `sm_count` SMs (at least 1).
unsigned grid_stride_blocks(std::uint64_t count, unsigned per_block, int sm_count,
                            unsigned blocks_per_sm = 32);

}  // namespace ptxrt::apps
