// What to compile for, given a device: the exact CUBIN by default, PTX on request, and PTX for the
// newest architecture NVRTC knows when the device is newer than NVRTC (the driver JIT-compiles
// it). And the check, before loading, that an image suits the driver and device, so that a
// mismatch is explained instead of surfacing as CUDA_ERROR_INVALID_PTX or
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION. Free functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// The first CUDA version whose driver JIT-compiles PTX ISA major.minor (ISA 9.0 → 13000,
// 8.7 → 12080), or nothing for an ISA this table does not know.
PTXRT_API std::optional<int> cuda_version_for_ptx_isa(int isa_major, int isa_minor);

// The SM version a CUBIN was built for, from its ELF header's e_flags (90 for sm_90 and sm_90a),
// or nothing when `cubin` is not a CUDA ELF.
PTXRT_API std::optional<int> cubin_sm_version(std::string_view cubin);

// The architectures of a target: "sm_80,sm_90,compute_90" → {"sm_80", "sm_90", "compute_90"}.
PTXRT_API std::vector<std::string> target_architectures(std::string_view arch_list);

// Where the NVRTC library in use lives (libnvrtc.so.13), found from its loaded symbols; empty when
// the system cannot say. The toolkit's tools (nvdisasm, cuobjdump) live in its ../bin.
PTXRT_API std::string nvrtc_library_path();

// Throws Error (invalid_argument) saying what is wrong and what to do when the driver
// (cuDriverGetVersion, 13000 = 13.0) cannot JIT the image's PTX ISA, or when the image's
// architecture (PTX .target or the CUBIN's ELF header) cannot run on the device. A fatbin passes
// when one of its CUBINs, or one of its PTX entries the driver can JIT, runs on the device;
// LTO-IR never loads.
PTXRT_API void check_image_for_driver(const Image& image, int driver_version, int cc_major,
                                      int cc_minor);

}  // namespace ptxrt
