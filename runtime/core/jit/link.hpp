// Internal: nvJitLink as one object. Inputs go in with their names (which the linker's
// diagnostics and ptxrt's errors use), the result comes out as a CUBIN or, with LTO, as PTX.
#pragma once

#include <nvJitLink.h>

#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"

namespace ptxrt::detail {

class DeviceLinker {
 public:
  // `arch` is "sm_90" (a CUBIN) or, with lto and `format` ptx, "compute_90"; `program` names what
  // is linked in messages. Throws Error (link).
  DeviceLinker(const std::string& program, const std::string& arch, ImageFormat format, bool lto,
               bool resource_usage, const std::vector<std::string>& options);
  DeviceLinker(const DeviceLinker&) = delete;
  DeviceLinker& operator=(const DeviceLinker&) = delete;
  ~DeviceLinker();

  // Checks the bytes whole (check_device_code) and keeps them until complete(), which hands every
  // input to nvJitLink at once. Throws Error (invalid_argument) naming the input when they are
  // damaged, are not of `type`, or are LTO-IR in a link without lto.
  void add(nvJitLinkInputType type, std::string bytes, std::string name);
  // Links. A failure throws Error (link), one line, naming each undefined or duplicate symbol, or
  // weak data given two sizes (demangled, with its mangled name), and the inputs involved,
  // then every input; a problem ptxrt does not recognise is given in nvJitLink's own words.
  void complete();
  std::string output(ImageFormat format) const;
  // The linker's info log (ptxas' report with resource usage), trimmed.
  std::string info_log() const;
  // nvJitLinkVersion, as CUDA versions are written (13000), for cache keys.
  static int version();

 private:
  std::string error_log() const;

  nvJitLinkHandle handle_ = nullptr;
  std::string what_;  // "a.cu+b.cu for sm_90"
  int sm_;            // 90 for sm_90; 0 for a virtual architecture
  bool lto_;
  struct Input {
    nvJitLinkInputType type;
    std::string bytes;
    std::string name;
  };
  std::vector<Input> inputs_;
};

}  // namespace ptxrt::detail
