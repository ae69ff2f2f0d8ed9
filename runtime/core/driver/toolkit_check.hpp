// Internal: NVRTC, nvJitLink and nvFatbin results checked as ptxrt::check checks a CUresult, for
// the library's own calls into the toolkit (driver/result_check.cpp turns them into Error). Kept
// out of ptxrt/core/error.hpp so that a program using ptxrt needs none of these headers.
#pragma once

#include <nvFatbin.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <string_view>

#include "ptxrt/core/error.hpp"

namespace ptxrt {

[[noreturn]] void throw_nvrtc_error(nvrtcResult result, std::string_view call,
                                    std::string_view context);
inline void check(nvrtcResult result, std::string_view call, std::string_view context = {}) {
  if (result != NVRTC_SUCCESS) [[unlikely]]
    throw_nvrtc_error(result, call, context);
}

// nvJitLink's own log says what failed to link; `context` should carry it (see jit/link.cpp).
[[noreturn]] void throw_nvjitlink_error(nvJitLinkResult result, std::string_view call,
                                        std::string_view context);
inline void check(nvJitLinkResult result, std::string_view call, std::string_view context = {}) {
  if (result != NVJITLINK_SUCCESS) [[unlikely]]
    throw_nvjitlink_error(result, call, context);
}

[[noreturn]] void throw_nvfatbin_error(nvFatbinResult result, std::string_view call,
                                       std::string_view context);
inline void check(nvFatbinResult result, std::string_view call, std::string_view context = {}) {
  if (result != NVFATBIN_SUCCESS) [[unlikely]]
    throw_nvfatbin_error(result, call, context);
}

}  // namespace ptxrt
