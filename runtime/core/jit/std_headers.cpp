#include "jit/std_headers.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace ptxrt::detail {
namespace {

// The C++ headers that are libcu++'s of the same name (cuda/std/<name>) with its names in std.
constexpr std::string_view forwarded[] = {
    "cstdint",  "cstddef", "type_traits", "limits",  "utility",    "cstdlib",
    "cstring",  "array",   "bit",         "complex", "functional", "initializer_list",
    "iterator", "numeric", "optional",    "span",    "tuple",      "atomic",
    "concepts", "variant", "numbers",     "memory",
};

// Macros only: libcu++'s declare no namespace to bring into std.
constexpr std::string_view macro_only[] = {"climits", "cassert"};

// The C headers, each the text of its C++ counterpart.
constexpr std::pair<std::string_view, std::string_view> c_headers[] = {
    {"stdint.h", "cstdint"}, {"stddef.h", "cstddef"}, {"limits.h", "climits"},
    {"float.h", "cfloat"},   {"math.h", "cmath"},     {"assert.h", "cassert"},
    {"stdlib.h", "cstdlib"}, {"string.h", "cstring"}, {"stdio.h", "cstdio"},
};

// libcu++ defines INFINITY and NAN under NVRTC (through numeric_limits), but not HUGE_VAL.
constexpr std::string_view cmath_additions =
    "#ifndef HUGE_VALF\n#define HUGE_VALF "
    "(::cuda::std::numeric_limits<float>::infinity())\n#endif\n"
    "#ifndef HUGE_VAL\n#define HUGE_VAL "
    "(::cuda::std::numeric_limits<double>::infinity())\n#endif\n";

// The binary32 and binary64 values every CUDA device uses.
constexpr std::string_view cfloat_macros =
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
    "#define FLT_EPSILON 1.19209290e-7F\n#define DBL_EPSILON 2.2204460492503131e-16\n";

// Device printf is built into NVRTC; the header only adds std::printf.
constexpr std::string_view cstdio_declarations = "namespace std { using ::printf; }\n";

// libcu++ 3.0 has the algorithms but no <cuda/std/algorithm> that gathers them; each is taken
// where this toolkit has it, so that a later libcu++ that moves one still compiles.
constexpr std::string_view algorithms[] = {
    "all_of",         "any_of",        "none_of",      "binary_search", "clamp",
    "copy",           "copy_backward", "copy_if",      "copy_n",        "count",
    "count_if",       "equal",         "equal_range",  "fill",          "fill_n",
    "find",           "find_if",       "find_if_not",  "for_each",      "for_each_n",
    "generate",       "generate_n",    "is_sorted",    "lower_bound",   "max",
    "max_element",    "merge",         "min",          "min_element",   "minmax",
    "minmax_element", "mismatch",      "partial_sort", "replace",       "reverse",
    "rotate",         "swap_ranges",   "transform",    "unique",        "upper_bound",
};

std::string guarded(std::string_view name, const std::string& body) {
  std::string guard = "PTXRT_SHIM_";
  for (char c : name) guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "#ifndef " + guard + "\n#define " + guard + "\n" + body + "#endif\n";
}

// `using namespace` rather than a list of using-declarations: it exposes exactly what libcu++
// declares, without a list here to fall out of date.
constexpr std::string_view into_std = "namespace std { using namespace cuda::std; }\n";

std::string libcu_include(std::string_view name) {
  return "#include <cuda/std/" + std::string(name) + ">\n";
}

std::string forwarding(std::string_view name) {
  return libcu_include(name) + std::string(into_std);
}

std::string algorithm() {
  std::string body =
      "#if __has_include(<cuda/std/algorithm>)\n#include <cuda/std/algorithm>\n#else\n";
  for (std::string_view name : algorithms) {
    const std::string path = "<cuda/std/__algorithm/" + std::string(name) + ".h>";
    body += "#if __has_include(" + path + ")\n#include " + path + "\n#endif\n";
  }
  return body + "#endif\n" + std::string(into_std);
}

std::vector<NamedText> make_headers() {
  std::vector<NamedText> headers;
  for (std::string_view name : forwarded)
    headers.push_back({std::string(name), guarded(name, forwarding(name))});
  for (std::string_view name : macro_only)
    headers.push_back({std::string(name), guarded(name, libcu_include(name))});
  headers.push_back(
      {"cmath", guarded("cmath", forwarding("cmath") + std::string(cmath_additions))});
  headers.push_back({"cfloat", guarded("cfloat", std::string(cfloat_macros))});
  headers.push_back({"cstdio", guarded("cstdio", std::string(cstdio_declarations))});
  headers.push_back({"algorithm", guarded("algorithm", algorithm())});
  for (auto [c_name, cpp_name] : c_headers) {
    const auto cpp = std::ranges::find(headers, cpp_name, &NamedText::name);
    headers.push_back({std::string(c_name), cpp->text});
  }
  return headers;
}

}  // namespace

std::span<const NamedText> standard_headers() {
  static const std::vector<NamedText> headers = make_headers();
  return headers;
}

}  // namespace ptxrt::detail
