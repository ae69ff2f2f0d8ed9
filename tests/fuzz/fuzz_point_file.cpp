// libFuzzer target: the point-file readers behind `ptxrt closest-pair --input`. The same bytes are
// read as CSV text and as raw float32 pairs; a malformed file must end in ptxrt::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "apps/closest_pair/point_file.hpp"
#include "ptxrt/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    ptxrt::apps::parse_point_csv(bytes, "fuzz.csv");
  } catch (const ptxrt::Error&) {
  }
  try {
    ptxrt::apps::parse_point_binary(bytes, "fuzz.bin");
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
