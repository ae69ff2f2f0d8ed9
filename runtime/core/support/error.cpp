#include "ptxrt/core/error.hpp"

namespace ptxrt {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::driver:
      return "driver";
    case ErrorKind::sticky:
      return "sticky";
    case ErrorKind::no_driver:
      return "no_driver";
    case ErrorKind::no_device:
      return "no_device";
    case ErrorKind::nvrtc:
      return "nvrtc";
    case ErrorKind::compile:
      return "compile";
    case ErrorKind::link:
      return "link";
    case ErrorKind::invalid_argument:
      return "invalid_argument";
    case ErrorKind::not_found:
      return "not_found";
    case ErrorKind::io:
      return "io";
  }
  return "unknown";
}

Error::Error(ErrorKind kind, std::string message, std::string call, int code, std::string code_name,
             std::string context)
    : std::runtime_error(std::move(message)),
      kind_(kind),
      call_(std::move(call)),
      code_(code),
      code_name_(std::move(code_name)),
      context_(std::move(context)) {}

}  // namespace ptxrt
