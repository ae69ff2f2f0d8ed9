// A tuning problem's sizes as the command line and the worker's arguments write them.
#include <charconv>
#include <string>
#include <string_view>

#include "ptxrt/core/manifest.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "support/quoted.hpp"

namespace ptxrt {

ProblemSizes parse_problem_sizes(std::string_view text) {
  ProblemSizes sizes;
  for (std::string_view rest = text; !rest.empty();) {
    const std::size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    const std::size_t equals = part.find('=');
    const std::string name(part.substr(0, equals));
    const std::string_view number =
        equals == std::string_view::npos ? std::string_view() : part.substr(equals + 1);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (!is_identifier(name) || equals == std::string_view::npos)
      throw Error(ErrorKind::invalid_argument,
                  "size " + detail::quoted(part) + ": expected NAME=VALUE, as in W=4096,H=4096");
    if (error != std::errc() || end != number.data() + number.size() || value < 1 ||
        value > max_problem_size)
      throw Error(ErrorKind::invalid_argument, "size " + detail::quoted(part) + ": " +
                                                   detail::quoted(number) +
                                                   " is not a whole number from 1 to 2^62");
    if (!sizes.emplace(name, value).second)
      throw Error(ErrorKind::invalid_argument,
                  "size " + detail::printable(name) + " is given twice in " + detail::quoted(text));
  }
  if (sizes.empty())
    throw Error(ErrorKind::invalid_argument, "no size given: expected NAME=VALUE[,NAME=VALUE...]");
  return sizes;
}

std::string format_problem_sizes(const ProblemSizes& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes)
    text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return text;
}

}  // namespace ptxrt
