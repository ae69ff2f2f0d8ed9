#include "support/quoted.hpp"

#include <charconv>
#include <cstdint>

namespace ptxrt::detail {

namespace {

// The length of the valid UTF-8 sequence that starts text[at] (1 to 4), or 0 when none does:
// a stray continuation byte, a truncated sequence, an overlong form, a surrogate, or beyond
// U+10FFFF.
std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[at + i]); };
  const std::uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  std::uint8_t low = 0x80, high = 0xBF;  // the valid range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return length;
}

void append_escaped(std::string& out, unsigned char byte) {
  constexpr char digits[] = "0123456789abcdef";
  switch (byte) {
    case '\t':
      out += "\\t";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    default:
      out += "\\x";
      out += digits[byte >> 4];
      out += digits[byte & 0xF];
  }
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size() && at < max_bytes) {
    const std::size_t length = utf8_length(text, at);
    const auto byte = static_cast<unsigned char>(text[at]);
    if (length == 0 || (length == 1 && (byte < 0x20 || byte == 0x7F))) {
      append_escaped(out, byte);
      ++at;
    } else if (at + length > max_bytes) {
      break;  // cut before a character, not in it
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  if (at < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string quoted(std::string_view text, std::size_t max_bytes) {
  std::string result(1, '\'');
  result += printable(text, max_bytes);
  result += '\'';
  return result;
}

std::string quoted_path(const std::filesystem::path& path) {
  constexpr std::size_t path_max = 4096;
  return quoted(path.native(), path_max);
}

std::string number_text(double value) {
  char text[32];  // the shortest form of a double takes at most 24 characters
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

}  // namespace ptxrt::detail
