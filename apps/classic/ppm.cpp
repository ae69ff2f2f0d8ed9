#include "apps/classic/ppm.hpp"

#include <fstream>
#include <string>
#include <vector>

#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

void write_ppm(const std::filesystem::path& path, std::span<const unsigned char> rgba, int width,
               int height) {
  const std::size_t pixels = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  if (width < 1 || height < 1 || rgba.size() != pixels * 4)
    throw Error(ErrorKind::invalid_argument, "write_ppm: " + std::to_string(rgba.size()) +
                                                 " bytes do not hold " + std::to_string(width) +
                                                 "x" + std::to_string(height) + " RGBA pixels");
  std::vector<char> rgb(pixels * 3);
  for (std::size_t i = 0; i < pixels; ++i)
    for (std::size_t channel = 0; channel < 3; ++channel)
      rgb[3 * i + channel] = static_cast<char>(rgba[4 * i + channel]);
  std::ofstream file(path, std::ios::binary);
  file << "P6\n" << width << ' ' << height << "\n255\n";
  file.write(rgb.data(), static_cast<std::streamsize>(rgb.size()));
  file.close();
  if (!file) throw Error(ErrorKind::io, "could not write the image " + path.string());
}

}  // namespace ptxrt::apps
