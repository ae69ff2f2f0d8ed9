// libFuzzer target: the parameter-layout reader (a CUBIN's .nv.info records, a PTX .entry list,
// a fatbin's members), which reads every image a Module or Library loads, a user's own bytes
// included. It must never read outside the input, and a malformed image must end in ptxrt::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/parameter_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    ptxrt::read_parameter_layouts(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
