#include "apps/common/sizes.hpp"

#include <algorithm>
#include <climits>
#include <limits>
#include <string>

#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

std::size_t positive_size(std::string_view what, std::int64_t value) {
  if (value < 1)
    throw Error(ErrorKind::invalid_argument,
                std::string(what) + " must be at least 1, got " + std::to_string(value));
  return static_cast<std::size_t>(value);
}

int positive_int(std::string_view what, std::int64_t value) {
  positive_size(what, value);
  if (value > INT_MAX)
    throw Error(ErrorKind::invalid_argument, std::string(what) + " = " + std::to_string(value) +
                                                 " exceeds the kernel's int limit " +
                                                 std::to_string(INT_MAX));
  return static_cast<int>(value);
}

std::size_t checked_product(std::string_view what, std::initializer_list<std::size_t> factors,
                            std::size_t element_bytes) {
  constexpr std::size_t limit = std::numeric_limits<std::size_t>::max();
  std::size_t product = 1;
  bool overflow = false;
  for (std::size_t factor : factors) {
    overflow = overflow || (factor != 0 && product > limit / factor);
    if (!overflow) product *= factor;
  }
  overflow = overflow || (element_bytes != 0 && product > limit / element_bytes);
  if (overflow) {
    std::string spelled;
    for (std::size_t factor : factors)
      spelled += (spelled.empty() ? "" : " * ") + std::to_string(factor);
    throw Error(ErrorKind::invalid_argument, std::string(what) + " = " + spelled + " elements of " +
                                                 std::to_string(element_bytes) +
                                                 " bytes overflows size_t");
  }
  return product;
}

std::uint64_t next_power_of_two(std::uint64_t count) {
  constexpr std::uint64_t largest = std::uint64_t{1} << 62;
  if (count > largest)
    throw Error(ErrorKind::invalid_argument, "cannot pad " + std::to_string(count) +
                                                 " elements to a power of two: the limit is 2^62");
  std::uint64_t power = 1;
  while (power < count) power *= 2;
  return power;
}

unsigned grid_stride_blocks(std::uint64_t count, unsigned per_block, int sm_count,
                            unsigned blocks_per_sm) {
  const std::uint64_t needed = std::max<std::uint64_t>(1, (count + per_block - 1) / per_block);
  const std::uint64_t resident = static_cast<std::uint64_t>(std::max(sm_count, 1)) * blocks_per_sm;
  return static_cast<unsigned>(std::min(needed, resident));
}

}  // namespace ptxrt::apps
