// The kernel sources of ptx_src/, compiled into the applications library at build time, so that
// the CLI and the host programs need no source tree. ptxrt::core knows no kernel of its own: an
// application that wants these asks for them here, and hands builtin_program to the readers that
// take programs by name (KernelProblem::from_json). Immutable; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

// The embedded kernel files (*.cu), without the extension: {"matmul_tiled", "transpose"}.
std::vector<std::string> builtin_kernel_names();

// The text of an embedded file by its path under ptx_src/ ("matmul_tiled.cu", "common.cuh"),
// or nothing.
std::optional<std::string_view> builtin_file(std::string_view path);

// Every embedded header (*.cuh) as (path, text): the includes a builtin kernel may use.
std::vector<std::pair<std::string_view, std::string_view>> builtin_headers();

// A kernel embedded from ptx_src/ ("matmul_tiled" or "matmul_tiled.cu"), with every embedded
// header available to its includes; every request for one name gets a copy of one Program (one
// identity). Throws Error (not_found) listing the known ones.
Program builtin_program(std::string_view name);

// builtin_program as KernelProblem's readers take it: nothing for an unknown name.
std::optional<Program> find_builtin_program(std::string_view name);

}  // namespace ptxrt::apps
