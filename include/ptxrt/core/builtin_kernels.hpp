// The kernel sources of ptx_src/, compiled into the library at build time, so that a program
// using an installed ptxrt needs no source tree. Immutable; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptxrt/export.hpp"

namespace ptxrt {

// The embedded kernel files (*.cu), without the extension: {"matmul_tiled", "transpose"}.
PTXRT_API std::vector<std::string> builtin_kernel_names();

// The text of an embedded file by its path under ptx_src/ ("matmul_tiled.cu", "common.cuh"),
// or nothing.
PTXRT_API std::optional<std::string_view> builtin_file(std::string_view path);

// Every embedded header (*.cuh) as (path, text): the includes a builtin kernel may use.
PTXRT_API std::vector<std::pair<std::string_view, std::string_view>> builtin_headers();

}  // namespace ptxrt
