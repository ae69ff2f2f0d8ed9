// What to compile for: the architectures NVRTC knows, and the target for a device among them.
// The JIT layer's, since it asks NVRTC.
#include "ptxrt/core/target.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include "jit/nvrtc_check.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {

std::vector<int> supported_architectures() {
  int count = 0;
  check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> architectures(static_cast<std::size_t>(count));
  check(nvrtcGetSupportedArchs(architectures.data()), "nvrtcGetSupportedArchs");
  std::sort(architectures.begin(), architectures.end());
  return architectures;
}

int nvrtc_version() {
  int major = 0;
  int minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return major * 1000 + minor * 10;
}

std::string nvrtc_library_path() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) || !info.dli_fname) return {};
  std::error_code error;
  const auto path = std::filesystem::canonical(info.dli_fname, error);
  return error ? std::string() : path.string();
}

std::string nvrtc_build() {
  // nvrtcVersion says 13.0 for every 13.0 patch release; the library file tells them apart.
  static const std::string build = [] {
    std::string text = format_cuda_version(nvrtc_version());
    if (const std::string path = nvrtc_library_path(); !path.empty()) {
      std::error_code error;
      const auto size = std::filesystem::file_size(path, error);
      if (!error) {
        text.append(" ").append(std::filesystem::path(path).filename().string());
        text.append(" ").append(std::to_string(size));
      }
    }
    return text;
  }();
  return build;
}

Target select_target(int cc_major, int cc_minor, ImageFormat format) {
  return select_target(cc_major, cc_minor, format, supported_architectures());
}

Target select_target(int cc_major, int cc_minor, ImageFormat format,
                     const std::vector<int>& supported) {
  const int device = cc_major * 10 + cc_minor;
  const std::string prefix = format == ImageFormat::cubin ? "sm_" : "compute_";
  if (std::find(supported.begin(), supported.end(), device) != supported.end())
    return {prefix + std::to_string(device), format, {}};
  auto newest_below =
      std::find_if(supported.rbegin(), supported.rend(), [&](int sm) { return sm < device; });
  if (newest_below == supported.rend())
    throw Error(ErrorKind::invalid_argument,
                "compute capability " + Architecture{.sm = device}.compute_capability() +
                    " is older than every architecture " + "this NVRTC supports (oldest sm_" +
                    (supported.empty() ? std::string("?") : std::to_string(supported.front())) +
                    ")");
  const std::string fallback = "compute_" + std::to_string(*newest_below);
  return {fallback, ImageFormat::ptx,
          "compute capability " + Architecture{.sm = device}.compute_capability() +
              " is unknown to NVRTC " + format_cuda_version(nvrtc_version()) + " (newest sm_" +
              std::to_string(supported.back()) + "); compiled PTX for " + fallback +
              ", which the driver JIT-compiles for the device"};
}

}  // namespace ptxrt
