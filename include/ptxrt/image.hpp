// An Image is what the compiler produced, as a value: the bytes (PTX text or a CUBIN) plus the
// metadata needed to cache, inspect and load it. The disk cache stores exactly this.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ptxrt/export.hpp"

namespace ptxrt {

enum class ImageFormat { ptx, cubin };

struct PTXRT_API Define {
  std::string name;
  std::string value;  // empty for a bare "-DNAME"
  bool operator==(const Define&) const = default;
};

// "TILE_WIDTH=16 VEC=4", for messages and logs; "(none)" when empty.
PTXRT_API std::string format_defines(const std::vector<Define>& defines);

struct PTXRT_API Image {
  ImageFormat format = ImageFormat::cubin;
  std::string arch;              // what it was built for: "sm_90", "sm_90a", "compute_90"
  std::string data;              // PTX text (no trailing NUL) or CUBIN bytes
  std::string name;              // the program's name, e.g. "matmul_tiled.cu"
  std::vector<Define> defines;   // the specialization, as given (validated)
  std::vector<std::string> options;  // every NVRTC option used, defines and arch included
  std::string compile_log;       // NVRTC's log (warnings, and -Xptxas -v output when asked)
  // Template instantiations asked for by name expression, with their mangled (lowered) names.
  std::vector<std::pair<std::string, std::string>> lowered_names;
  std::string key;               // the cache key (hex digest) this image was stored under
  int nvrtc_version = 0;         // major*1000 + minor*10, as CUDA versions are written
};

// "matmul_tiled.cu [TILE_WIDTH=32] sm_90": how modules and kernels are named in messages.
PTXRT_API std::string describe_image(const Image& image);

}  // namespace ptxrt
