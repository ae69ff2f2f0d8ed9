// Internal: NVRTC's results checked as ptxrt::check checks a CUresult, for the library's own calls
// into NVRTC. Only the JIT layer calls NVRTC; kept out of ptxrt/core/error.hpp so that a program
// using ptxrt needs no NVRTC header.
#pragma once

#include <nvrtc.h>

#include <string_view>

#include "driver/toolkit_check.hpp"

namespace ptxrt {

inline void check(nvrtcResult result, std::string_view call, std::string_view context = {}) {
  if (result != NVRTC_SUCCESS) [[unlikely]]
    throw_toolkit_error(ErrorKind::nvrtc, static_cast<int>(result), nvrtcGetErrorString(result),
                        call, context);
}

}  // namespace ptxrt
