// Kernels with parameter lists of every shape (none, one pointer, many of mixed sizes, structs
// passed by value with padding, a float4, a parameter over 16 KiB, a template), as one source for
// NVRTC, and the layout each must have, computed by the host compiler from the same declarations:
// the CUDA ABI lays a kernel's parameters out as the host lays out a struct of them. Shared by the
// CPU test (layouts read from CUBIN and PTX) and the GPU test (the driver's own layout, launches).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>
#include <vector_types.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "process.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/parameter_layout.hpp"

namespace ptxrt::testing::layouts {

using ptxrt::testing::ProcessResult;
using ptxrt::testing::run_process;

// The by-value types, compiled by the host here and by NVRTC from their text below.
#define PTXRT_TESTING_BY_VALUE_TYPES                                         \
  struct Padded { /* 7 bytes of padding after c */                           \
    char c;                                                                  \
    double d;                                                                \
  };                                                                         \
  struct Odd { /* 3 bytes, aligned to 1 */                                   \
    char bytes[3];                                                           \
  };                                                                         \
  struct Wide { /* over 16 KiB: ptxas records it as EIATTR_KPARAM_INFO_V2 */ \
    float values[5000];                                                      \
  };
PTXRT_TESTING_BY_VALUE_TYPES
#define PTXRT_TESTING_TEXT(...) #__VA_ARGS__
#define PTXRT_TESTING_EXPANDED_TEXT(...) PTXRT_TESTING_TEXT(__VA_ARGS__)

// Each kernel writes what it was given to `out`, as floats (all values are exact in a float), so
// that a launch shows every argument arrived where the layout says.
inline const std::string source =
    PTXRT_TESTING_EXPANDED_TEXT(PTXRT_TESTING_BY_VALUE_TYPES) + std::string(R"(
__device__ int none_ran;
extern "C" __global__ void none() { none_ran = 1; }
extern "C" __global__ void one(float* out) { out[0] = 42.0f; }
extern "C" __global__ void many(float* out, int n, char c, double d, short s, float4 v,
                                Padded padded, Odd odd, unsigned long long u) {
  const float values[] = {float(n), float(c), float(d), float(s), v.x, v.y, v.z, v.w,
                          float(padded.c), float(padded.d), float(odd.bytes[0]),
                          float(odd.bytes[1]), float(odd.bytes[2]), float(u)};
  for (int i = 0; i < 14; ++i) out[i] = values[i];
}
extern "C" __global__ void wide(char c, Wide w, float* out) {
  out[0] = float(c);
  out[1] = w.values[0];
  out[2] = w.values[4999];
}
template <typename T>
__global__ void scaled(T* out, T factor, int n) {
  for (int i = 0; i < n; ++i) out[i] = factor * T(i);
}
)");
inline const std::string template_expression = "scaled<double>";
inline constexpr std::size_t many_outputs = 14;

// The host's view of each parameter list.
struct OneArguments {
  float* out;
};
struct ManyArguments {
  float* out;
  int n;
  char c;
  double d;
  short s;
  float4 v;
  Padded padded;
  Odd odd;
  unsigned long long u;
};
struct WideArguments {
  char c;
  Wide w;
  float* out;
};
struct ScaledArguments {
  double* out;
  double factor;
  int n;
};

#define PTXRT_TESTING_PARAMETER(arguments, member) \
  ParameterInfo { offsetof(arguments, member), sizeof(arguments::member) }

struct ExpectedEntry {
  std::string name;  // the entry point, or the name expression it was compiled for
  std::vector<ParameterInfo> parameters;
};

inline std::vector<ExpectedEntry> expected_entries() {
  return {
      {"none", {}},
      {"one", {PTXRT_TESTING_PARAMETER(OneArguments, out)}},
      {"many",
       {PTXRT_TESTING_PARAMETER(ManyArguments, out), PTXRT_TESTING_PARAMETER(ManyArguments, n),
        PTXRT_TESTING_PARAMETER(ManyArguments, c), PTXRT_TESTING_PARAMETER(ManyArguments, d),
        PTXRT_TESTING_PARAMETER(ManyArguments, s), PTXRT_TESTING_PARAMETER(ManyArguments, v),
        PTXRT_TESTING_PARAMETER(ManyArguments, padded), PTXRT_TESTING_PARAMETER(ManyArguments, odd),
        PTXRT_TESTING_PARAMETER(ManyArguments, u)}},
      {"wide",
       {PTXRT_TESTING_PARAMETER(WideArguments, c), PTXRT_TESTING_PARAMETER(WideArguments, w),
        PTXRT_TESTING_PARAMETER(WideArguments, out)}},
      {template_expression,
       {PTXRT_TESTING_PARAMETER(ScaledArguments, out),
        PTXRT_TESTING_PARAMETER(ScaledArguments, factor),
        PTXRT_TESTING_PARAMETER(ScaledArguments, n)}},
  };
}

#undef PTXRT_TESTING_PARAMETER

// The entry point an ExpectedEntry names in `image`: itself, or the symbol its name expression
// was lowered to.
inline std::string entry_symbol(const Image& image, const std::string& name) {
  for (const auto& [expression, lowered] : image.lowered_names)
    if (expression == name) return lowered;
  return name;
}

// The toolkit's fatbinary packs a CUBIN and the PTX of the same source into one fatbin, as a
// multi-architecture build ships; `extra` adds an option ("--compress-all").
inline std::string make_fatbin(const Image& cubin, const Image& ptx,
                               const std::string& extra = {}) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ptxrt-fatbin-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::filesystem::path directory = pattern;
  std::ofstream(directory / "layouts.cubin", std::ios::binary) << cubin.data;
  std::ofstream(directory / "layouts.ptx", std::ios::binary) << ptx.data;
  const std::string sm = cubin.arch.substr(cubin.arch.find('_') + 1);
  std::vector<std::string> command{
      PTXRT_FATBINARY_PATH, "--create=" + (directory / "layouts.fatbin").string(),
      "--image3=kind=elf,sm=" + sm + ",file=" + (directory / "layouts.cubin").string(),
      "--image3=kind=ptx,sm=" + sm + ",file=" + (directory / "layouts.ptx").string()};
  if (!extra.empty()) command.push_back(extra);
  const ProcessResult made = run_process(command);
  std::ifstream in(directory / "layouts.fatbin", std::ios::binary);
  std::string fatbin{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::filesystem::remove_all(directory);
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);
  return fatbin;
}

}  // namespace ptxrt::testing::layouts
