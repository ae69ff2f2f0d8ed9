// libFuzzer target: recognising a prebuilt device object (ELF sections, ar archives, the fatbins
// inside them) and reading a fatbin's table of contents, over untrusted bytes: a file the user
// names with --link, or an image to load. Neither may read outside the input; malformed input
// must end in ptxrt::Error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/fatbin.hpp"
#include "ptxrt/core/program.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    ptxrt::read_fatbin(bytes);
  } catch (const ptxrt::Error&) {
  }
  try {
    const ptxrt::DeviceObject object = ptxrt::DeviceObject::from_bytes(std::string(bytes), "input");
    object.architectures();
    object.check_links_into("sm_90");
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
