#include "support/bounded_json.hpp"

#include <algorithm>

namespace ptxrt::detail {

namespace {

// nlohmann's reason may echo a whole token (a long string literal): this much of it is kept.
constexpr std::size_t max_reason_bytes = 200;

// Where the byte at `offset` of `text` is, 1-based.
void locate(std::string_view text, std::size_t offset, JsonFault& fault) {
  const std::string_view before = text.substr(0, std::min(offset, text.size()));
  fault.line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const std::size_t newline = before.rfind('\n');
  fault.column = before.size() - (newline == std::string_view::npos ? 0 : newline + 1) + 1;
}

// The offset of the first '[' or '{' nested deeper than max_json_depth, outside strings.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth) return at;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

// nlohmann's reason without its "[json.exception.parse_error.101] parse error at line L, column
// C: ", which the fault says in its own terms.
std::string reason_of(const nlohmann::json::exception& error) {
  std::string_view text = error.what();
  if (const std::size_t id = text.find("] "); id != std::string_view::npos)
    text.remove_prefix(id + 2);
  if (text.starts_with("parse error at line "))
    if (const std::size_t colon = text.find(": "); colon != std::string_view::npos)
      text.remove_prefix(colon + 2);
  return printable(text, max_reason_bytes);
}

// Where nlohmann's parser stops on `text`: a number beyond a double's range ends the parse with
// an exception that does not carry the position, which its SAX interface hands over.
std::size_t stop_position(std::string_view text) {
  struct Finder {
    std::size_t position = 0;
    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(nlohmann::json::number_integer_t) { return true; }
    bool number_unsigned(nlohmann::json::number_unsigned_t) { return true; }
    bool number_float(nlohmann::json::number_float_t, const std::string&) { return true; }
    bool string(std::string&) { return true; }
    bool binary(nlohmann::json::binary_t&) { return true; }
    bool start_object(std::size_t) { return true; }
    bool key(std::string&) { return true; }
    bool end_object() { return true; }
    bool start_array(std::size_t) { return true; }
    bool end_array() { return true; }
    bool parse_error(std::size_t at, const std::string&, const nlohmann::json::exception&) {
      position = at;
      return false;
    }
  } finder;
  nlohmann::json::sax_parse(text, &finder);
  return finder.position;
}

}  // namespace

template <typename Json>
std::optional<Json> try_parse_json(std::string_view text, JsonFault& fault) {
  if (const std::optional<std::size_t> at = too_deep_at(text)) {
    locate(text, *at, fault);
    fault.problem =
        "nested deeper than " + std::to_string(max_json_depth) + " levels, the most ptxrt reads";
    return std::nullopt;
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    // The position counts from 1 and points at the last byte read.
    const std::size_t position = stop_position(text);
    locate(text, position == 0 ? 0 : position - 1, fault);
    fault.problem = "not valid JSON: " + reason_of(error);
    return std::nullopt;
  }
}

template std::optional<nlohmann::json> try_parse_json(std::string_view, JsonFault&);
template std::optional<nlohmann::ordered_json> try_parse_json(std::string_view, JsonFault&);

}  // namespace ptxrt::detail
