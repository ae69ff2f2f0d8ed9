// Internal: turns NVRTC's log into a readable error: each diagnostic ("file(line): error: ...")
// followed by the lines around it from the original file, numbered, with a marker on the line at
// fault and NVRTC's caret under it. The rest of the log passes through unchanged.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ptxrt::detail {

// The text of a file NVRTC names in a diagnostic (the program, a named header, a path), or nothing.
using SourceLookup = std::function<std::optional<std::string>(std::string_view file)>;

std::string annotate_compile_log(std::string_view log, const SourceLookup& lookup,
                                 int context_lines = 2);

}  // namespace ptxrt::detail
