// Shared by the disk cache tests: a scratch directory, an Image with every field set,
// field-by-field comparison, and (log_capture.hpp) a capture of log output.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "log_capture.hpp"
#include "ptxrt/hash.hpp"
#include "ptxrt/image.hpp"

namespace ptxrt::testing {

class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ptxrt-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code error;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, error);
    std::filesystem::remove_all(path_, error);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string key_for(const std::string& seed) { return sha256_hex(seed); }

// The permission bits of a file or folder (0700, 0600, ...).
inline unsigned mode_of(const std::filesystem::path& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

// Every field set, and data that is binary: NULs and high bytes included.
inline Image sample_image(const std::string& seed, std::size_t data_bytes = 4096) {
  Image image;
  image.format = ImageFormat::cubin;
  image.arch = "sm_90a";
  image.data.resize(data_bytes);
  for (std::size_t i = 0; i < data_bytes; ++i) image.data[i] = static_cast<char>((i * 31) % 256);
  image.data += seed;
  image.name = "matmul_tiled.cu";
  image.defines = {{"TILE_WIDTH", "32"}, {"USE_FAST_MATH", ""}};
  image.options = {"--gpu-architecture=sm_90a", "-DTILE_WIDTH=32", "-DUSE_FAST_MATH"};
  image.compile_log = std::string("ptxas info: used 32 registers\n") + '\xff' + '\0' + " end";
  image.lowered_names = {{"scale<float>", "_Z5scaleIfEvPT_"}};
  image.key = key_for(seed);
  image.nvrtc_version = 13000;
  return image;
}

inline bool same_image(const Image& a, const Image& b) {
  return a.format == b.format && a.arch == b.arch && a.data == b.data && a.name == b.name &&
         a.defines == b.defines && a.options == b.options && a.compile_log == b.compile_log &&
         a.lowered_names == b.lowered_names && a.key == b.key &&
         a.nvrtc_version == b.nvrtc_version;
}

}  // namespace ptxrt::testing
