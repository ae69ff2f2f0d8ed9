// Binary PPM (P6) images: the simplest format every viewer opens.
#pragma once

#include <filesystem>
#include <span>

namespace ptxrt::apps {

// Writes width×height RGBA pixels (row-major, 4 bytes each) as an 8-bit P6 file, dropping alpha.
// Error(invalid_argument) when the size does not match, Error(io) when the file cannot be written.
void write_ppm(const std::filesystem::path& path, std::span<const unsigned char> rgba, int width,
               int height);

}  // namespace ptxrt::apps
