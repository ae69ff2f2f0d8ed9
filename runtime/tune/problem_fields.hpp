// How a problem's messages name its parts, as the problem file does.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "support/quoted.hpp"

namespace ptxrt::detail {

// An argument's or a symbol's place in its list: "arguments[2]".
inline std::string argument_field(std::size_t index) {
  return "arguments[" + std::to_string(index) + "]";
}
inline std::string symbol_field(std::size_t index) {
  return "symbols[" + std::to_string(index) + "]";
}

// A list of names for a message; a problem may have thousands, so it is bounded too.
inline std::string join_names(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
  return text.empty() ? "none" : printable(text, 400);
}

}  // namespace ptxrt::detail
