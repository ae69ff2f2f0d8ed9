// Notes added to NVRTC's log where its own words do not say what to do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"

namespace ptxrt::detail {

// NVRTC only says `cannot open source file "vector"`; a missing <header> that `source` includes
// without a folder gets a note of what the device side has instead.
std::string missing_standard_header_notes(std::string_view log, std::string_view source);

// NVRTC reads its builtin header after the -D options and before the source, so a define named
// as one of that header's identifiers (`width`, `depth`, ...) breaks it, and every error points
// into __nv_nvrtc_builtin_header.h rather than at the define. A note names the defines that the
// header's failing lines use.
std::string builtin_header_clash_notes(std::string_view log, const std::vector<Define>& defines);

}  // namespace ptxrt::detail
