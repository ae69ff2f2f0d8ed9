// The library's one exception type, and the check of driver results (NVRTC's, nvJitLink's and
// nvFatbin's are checked inside the library, whose API never takes their types). Every failure
// names the call, the result code (name and description) and what ptxrt was doing at the time
// ("launching 'matmul_tiled' (TILE_WIDTH=32) on device 0").
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "ptxrt/export.hpp"

namespace ptxrt {

// What went wrong, coarsely, so that callers (and the CLI's exit codes) can branch on it.
enum class ErrorKind {
  driver,     // a CUDA driver call failed
  sticky,     // the context hit an unrecoverable error (e.g. illegal address); make a new one
  no_driver,  // libcuda.so.1 could not be loaded, or is the toolkit's stub
  no_device,  // a driver, but no CUDA device
  nvrtc,      // an NVRTC call failed
  compile,    // kernel source did not compile (the message holds the diagnostics)
  link,       // device code did not link (nvJitLink: undefined or duplicate symbol,
              // architecture mismatch) or a fatbin could not be built (nvFatbin)
  invalid_argument,  // the caller asked for something impossible (bad define, too many threads...)
  not_found,         // unknown kernel, entry point, symbol or file
  io,                // reading or writing a file failed
};

PTXRT_API std::string_view to_string(ErrorKind kind);

class PTXRT_API Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string call = {}, int code = 0,
        std::string code_name = {}, std::string context = {});

  ErrorKind kind() const noexcept { return kind_; }
  // The API call that failed ("cuLaunchKernel"), empty when no call was involved.
  const std::string& call() const noexcept { return call_; }
  // The CUresult, nvrtcResult, nvJitLinkResult or nvFatbinResult value, 0 when no call was
  // involved.
  int code() const noexcept { return code_; }
  // "CUDA_ERROR_ILLEGAL_ADDRESS", "NVRTC_ERROR_COMPILATION", ...
  const std::string& code_name() const noexcept { return code_name_; }
  // What ptxrt was doing: the kernel, its configuration, the device.
  const std::string& context() const noexcept { return context_; }
  bool is_sticky() const noexcept { return kind_ == ErrorKind::sticky; }

 private:
  ErrorKind kind_;
  std::string call_;
  int code_;
  std::string code_name_;
  std::string context_;
};

// True for the CUresult codes after which the context is unusable and must be destroyed.
PTXRT_API bool is_sticky_result(CUresult result) noexcept;

// Throws Error when `result` is not CUDA_SUCCESS. Kept inline and cheap on success: the message
// is only assembled on failure.
[[noreturn]] PTXRT_API void throw_driver_error(CUresult result, std::string_view call,
                                               std::string_view context);
inline void check(CUresult result, std::string_view call, std::string_view context = {}) {
  if (result != CUDA_SUCCESS) [[unlikely]]
    throw_driver_error(result, call, context);
}

}  // namespace ptxrt
