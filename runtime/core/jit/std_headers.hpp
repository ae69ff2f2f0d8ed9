// Internal: the C and C++ standard headers that kernel files commonly include, for NVRTC, which
// ships none of them (NVRTC 13.0 fails on `#include <cstdint>` with or without the toolkit's
// include folder). Each one forwards to libcu++ (cuda/std/...), which works under NVRTC, and
// brings its names into std; <cfloat> spells out the IEEE limits, which libcu++ leaves out under
// NVRTC; <cstdio> only adds std::printf to the device printf NVRTC has built in; <algorithm>
// gathers libcu++'s algorithms, which libcu++ 3.0 offers one header each. Host-only headers
// (<vector>, <string>, <iostream>) have no device form and are left out.
#pragma once

#include <span>
#include <string>

namespace ptxrt::detail {

struct NamedText {
  std::string name;  // as written in #include <...>: "cstdint", "math.h"
  std::string text;
};

// Built once; the texts stay put for the process, as NVRTC reads them through c_str().
std::span<const NamedText> standard_headers();

}  // namespace ptxrt::detail
