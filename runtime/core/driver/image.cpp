#include "ptxrt/core/image.hpp"

namespace ptxrt {

std::string_view to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::ptx:
      return "PTX";
    case ImageFormat::cubin:
      return "CUBIN";
    case ImageFormat::fatbin:
      return "fatbin";
    case ImageFormat::ltoir:
      return "LTO-IR";
  }
  return "image";
}

std::string format_defines(const std::vector<Define>& defines) {
  if (defines.empty()) return "(none)";
  std::string text;
  for (const Define& define : defines) {
    if (!text.empty()) text += ' ';
    text += define.name;
    if (!define.value.empty()) text += "=" + define.value;
  }
  return text;
}

std::string describe_image(const Image& image) {
  std::string label = image.name;
  if (!image.defines.empty()) label += " [" + format_defines(image.defines) + "]";
  return label + " " + image.arch;
}

}  // namespace ptxrt
