#include "std_headers.hpp"

namespace ptxrt::detail {
namespace {

// `using namespace` rather than a list of using-declarations: it exposes exactly what libcu++
// declares, without a list here to fall out of date.
#define PTXRT_INCLUDE(guard, header) \
  "#ifndef PTXRT_SHIM_" guard "\n#define PTXRT_SHIM_" guard "\n#include <cuda/std/" header ">\n"
#define PTXRT_FORWARD(guard, header) \
  PTXRT_INCLUDE(guard, header) "namespace std { using namespace cuda::std; }\n"

constexpr std::string_view cstdint = PTXRT_FORWARD("CSTDINT", "cstdint") "#endif\n";
constexpr std::string_view cstddef = PTXRT_FORWARD("CSTDDEF", "cstddef") "#endif\n";
constexpr std::string_view climits = PTXRT_INCLUDE("CLIMITS", "climits") "#endif\n";
constexpr std::string_view type_traits = PTXRT_FORWARD("TYPE_TRAITS", "type_traits") "#endif\n";
constexpr std::string_view limits = PTXRT_FORWARD("LIMITS", "limits") "#endif\n";
constexpr std::string_view utility = PTXRT_FORWARD("UTILITY", "utility") "#endif\n";
constexpr std::string_view cassert = PTXRT_INCLUDE("CASSERT", "cassert") "#endif\n";

// libcu++ defines INFINITY and NAN under NVRTC (through numeric_limits), but not HUGE_VAL.
constexpr std::string_view cmath = PTXRT_FORWARD("CMATH", "cmath")
    "#ifndef HUGE_VALF\n#define HUGE_VALF (::cuda::std::numeric_limits<float>::infinity())\n#endif\n"
    "#ifndef HUGE_VAL\n#define HUGE_VAL (::cuda::std::numeric_limits<double>::infinity())\n#endif\n"
    "#endif\n";

// The binary32 and binary64 values every CUDA device uses.
constexpr std::string_view cfloat =
    "#ifndef PTXRT_SHIM_CFLOAT\n#define PTXRT_SHIM_CFLOAT\n"
    "#define FLT_RADIX 2\n"
    "#define FLT_MANT_DIG 24\n#define DBL_MANT_DIG 53\n"
    "#define FLT_DIG 6\n#define DBL_DIG 15\n"
    "#define FLT_DECIMAL_DIG 9\n#define DBL_DECIMAL_DIG 17\n"
    "#define FLT_MIN_EXP (-125)\n#define DBL_MIN_EXP (-1021)\n"
    "#define FLT_MAX_EXP 128\n#define DBL_MAX_EXP 1024\n"
    "#define FLT_MIN_10_EXP (-37)\n#define DBL_MIN_10_EXP (-307)\n"
    "#define FLT_MAX_10_EXP 38\n#define DBL_MAX_10_EXP 308\n"
    "#define FLT_MAX 3.40282347e+38F\n#define DBL_MAX 1.7976931348623157e+308\n"
    "#define FLT_MIN 1.17549435e-38F\n#define DBL_MIN 2.2250738585072014e-308\n"
    "#define FLT_TRUE_MIN 1.40129846e-45F\n#define DBL_TRUE_MIN 4.9406564584124654e-324\n"
    "#define FLT_EPSILON 1.19209290e-7F\n#define DBL_EPSILON 2.2204460492503131e-16\n"
    "#endif\n";

#undef PTXRT_FORWARD
#undef PTXRT_INCLUDE

constexpr NamedText headers[] = {
    {"cstdint", cstdint},   {"stdint.h", cstdint},         {"cstddef", cstddef},
    {"stddef.h", cstddef},  {"climits", climits},          {"limits.h", climits},
    {"cfloat", cfloat},     {"float.h", cfloat},           {"cmath", cmath},
    {"math.h", cmath},      {"type_traits", type_traits},  {"limits", limits},
    {"utility", utility},   {"cassert", cassert},          {"assert.h", cassert},
};

}  // namespace

std::span<const NamedText> standard_headers() { return headers; }

}  // namespace ptxrt::detail
