// Internal: JSON from outside the process (a problem file, a tuning database, a measurement that
// another process hands over) parsed within bounds, SQLite's way: a document nested deeper than
// max_json_depth is refused before nlohmann builds anything, with the limit and the place in the
// message. nlohmann's parser keeps its own stack, but what reads a document afterwards recurses
// (the readers, dump), and a document nested 100,000 deep would overflow the stack there.
//
// Every JSON reader of the library parses through try_parse_json, and echoes a value it refuses
// through describe_json, whose text is bounded whatever the value holds.
//
// Thread safety: stateless; safe from any thread.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "support/quoted.hpp"

namespace ptxrt::detail {

// The deepest nesting ptxrt reads; its own files nest 5 deep at most.
inline constexpr std::size_t max_json_depth = 64;

// Where and why a text was refused: a 1-based line and column, and the problem ("not valid
// JSON: ..." or the depth limit), bounded in length.
struct JsonFault {
  std::size_t line = 0;
  std::size_t column = 0;
  std::string problem;
};

// `text` parsed (Json: nlohmann::json or nlohmann::ordered_json), or nothing with `fault` said.
template <typename Json>
std::optional<Json> try_parse_json(std::string_view text, JsonFault& fault);

// A value as a message shows it: a string quoted and bounded, a list or an object by its size,
// anything else as JSON writes it (null, true, 1e+300).
template <typename Json>
std::string describe_json(const Json& value) {
  if (value.is_string()) return detail::quoted(value.template get_ref<const std::string&>());
  if (value.is_array()) return "a list of " + std::to_string(value.size()) + " item(s)";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " field(s)";
  return value.dump();
}

}  // namespace ptxrt::detail
