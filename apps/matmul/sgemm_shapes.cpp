#include "apps/matmul/sgemm_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

namespace ptxrt::apps {

namespace {

// std::mt19937_64's sequence is fixed by the standard; the standard distributions are not, so
// the draws map its output themselves: the same shapes from every standard library.
class ShapeDraw {
 public:
  explicit ShapeDraw(std::uint64_t seed) : generator_(seed) {}

  // Uniform in [0, 1), from the top 53 bits.
  double unit() { return static_cast<double>(generator_() >> 11) * 0x1p-53; }

  // Log-uniform in [low, high], rounded to an integer.
  int log_uniform(int low, int high) {
    const double log_low = std::log(static_cast<double>(low));
    const double log_high = std::log(static_cast<double>(high));
    const long value = std::lround(std::exp(log_low + unit() * (log_high - log_low)));
    return static_cast<int>(std::clamp<long>(value, low, high));
  }

  // Uniform in [low, high].
  int uniform(int low, int high) {
    const auto span = static_cast<double>(high - low + 1);
    return std::min(high, low + static_cast<int>(unit() * span));
  }

  bool coin() { return unit() < 0.5; }

 private:
  std::mt19937_64 generator_;
};

constexpr int smallest = 16, largest = 16384;

SgemmBenchSize draw(SgemmDrawnClass drawn, ShapeDraw& random) {
  switch (drawn) {
    case SgemmDrawnClass::log_uniform:
      return {random.log_uniform(smallest, largest), random.log_uniform(smallest, largest),
              random.log_uniform(smallest, largest)};
    case SgemmDrawnClass::deep: {
      // Few outputs, each a long dot product: the tiles of C alone cannot fill the SMs.
      const int m = random.log_uniform(smallest, 256), n = random.log_uniform(smallest, 256);
      return {m, n, random.log_uniform(4096, 65536)};
    }
    case SgemmDrawnClass::skinny: {
      const int thin = random.log_uniform(smallest, 128), wide = random.log_uniform(1024, largest);
      const int k = random.log_uniform(256, 8192);
      return random.coin() ? SgemmBenchSize{thin, wide, k} : SgemmBenchSize{wide, thin, k};
    }
    case SgemmDrawnClass::flat:
      return {random.log_uniform(1024, largest), random.log_uniform(1024, largest),
              random.log_uniform(smallest, 256)};
    case SgemmDrawnClass::ragged: {
      // Millions of outputs, K in the thousands, no side a multiple of 32: edge tiles everywhere.
      const auto side = [&](int low, int high) {
        const int value = random.uniform(low, high);
        return value % 32 == 0 ? value + 1 : value;
      };
      const int m = side(1000, 6000), n = side(1000, 6000);
      return {m, n, side(1000, 6000)};
    }
    case SgemmDrawnClass::small_square: {
      const int side = random.log_uniform(64, 1024);
      return {side, side, side};
    }
  }
  return {smallest, smallest, smallest};
}

}  // namespace

const char* to_string(SgemmDrawnClass drawn) {
  switch (drawn) {
    case SgemmDrawnClass::log_uniform:
      return "log-uniform";
    case SgemmDrawnClass::deep:
      return "deep";
    case SgemmDrawnClass::skinny:
      return "skinny";
    case SgemmDrawnClass::flat:
      return "flat";
    case SgemmDrawnClass::ragged:
      return "ragged";
    case SgemmDrawnClass::small_square:
      return "small-square";
  }
  return "unknown";
}

std::optional<SgemmDrawnClass> parse_sgemm_drawn_class(std::string_view name) {
  for (const SgemmDrawnClass drawn : {SgemmDrawnClass::log_uniform, SgemmDrawnClass::deep,
                                      SgemmDrawnClass::skinny, SgemmDrawnClass::flat,
                                      SgemmDrawnClass::ragged, SgemmDrawnClass::small_square})
    if (name == to_string(drawn)) return drawn;
  return std::nullopt;
}

std::vector<SgemmDrawnShape> draw_sgemm_shapes(int count, std::uint64_t seed,
                                               std::optional<SgemmDrawnClass> only) {
  ShapeDraw random(seed);
  std::vector<SgemmDrawnShape> shapes;
  for (int i = 0; i < count; ++i) {
    const SgemmDrawnClass drawn =
        only         ? *only
        : i % 2 == 0 ? SgemmDrawnClass::log_uniform
                     : sgemm_drawn_classes[static_cast<std::size_t>(i / 2) %
                                           sgemm_drawn_classes.size()];
    shapes.push_back({draw(drawn, random), drawn});
  }
  return shapes;
}

}  // namespace ptxrt::apps
