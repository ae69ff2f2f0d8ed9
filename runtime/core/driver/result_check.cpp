// The one place where driver, NVRTC, nvJitLink and nvFatbin results become ptxrt::Error (NVRTC's
// through jit/nvrtc_check.hpp, which names the result).
#include "driver/driver_api.hpp"
#include "driver/toolkit_check.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {

bool is_sticky_result(CUresult result) noexcept {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

namespace {

std::string compose(std::string_view call, std::string_view name, std::string_view description,
                    std::string_view context) {
  std::string message(call);
  message += " failed: ";
  message += name;
  if (!description.empty()) {
    message += " (";
    message += description;
    message += ")";
  }
  if (!context.empty()) {
    message += " while ";
    message += context;
  }
  return message;
}

}  // namespace

void throw_driver_error(CUresult result, std::string_view call, std::string_view context) {
  const char* name = nullptr;
  const char* description = nullptr;
  if (const detail::DriverApi* api = detail::loaded_driver()) {
    api->cuGetErrorName(result, &name);
    api->cuGetErrorString(result, &description);
  }
  std::string code_name = name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  std::string message = compose(call, code_name, description ? description : "", context);
  ErrorKind kind = ErrorKind::driver;
  if (is_sticky_result(result)) {
    kind = ErrorKind::sticky;
    message +=
        "; this is a sticky error: the context is now unusable, so destroy it (with its modules "
        "and buffers); current drivers keep the device unusable for the whole process, so run "
        "kernels that may fault in a worker process";
  } else if (result == CUDA_ERROR_NOT_FOUND) {
    kind = ErrorKind::not_found;
  }
  throw Error(kind, std::move(message), std::string(call), static_cast<int>(result),
              std::move(code_name), std::string(context));
}

void throw_toolkit_error(ErrorKind kind, int code, std::string code_name, std::string_view call,
                         std::string_view context) {
  std::string message = compose(call, code_name, "", context);
  throw Error(kind, std::move(message), std::string(call), code, std::move(code_name),
              std::string(context));
}

namespace {

std::string_view nvjitlink_result_name(nvJitLinkResult result) {
  switch (result) {
    case NVJITLINK_SUCCESS:
      return "NVJITLINK_SUCCESS";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
      return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
    case NVJITLINK_ERROR_MISSING_ARCH:
      return "NVJITLINK_ERROR_MISSING_ARCH";
    case NVJITLINK_ERROR_INVALID_INPUT:
      return "NVJITLINK_ERROR_INVALID_INPUT";
    case NVJITLINK_ERROR_PTX_COMPILE:
      return "NVJITLINK_ERROR_PTX_COMPILE";
    case NVJITLINK_ERROR_NVVM_COMPILE:
      return "NVJITLINK_ERROR_NVVM_COMPILE";
    case NVJITLINK_ERROR_INTERNAL:
      return "NVJITLINK_ERROR_INTERNAL";
    case NVJITLINK_ERROR_THREADPOOL:
      return "NVJITLINK_ERROR_THREADPOOL";
    case NVJITLINK_ERROR_UNRECOGNIZED_INPUT:
      return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
    case NVJITLINK_ERROR_FINALIZE:
      return "NVJITLINK_ERROR_FINALIZE";
    case NVJITLINK_ERROR_NULL_INPUT:
      return "NVJITLINK_ERROR_NULL_INPUT";
    case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS:
      return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
    case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE:
      return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
    case NVJITLINK_ERROR_ARCH_MISMATCH:
      return "NVJITLINK_ERROR_ARCH_MISMATCH";
    case NVJITLINK_ERROR_OUTDATED_LIBRARY:
      return "NVJITLINK_ERROR_OUTDATED_LIBRARY";
    case NVJITLINK_ERROR_MISSING_FATBIN:
      return "NVJITLINK_ERROR_MISSING_FATBIN";
    case NVJITLINK_ERROR_UNRECOGNIZED_ARCH:
      return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
    case NVJITLINK_ERROR_UNSUPPORTED_ARCH:
      return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
    case NVJITLINK_ERROR_LTO_NOT_ENABLED:
      return "NVJITLINK_ERROR_LTO_NOT_ENABLED";
  }
  return "nvJitLinkResult";
}

}  // namespace

// nvJitLink has no error-string function; its log, which the caller puts in `context`, says more.
void throw_nvjitlink_error(nvJitLinkResult result, std::string_view call,
                           std::string_view context) {
  std::string code_name(nvjitlink_result_name(result));
  if (code_name == "nvJitLinkResult") code_name += " " + std::to_string(static_cast<int>(result));
  throw_toolkit_error(ErrorKind::link, static_cast<int>(result), std::move(code_name), call,
                      context);
}

void throw_nvfatbin_error(nvFatbinResult result, std::string_view call, std::string_view context) {
  std::string code_name = nvFatbinGetErrorString(result);
  throw_toolkit_error(ErrorKind::link, static_cast<int>(result), std::move(code_name), call,
                      context);
}

}  // namespace ptxrt
