// What an architecture name says, and whether an image can run on a device with a driver: the
// check before loading, so that a mismatch is explained instead of surfacing as
// CUDA_ERROR_INVALID_PTX or CUDA_ERROR_UNSUPPORTED_PTX_VERSION. Needs neither NVRTC nor a GPU
// (what to compile for, which asks NVRTC, is in target.hpp). Free functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// One architecture as NVRTC, ptxas and PTX's .target write it: "sm_90", "sm_90a", "sm_100f",
// "compute_90".
struct PTXRT_API Architecture {
  int sm = 0;          // 90 for sm_90, sm_90a and compute_90
  char suffix = '\0';  // 'a' (this exact architecture only), 'f' (its family) or none
  bool virtual_architecture = false;  // compute_XY: PTX rather than a CUBIN

  int cc_major() const noexcept { return sm / 10; }
  int cc_minor() const noexcept { return sm % 10; }
  std::string compute_capability() const;  // "9.0"
};

// Reads "sm_XY", "sm_XYa", "sm_XYf" or "compute_XY" (two or three digits, the same suffixes);
// nothing for any other text.
PTXRT_API std::optional<Architecture> parse_architecture(std::string_view name);

// The first CUDA version whose driver JIT-compiles PTX ISA major.minor (ISA 9.0 → 13000,
// 8.7 → 12080), or nothing for an ISA this table does not know.
PTXRT_API std::optional<int> cuda_version_for_ptx_isa(int isa_major, int isa_minor);

// The SM version a CUBIN was built for, from its ELF header's e_flags (90 for sm_90 and sm_90a),
// or nothing when `cubin` is not a CUDA ELF.
PTXRT_API std::optional<int> cubin_sm_version(std::string_view cubin);

// The architectures of a target: "sm_80,sm_90,compute_90" → {"sm_80", "sm_90", "compute_90"}.
PTXRT_API std::vector<std::string> target_architectures(std::string_view arch_list);

// Throws Error (invalid_argument) saying what is wrong and what to do when the driver
// (cuDriverGetVersion, 13000 = 13.0) cannot JIT the image's PTX ISA, or when the image's
// architecture (PTX .target or the CUBIN's ELF header) cannot run on the device. A fatbin passes
// when one of its CUBINs, or one of its PTX entries the driver can JIT, runs on the device;
// LTO-IR never loads.
PTXRT_API void check_image_for_driver(const Image& image, int driver_version, int cc_major,
                                      int cc_minor);

}  // namespace ptxrt
