// libFuzzer target: the define and manifest parsers. The input is split at the first NUL: the
// part before is a kernel source whose "// ptxrt:" lines become a manifest, the part after holds
// one -D argument per line, checked against it. Every bad input must end in ptxrt::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view source = input.substr(0, split);
  std::string_view arguments = split == std::string_view::npos ? "" : input.substr(split + 1);
  try {
    const ptxrt::Manifest manifest = ptxrt::parse_manifest(source, "fuzz.cu");
    std::vector<ptxrt::Define> defines;
    while (!arguments.empty()) {
      const std::size_t end = arguments.find('\n');
      defines.push_back(ptxrt::parse_define(arguments.substr(0, end)));
      arguments = end == std::string_view::npos ? "" : arguments.substr(end + 1);
    }
    ptxrt::validate_defines(manifest, defines);
    ptxrt::format_defines(defines);
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
