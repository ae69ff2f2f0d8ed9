// libFuzzer target: the ptxas log parser (`-Xptxas -v` output). Any text is a log: lines that are
// not ptxas' report are ignored, so it must neither throw nor crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ptxrt/core/resources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ptxrt::parse_ptxas_info(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
