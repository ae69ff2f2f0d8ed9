#include "apps/common/random_data.hpp"

#include <random>

namespace ptxrt::apps {

namespace {

template <typename Distribution>
std::vector<typename Distribution::result_type> draw(std::size_t count, std::uint64_t seed,
                                                     unsigned stream, Distribution distribution) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         stream};
  std::mt19937 generator(sequence);
  std::vector<typename Distribution::result_type> values(count);
  for (auto& value : values) value = distribution(generator);
  return values;
}

}  // namespace

std::vector<float> random_floats(std::size_t count, std::uint64_t seed, unsigned stream, float low,
                                 float high) {
  return draw(count, seed, stream, std::uniform_real_distribution<float>(low, high));
}

std::vector<std::uint32_t> random_uints(std::size_t count, std::uint64_t seed, unsigned stream,
                                        std::uint32_t bound) {
  return draw(count, seed, stream, std::uniform_int_distribution<std::uint32_t>(0, bound - 1));
}

}  // namespace ptxrt::apps
