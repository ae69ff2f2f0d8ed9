// The compile-time constants a host program compiles its kernel file with. Pure; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt::apps {

// Unlike the compiler, which passes undeclared names through, a name that `program`'s manifest
// does not declare is an Error(invalid_argument) here, naming the constants it does declare: on
// the command line it is a mistake (-D TILE_WIDTH for the naive matmul, -D TILEWIDTH for the tiled
// one), not a no-op. A program without a manifest (no "// ptxrt:" line: a plain .cu file) takes
// any name.
void check_declared(const Program& program, const std::vector<Define>& defines);

// `defines` checked by check_declared and against the manifest's values, and completed with its
// defaults.
std::vector<Define> resolve_defines(const Program& program, std::vector<Define> defines);

// Options that compile with `defines` and nothing else (the target comes from the context).
CompileOptions compile_options(std::vector<Define> defines);

// The integer value of `name` among resolved defines; Error(invalid_argument) when absent or not
// an integer.
int define_int(const std::vector<Define>& defines, std::string_view name);

}  // namespace ptxrt::apps
