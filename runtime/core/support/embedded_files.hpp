// Internal: kernel sources compiled into a library by cmake/EmbedKernels.cmake, as a sorted table
// that a generated function returns (ptxrt_embed_kernels names it).
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

}  // namespace ptxrt::detail
