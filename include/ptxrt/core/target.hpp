// What to compile for, given a device: the exact CUBIN by default, PTX on request, and PTX for the
// newest architecture NVRTC knows when the device is newer than NVRTC (the driver JIT-compiles
// it). These ask NVRTC, so they belong to the JIT layer; what an architecture name means and the
// check that an image suits the driver and device need no NVRTC and are in architecture.hpp,
// included here. Free functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/architecture.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API Target {
  // "sm_90", "sm_90a", "sm_100f", "compute_90"; for a fatbin a comma-separated list
  // ("sm_80,sm_90,compute_90": a CUBIN per sm_XY and PTX per compute_XY).
  std::string arch;
  ImageFormat format = ImageFormat::cubin;
  std::string note;  // why this differs from what was asked, for the compile log; empty if not
};

// nvrtcGetSupportedArchs: the SM versions this NVRTC compiles for (75, 80, ..., 121), ascending.
PTXRT_API std::vector<int> supported_architectures();

// nvrtcVersion as CUDA versions are written: 13000 for 13.0.
PTXRT_API int nvrtc_version();
// The NVRTC in use, precisely enough for cache keys: "13.0 libnvrtc.so.13.0.88 109338064".
PTXRT_API std::string nvrtc_build();

// The target for a device of compute capability cc_major.cc_minor: "sm_XY" CUBIN, or
// "compute_XY" PTX when `format` is ptx. A device NVRTC does not know (newer, or between known
// ones) gets PTX for the newest supported architecture below it, with a note saying so; one older
// than every supported architecture throws Error (invalid_argument).
PTXRT_API Target select_target(int cc_major, int cc_minor, ImageFormat format = ImageFormat::cubin);
// The same against an explicit list of supported SM versions.
PTXRT_API Target select_target(int cc_major, int cc_minor, ImageFormat format,
                               const std::vector<int>& supported);

// Where the NVRTC library in use lives (libnvrtc.so.13), found from its loaded symbols; empty when
// the system cannot say. The toolkit's tools (nvdisasm, cuobjdump) live in its ../bin.
PTXRT_API std::string nvrtc_library_path();

}  // namespace ptxrt
