// Diagnostics on stderr, filtered by PTXRT_LOG=error|warning|info|debug (default warning).
// Every line starts with "ptxrt: <level>: " so that a host application can tell ours from its own.
//
// Thread safety: every function may be called from any thread; lines are never interleaved.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "ptxrt/export.hpp"

namespace ptxrt::log {

enum class Level { error = 0, warning = 1, info = 2, debug = 3 };

PTXRT_API std::string_view to_string(Level level);
// "error", "warning", "info", "debug" (case-insensitive); nullopt for anything else.
PTXRT_API std::optional<Level> parse_level(std::string_view text);

namespace detail {
PTXRT_API int threshold_value() noexcept;
}

// The most verbose level that is written. Read from PTXRT_LOG on first use.
inline Level threshold() noexcept { return static_cast<Level>(detail::threshold_value()); }
PTXRT_API void set_threshold(Level level) noexcept;

// Cheap (one relaxed atomic load): test it before composing an expensive message.
inline bool enabled(Level level) noexcept {
  return static_cast<int>(level) <= detail::threshold_value();
}

// Writes "ptxrt: <level>: <message>\n" to the sink when `level` is enabled.
PTXRT_API void write(Level level, std::string_view message);

// Writes a warning the first time `key` is seen in this process and returns true; afterwards
// returns false and writes nothing. For conditions that would otherwise repeat on every call.
PTXRT_API bool warn_once(std::string_view key, std::string_view message);

// Where lines go: by default stderr. A host application (or a test) may redirect them; the sink
// receives the full line without the trailing newline. Returns the previous sink. An empty
// function restores stderr.
using Sink = std::function<void(Level, std::string_view line)>;
PTXRT_API Sink set_sink(Sink sink);

}  // namespace ptxrt::log
