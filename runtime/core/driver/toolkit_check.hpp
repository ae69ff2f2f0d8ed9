// Internal: nvJitLink and nvFatbin results checked as ptxrt::check checks a CUresult, for the
// library's own calls into the toolkit (driver/result_check.cpp turns them into Error; NVRTC's
// check is jit/nvrtc_check.hpp, since only the JIT layer calls NVRTC). Kept out of
// ptxrt/core/error.hpp so that a program using ptxrt needs none of these headers.
#pragma once

#include <nvFatbin.h>
#include <nvJitLink.h>

#include <string>
#include <string_view>

#include "ptxrt/core/error.hpp"

namespace ptxrt {

// A toolkit library's failed call as Error, once the library has named its result.
[[noreturn]] void throw_toolkit_error(ErrorKind kind, int code, std::string code_name,
                                      std::string_view call, std::string_view context);

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
