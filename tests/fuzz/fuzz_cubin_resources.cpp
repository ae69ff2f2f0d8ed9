// libFuzzer target: the CUBIN resource reader (an ELF parser over untrusted bytes: a CUBIN may
// come from any file the user names). It must never read outside the input, and a malformed
// CUBIN must end in ptxrt::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/resources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    ptxrt::read_cubin_resources(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
