// An Image is what the compiler produced, as a value: the bytes (PTX text, a CUBIN, a fatbin or
// LTO-IR) plus the metadata needed to cache, inspect and load it. The disk cache stores exactly
// this.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptxrt/export.hpp"

namespace ptxrt {

// ptx: text the driver JIT-compiles; cubin: machine code for one SM; fatbin: a CUBIN per SM and
// PTX for forward compatibility in one file (cuModuleLoadData picks); ltoir: NVVM IR for
// link-time optimisation, an input to the device linker only (never loaded).
enum class ImageFormat { ptx, cubin, fatbin, ltoir };

// "PTX", "CUBIN", "fatbin", "LTO-IR", for messages.
PTXRT_API std::string_view to_string(ImageFormat format);

struct PTXRT_API Define {
  std::string name;
  std::string value;  // empty for a bare "-DNAME"
  bool operator==(const Define&) const = default;
};

// "TILE_WIDTH=16 VEC=4", for messages and logs; "(none)" when empty.
PTXRT_API std::string format_defines(const std::vector<Define>& defines);

struct PTXRT_API Image {
  ImageFormat format = ImageFormat::cubin;
  // What it was built for: "sm_90", "sm_90a", "compute_90"; a fatbin lists its architectures
  // ("sm_80,sm_90,compute_90").
  std::string arch;
  std::string data;  // PTX text (no trailing NUL), or CUBIN, fatbin or LTO-IR bytes
  // The program's name, e.g. "matmul_tiled.cu"; a linked program's inputs joined by '+'
  // ("a.cu+b.cu+libdevice.a").
  std::string name;
  std::vector<Define> defines;   // the specialization, as given (validated)
  std::vector<std::string> options;  // every NVRTC option used, defines and arch included
  // NVRTC's log (warnings, and -Xptxas -v output when asked). A program of several sources
  // logs each source's compile after a "== a.cu ==" line, then the linker's after "== link ==".
  std::string compile_log;
  // Template instantiations asked for by name expression, with their mangled (lowered) names.
  std::vector<std::pair<std::string, std::string>> lowered_names;
  std::string key;               // the cache key (hex digest) this image was stored under
  int nvrtc_version = 0;         // major*1000 + minor*10, as CUDA versions are written
};

// "matmul_tiled.cu [TILE_WIDTH=32] sm_90": how modules and kernels are named in messages.
PTXRT_API std::string describe_image(const Image& image);

}  // namespace ptxrt
