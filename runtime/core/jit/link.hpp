// Internal: nvJitLink as one object. Inputs go in with their names (which the linker's
// diagnostics and ptxrt's errors use), the result comes out as a CUBIN or, with LTO, as PTX.
#pragma once

#include <nvJitLink.h>

#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"

namespace ptxrt::detail {

struct LinkInput {
  nvJitLinkInputType type;
  std::string bytes;
  std::string name;
  // A device object given by the caller rather than compiled here from a source: what is suspect
  // when nvJitLink crashes.
  bool from_caller = false;
};

// One link as a value (what a DeviceLinker is made with and given), so that it can run in another
// process (jit/isolated_link).
struct LinkRequest {
  std::string program;  // names what is linked in messages: "a.cu+b.ltoir"
  std::string arch;
  ImageFormat format = ImageFormat::cubin;
  bool lto = false;
  bool resource_usage = false;
  std::vector<std::string> options;
  std::vector<LinkInput> inputs;
};

struct LinkResult {
  std::string output;    // the CUBIN, or PTX
  std::string info_log;  // DeviceLinker::info_log()
};

// "LTO-IR", "fatbin", "device library": how messages name an input of this type.
std::string input_type_name(nvJitLinkInputType type);

// Links `request` in this process with a DeviceLinker. Throws what it throws.
LinkResult link(const LinkRequest& request);

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
  std::vector<LinkInput> inputs_;
};

}  // namespace ptxrt::detail
