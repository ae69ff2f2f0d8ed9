// libFuzzer target: the device-code check (check_device_code) over untrusted bytes, as the linker
// and the loader ask for it, and what reads the bytes after it: a DeviceObject's architectures,
// a fatbin's table of contents, a CUBIN's resources. The input is a file the user names with
// --link or an image to load: nothing may read outside it, and bytes the check passes must not
// make a later reader fail other than with ptxrt::Error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ptxrt/core/device_code.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/fatbin.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/resources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    ptxrt::check_device_code(bytes, "input", ptxrt::DeviceCodeReader::loader);
  } catch (const ptxrt::Error&) {
  }
  try {
    ptxrt::read_fatbin(bytes);
  } catch (const ptxrt::Error&) {
  }
  try {
    const ptxrt::DeviceObject object = ptxrt::DeviceObject::from_bytes(std::string(bytes), "input");
    object.check_links_into("sm_90");
    if (object.kind == ptxrt::DeviceObjectKind::cubin) ptxrt::read_cubin_resources(object.bytes);
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
