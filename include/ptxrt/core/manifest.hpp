// A kernel file's manifest: the compile-time constants it accepts and the entry points it
// defines, declared in comment lines so that the file stays plain CUDA C++:
//
//   // ptxrt: define TILE_WIDTH in {4, 8, 16, 32} default 16
//   // ptxrt: entry matmul_tiled one thread per C element, TILE_WIDTH^2 threads per block
//
// and, for the tuner (see tuning_space.hpp), which constants it may vary and which combinations
// are valid; both name constants declared on an earlier line:
//
//   // ptxrt: tune TILE_WIDTH
//   // ptxrt: constraint TILE_WIDTH * TILE_WIDTH <= 1024
//
// and a tuning problem for `ptxrt tune FILE.cu` (see kernel_problem.hpp): the text after each
// "problem" marker, joined line by line, is one JSON document of a problem file's form:
//
//   // ptxrt: problem {"kernel": "scale", "sizes": ["n"], "block": ["BLOCK"],
//   // ptxrt: problem  "grid": ["ceil_div(n, BLOCK)"], "arguments": [...]}
//
// Checking defines against it catches a bad value before NVRTC runs, with a message that lists
// the valid ones. Plain values; thread-safe to share once built.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/expression.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API ManifestDefine {
  std::string name;
  std::vector<std::string> values;           // the valid values, as declared (in order)
  std::optional<std::string> default_value;  // one of values, or none: then it is required
  int line = 0;                              // where it was declared (1-based)
  bool tunable = false;                      // named by a "tune" line
};

// "constraint EXPR": a tuning config is valid only where EXPR is not 0.
struct PTXRT_API ManifestConstraint {
  Expression expression;
  int line = 0;
};

struct PTXRT_API ManifestEntry {
  std::string name;         // the extern "C" function name
  std::string description;  // free text: launch shape, what it computes
  int line = 0;
};

// One "problem" line's text (after the marker) and where it is.
struct PTXRT_API ManifestProblemLine {
  std::string text;
  int line = 0;
};

struct PTXRT_API Manifest {
  std::string file;  // the kernel file's name, for messages ("matmul_tiled.cu")
  std::vector<ManifestDefine> defines;
  std::vector<ManifestEntry> entries;
  std::vector<ManifestConstraint> constraints;
  std::vector<ManifestProblemLine> problem;  // empty when the file describes no problem

  const ManifestDefine* find_define(std::string_view name) const;
  const ManifestEntry* find_entry(std::string_view name) const;
};

// Reads every "// ptxrt:" line of `source`. A malformed one throws Error (invalid_argument)
// naming `file` and the line: "matmul_tiled.cu:3: ...".
PTXRT_API Manifest parse_manifest(std::string_view source, std::string_view file = "kernel.cu");

// Checks `defines` against the manifest and completes them: a declared constant that is missing
// gets its default (appended), a value outside the declared set or a missing constant without a
// default throws Error (invalid_argument). Undeclared defines pass through unchecked; a name
// that is not a C identifier, or one given twice, throws.
PTXRT_API void validate_defines(const Manifest& manifest, std::vector<Define>& defines);

// "NAME=VALUE" or "NAME" (empty value). Throws Error (invalid_argument) when NAME is not a C
// identifier.
PTXRT_API Define parse_define(std::string_view text);

PTXRT_API bool is_identifier(std::string_view text);

}  // namespace ptxrt
