// Internal: text from outside echoed in a message (a field's value, a name, a define, a line of
// a data file, a path). It may be megabytes long, hold control bytes or not be UTF-8; every
// message that echoes input goes through these, so that it stays one short line that a terminal
// shows as it is and a JSON writer takes.
//
// Thread safety: stateless; safe from any thread.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "ptxrt/export.hpp"

namespace ptxrt::detail {

// The most bytes of input a message echoes (before escapes and the length note).
inline constexpr std::size_t max_echoed_bytes = 100;

// `text` as a message shows it: tab, newline and carriage return as \t \n \r, other control bytes
// and bytes that are not part of valid UTF-8 as \xNN; cut after `max_bytes` of the input, at a
// character's boundary, with "... (N bytes)" naming the whole length.
PTXRT_API std::string printable(std::string_view text, std::size_t max_bytes = max_echoed_bytes);

// The same between single quotes: 'text'.
PTXRT_API std::string quoted(std::string_view text, std::size_t max_bytes = max_echoed_bytes);

// A path as messages show it: quoted and escaped as above, whole up to PATH_MAX (a path names a
// file only as a whole).
PTXRT_API std::string quoted_path(const std::filesystem::path& path);

// The shortest text that reads back as `value` ("0.5", "-1", "1e+300", "inf", "nan"): a number
// as the user would write it, never 300 digits.
PTXRT_API std::string number_text(double value);

}  // namespace ptxrt::detail
