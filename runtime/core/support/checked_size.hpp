// Internal: sizes computed from numbers that arrive from outside (a buffer's element count from a
// problem file, a count times an element size, offsets read from a device object). Every product
// and sum is checked, so that an overflow is an error naming the input rather than a short
// allocation that is then written past.
#pragma once

#include <cstdint>
#include <optional>

namespace ptxrt::detail {

inline std::optional<std::uint64_t> checked_product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

inline std::optional<std::uint64_t> checked_sum(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// Whether [offset, offset + size) lies inside a buffer of `total` bytes, without overflowing.
inline bool range_inside(std::uint64_t offset, std::uint64_t size, std::uint64_t total) {
  return offset <= total && size <= total - offset;
}

}  // namespace ptxrt::detail
