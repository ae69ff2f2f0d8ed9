// The first stage of ptxrt's pipeline: a kernel's source text, and NVRTC turning it into an Image
// (PTX or CUBIN). A Program is a plain value (copyable, immutable once built, safe to share between
// threads); compile() and cache_key() are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/image.hpp"
#include "ptxrt/manifest.hpp"
#include "ptxrt/target.hpp"

namespace ptxrt {

class PTXRT_API Program {
 public:
  using Headers = std::map<std::string, std::string, std::less<>>;

  // Reads the file; its folder serves its quoted includes. Throws Error (io) when unreadable.
  static Program from_file(const std::filesystem::path& path);
  // `name` appears in diagnostics and the Image; `directory` (may be empty) serves includes.
  static Program from_string(std::string source, std::string name = "program.cu",
                             std::filesystem::path directory = {});
  // A kernel embedded from ptx_src/ ("matmul_tiled" or "matmul_tiled.cu"), with every embedded
  // header available to its includes. Throws Error (not_found) listing the known ones.
  static Program builtin(std::string_view name);

  // Serves `#include "include_name"` (and <include_name>) from memory; wins over files.
  Program& add_header(std::string include_name, std::string content);

  const std::string& source() const noexcept { return source_; }
  const std::string& name() const noexcept { return name_; }
  const std::filesystem::path& directory() const noexcept { return directory_; }
  const Headers& headers() const noexcept { return headers_; }
  // Parsed from the source's "// ptxrt:" lines when the program was made.
  const Manifest& manifest() const noexcept { return manifest_; }
  // Names this program's content: copies share it, add_header gives a new one. A Jit remembers
  // what it compiled per identity and options, so files a program includes are read once per
  // Program; make a new Program to pick up edits to them.
  std::uint64_t identity() const noexcept { return identity_; }

 private:
  Program(std::string source, std::string name, std::filesystem::path directory);

  std::string source_;
  std::string name_;
  std::filesystem::path directory_;
  Headers headers_;
  Manifest manifest_;
  std::uint64_t identity_;
};

struct PTXRT_API CompileOptions {
  std::vector<Define> defines;  // validated against the manifest; defaults filled in
  std::vector<std::filesystem::path> include_paths;  // -I, searched after the program's folder
  // Further NVRTC options ("--use_fast_math", "-maxrregcount=64", "-lineinfo"); each string is
  // split at whitespace, so "-Xptxas -dlcm=cg" works as typed on a command line.
  std::vector<std::string> extra_options;
  Target target;  // arch and format; see select_target(). An empty arch is an error.
  // Template instantiations to keep ("matmul<float, 16>"); their lowered names go to the Image.
  std::vector<std::string> name_expressions;
  // -Xptxas -v, so that the log holds ptxas' resource report; by default on for CUBIN only
  // (PTX is not assembled by NVRTC).
  std::optional<bool> resource_usage;
  // Cancels a compile that runs longer (nvrtcSetFlowCallback, NVRTC 12.8 and newer: NVRTC asks
  // between its phases, so the cancel lands when the phase in progress ends). The compile then
  // throws Error (compile) with code NVRTC_ERROR_CANCELLED. Not part of the cache key: a compile
  // that finishes is the same whatever the limit.
  std::optional<std::chrono::milliseconds> timeout;
};

// Compiles to PTX or CUBIN. Defines are checked against the manifest before NVRTC runs. A
// compile error throws Error (compile) whose message holds each diagnostic with two lines of
// context around it from the original file, the defines and the options. `driver_version` only
// feeds the key (see cache_key).
PTXRT_API Image compile(const Program& program, const CompileOptions& options,
                        int driver_version = 0);

// SHA-256 (hex) of everything that determines the Image: the source, the content of every header
// it includes (quoted includes resolved recursively; named and builtin headers too), the defines
// after validation (sorted by name), the options, the target arch with its suffix, the NVRTC
// version and, for PTX (which the driver JIT-compiles), `driver_version`.
PTXRT_API std::string cache_key(const Program& program, const CompileOptions& options,
                                int driver_version = 0);

// SHA-256 (hex) of what the kernel is, apart from how it is compiled: its name, its source and
// the content of every header it includes (found as for cache_key, without include paths).
// Tuning results are keyed by it, so that editing the kernel or a header retires them.
PTXRT_API std::string source_hash(const Program& program);

// The toolkit include folders given to NVRTC for <cuda_fp16.h>, <cooperative_groups.h> and
// <cuda/std/...>: $CUDA_PATH/include or $CUDA_HOME/include when set, else the build's toolkit;
// each followed by its cccl/ subfolder when present.
PTXRT_API std::vector<std::filesystem::path> toolkit_include_paths();

}  // namespace ptxrt
