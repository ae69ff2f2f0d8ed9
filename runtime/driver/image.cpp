#include "ptxrt/image.hpp"

#include "ptxrt/manifest.hpp"

namespace ptxrt {

std::string describe_image(const Image& image) {
  std::string label = image.name;
  if (!image.defines.empty()) label += " [" + format_defines(image.defines) + "]";
  return label + " " + image.arch;
}

}  // namespace ptxrt
