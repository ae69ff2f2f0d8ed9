#include "host/common/random_data.hpp"

#include <random>

namespace ptxrt::host {

std::vector<float> random_floats(std::size_t count, std::uint64_t seed, unsigned stream, float low,
                                 float high) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         stream};
  std::mt19937 generator(sequence);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

}  // namespace ptxrt::host
