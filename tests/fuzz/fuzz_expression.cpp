// libFuzzer target: the expression parser and evaluator. The input is one expression; every name
// in it reads 3, so that evaluation reaches division, powers and chains. Every bad input must end
// in ptxrt::Error.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/expression.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ptxrt::Expression expression = ptxrt::Expression::parse(text);
    expression.evaluate([](std::string_view) { return std::optional<std::int64_t>(3); });
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
