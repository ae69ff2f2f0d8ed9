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

constexpr std::string_view cstdlib = PTXRT_FORWARD("CSTDLIB", "cstdlib") "#endif\n";
constexpr std::string_view cstring = PTXRT_FORWARD("CSTRING", "cstring") "#endif\n";
constexpr std::string_view array = PTXRT_FORWARD("ARRAY", "array") "#endif\n";
constexpr std::string_view bit = PTXRT_FORWARD("BIT", "bit") "#endif\n";
constexpr std::string_view complex = PTXRT_FORWARD("COMPLEX", "complex") "#endif\n";
constexpr std::string_view functional = PTXRT_FORWARD("FUNCTIONAL", "functional") "#endif\n";
constexpr std::string_view initializer_list =
    PTXRT_FORWARD("INITIALIZER_LIST", "initializer_list") "#endif\n";
constexpr std::string_view iterator = PTXRT_FORWARD("ITERATOR", "iterator") "#endif\n";
constexpr std::string_view numeric = PTXRT_FORWARD("NUMERIC", "numeric") "#endif\n";
constexpr std::string_view optional = PTXRT_FORWARD("OPTIONAL", "optional") "#endif\n";
constexpr std::string_view span = PTXRT_FORWARD("SPAN", "span") "#endif\n";
constexpr std::string_view tuple = PTXRT_FORWARD("TUPLE", "tuple") "#endif\n";
constexpr std::string_view atomic = PTXRT_FORWARD("ATOMIC", "atomic") "#endif\n";
constexpr std::string_view concepts = PTXRT_FORWARD("CONCEPTS", "concepts") "#endif\n";
constexpr std::string_view variant = PTXRT_FORWARD("VARIANT", "variant") "#endif\n";
constexpr std::string_view numbers = PTXRT_FORWARD("NUMBERS", "numbers") "#endif\n";
constexpr std::string_view memory = PTXRT_FORWARD("MEMORY", "memory") "#endif\n";

// Device printf is built into NVRTC; the header only adds std::printf.
constexpr std::string_view cstdio =
    "#ifndef PTXRT_SHIM_CSTDIO\n#define PTXRT_SHIM_CSTDIO\n"
    "namespace std { using ::printf; }\n#endif\n";

// libcu++ 3.0 has the algorithms but no <cuda/std/algorithm> that gathers them; each is taken
// where this toolkit has it, so that a later libcu++ that moves one still compiles.
// clang-format off
#define PTXRT_ALGORITHM(name) \
  "#if __has_include(<cuda/std/__algorithm/" name ".h>)\n" \
  "#include <cuda/std/__algorithm/" name ".h>\n#endif\n"
constexpr std::string_view algorithm =
    "#ifndef PTXRT_SHIM_ALGORITHM\n#define PTXRT_SHIM_ALGORITHM\n"
    "#if __has_include(<cuda/std/algorithm>)\n#include <cuda/std/algorithm>\n#else\n"
    PTXRT_ALGORITHM("all_of") PTXRT_ALGORITHM("any_of") PTXRT_ALGORITHM("none_of")
    PTXRT_ALGORITHM("binary_search") PTXRT_ALGORITHM("clamp") PTXRT_ALGORITHM("copy")
    PTXRT_ALGORITHM("copy_backward") PTXRT_ALGORITHM("copy_if") PTXRT_ALGORITHM("copy_n")
    PTXRT_ALGORITHM("count") PTXRT_ALGORITHM("count_if") PTXRT_ALGORITHM("equal")
    PTXRT_ALGORITHM("equal_range") PTXRT_ALGORITHM("fill") PTXRT_ALGORITHM("fill_n")
    PTXRT_ALGORITHM("find") PTXRT_ALGORITHM("find_if") PTXRT_ALGORITHM("find_if_not")
    PTXRT_ALGORITHM("for_each") PTXRT_ALGORITHM("for_each_n") PTXRT_ALGORITHM("generate")
    PTXRT_ALGORITHM("generate_n") PTXRT_ALGORITHM("is_sorted") PTXRT_ALGORITHM("lower_bound")
    PTXRT_ALGORITHM("max") PTXRT_ALGORITHM("max_element") PTXRT_ALGORITHM("merge")
    PTXRT_ALGORITHM("min") PTXRT_ALGORITHM("min_element") PTXRT_ALGORITHM("minmax")
    PTXRT_ALGORITHM("minmax_element") PTXRT_ALGORITHM("mismatch") PTXRT_ALGORITHM("partial_sort")
    PTXRT_ALGORITHM("replace") PTXRT_ALGORITHM("reverse") PTXRT_ALGORITHM("rotate")
    PTXRT_ALGORITHM("swap_ranges") PTXRT_ALGORITHM("transform") PTXRT_ALGORITHM("unique")
    PTXRT_ALGORITHM("upper_bound")
    "#endif\nnamespace std { using namespace cuda::std; }\n#endif\n";
// clang-format on
#undef PTXRT_ALGORITHM

#undef PTXRT_FORWARD
#undef PTXRT_INCLUDE

constexpr NamedText headers[] = {
    {"cstdint", cstdint},
    {"stdint.h", cstdint},
    {"cstddef", cstddef},
    {"stddef.h", cstddef},
    {"climits", climits},
    {"limits.h", climits},
    {"cfloat", cfloat},
    {"float.h", cfloat},
    {"cmath", cmath},
    {"math.h", cmath},
    {"type_traits", type_traits},
    {"limits", limits},
    {"utility", utility},
    {"cassert", cassert},
    {"assert.h", cassert},
    {"cstdlib", cstdlib},
    {"stdlib.h", cstdlib},
    {"cstring", cstring},
    {"string.h", cstring},
    {"array", array},
    {"bit", bit},
    {"complex", complex},
    {"functional", functional},
    {"initializer_list", initializer_list},
    {"iterator", iterator},
    {"numeric", numeric},
    {"optional", optional},
    {"span", span},
    {"tuple", tuple},
    {"atomic", atomic},
    {"concepts", concepts},
    {"variant", variant},
    {"numbers", numbers},
    {"memory", memory},
    {"cstdio", cstdio},
    {"stdio.h", cstdio},
    {"algorithm", algorithm},
};

}  // namespace

std::span<const NamedText> standard_headers() { return headers; }

}  // namespace ptxrt::detail
