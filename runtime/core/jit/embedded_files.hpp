// Internal: the kernel sources compiled into the library by cmake/EmbedKernels.cmake.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace ptxrt::detail {

struct EmbeddedFile {
  std::string_view path;  // relative to ptx_src/, '/'-separated: "matmul_tiled.cu"
  const unsigned char* bytes;
  std::size_t size;

  std::string_view text() const { return {reinterpret_cast<const char*>(bytes), size}; }
};

// Sorted by path. Defined in the generated source.
std::span<const EmbeddedFile> embedded_kernel_files();

}  // namespace ptxrt::detail
