// The first stage of ptxrt's pipeline: a kernel's source text, and NVRTC turning it into an Image
// (PTX, CUBIN, fatbin or LTO-IR). A Program is one translation unit, or several (sources and
// prebuilt device objects) that compile() builds as relocatable device code and links with
// nvJitLink into one CUBIN. A Program is a plain value (copyable, immutable once built, safe to
// share between threads); compile() and cache_key() are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/device_code.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/core/target.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// A prebuilt device object linked into a Program. A plain value holding the file's bytes.
//
// Its bytes are checked whole (check_device_code) before nvJitLink reads them, except LTO-IR's
// body (also inside a fatbin, object or library): past its header it is NVIDIA's encoded IR with
// no size or checksum, and nvJitLink may crash, abort or exit with "LLVM ERROR" on a damaged one,
// taking the calling process with it. An application that links LTO-IR it did not write should
// link it in a separate process, or first let a child process of its own compile a program that
// links it (compile() with lto) and link it here only when that child ended normally, as the
// ptxrt command does for the LTO-IR it links.
struct PTXRT_API DeviceObject {
  std::string name;  // the file name, in messages, logs and the linker's diagnostics
  std::string bytes;
  DeviceObjectKind kind = DeviceObjectKind::cubin;

  // Reads the file and recognises its kind. Throws Error (io) naming the file when it cannot be
  // read, Error (invalid_argument) naming it when it holds no device code (a host program or
  // object without any, a text file that is not PTX, ...).
  static DeviceObject from_file(const std::filesystem::path& path);
  static DeviceObject from_bytes(std::string bytes, std::string name);

  // The architectures its device code is for ("sm_80", "compute_90"), from the CUBIN's ELF
  // header, the PTX's .target, or the fatbins inside; empty for LTO-IR.
  std::vector<std::string> architectures() const;
  // Throws Error (link) naming the object, what it holds and `arch` ("sm_90") when none of its
  // device code can link into `arch`: SASS of another SM family or a newer SM, PTX for a newer one.
  void check_links_into(const std::string& arch) const;
};

// One translation unit of a Program.
struct PTXRT_API SourceFile {
  std::string name;  // in diagnostics, e.g. "matmul_tiled.cu"
  std::string text;
  std::filesystem::path directory;  // serves its quoted includes; may be empty
};

class PTXRT_API Program {
 public:
  using Headers = std::map<std::string, std::string, std::less<>>;

  // Reads the file; its folder serves its quoted includes. Throws Error (io) when unreadable.
  static Program from_file(const std::filesystem::path& path);
  // `name` appears in diagnostics and the Image; `directory` (may be empty) serves includes.
  static Program from_string(std::string source, std::string name = "program.cu",
                             std::filesystem::path directory = {});

  // Several translation units from files, linked into one image; the first names the program.
  // Throws Error (io) naming the first file that cannot be read, (invalid_argument) for none.
  static Program from_files(const std::vector<std::filesystem::path>& paths);

  // Serves `#include "include_name"` (and <include_name>) from memory to every source; wins over
  // files.
  Program& add_header(std::string include_name, std::string content);
  // Another translation unit: extern __device__ functions, variables and __constant__ symbols
  // may be defined in one source and used in another. Its "// ptxrt:" lines join the manifest.
  Program& add_source(std::string source, std::string name, std::filesystem::path directory = {});
  Program& add_source_file(const std::filesystem::path& path);
  // A prebuilt device object (or library) to link in.
  Program& add_device_object(DeviceObject object);

  // The first source (the program's own).
  const std::string& source() const noexcept { return sources_.front().text; }
  const std::string& name() const noexcept { return sources_.front().name; }
  const std::filesystem::path& directory() const noexcept { return sources_.front().directory; }
  const std::vector<SourceFile>& sources() const noexcept { return sources_; }
  const std::vector<DeviceObject>& device_objects() const noexcept { return device_objects_; }
  // More than one source, or any device object: compile() links.
  bool is_linked() const noexcept { return sources_.size() > 1 || !device_objects_.empty(); }
  // The names of every source and device object joined by '+': "a.cu+b.cu+libdevice.a".
  std::string input_names() const;
  const Headers& headers() const noexcept { return headers_; }
  // Parsed from every source's "// ptxrt:" lines when the source was added.
  const Manifest& manifest() const noexcept { return manifest_; }
  // Names this program's content: copies share it, add_header gives a new one. A Jit remembers
  // what it compiled per identity and options, so files a program includes are read once per
  // Program; make a new Program to pick up edits to them.
  std::uint64_t identity() const noexcept { return identity_; }

 private:
  Program(std::string source, std::string name, std::filesystem::path directory);

  std::vector<SourceFile> sources_;
  std::vector<DeviceObject> device_objects_;
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
  // Link-time optimisation: every source compiles to LTO-IR (-dlto) and nvJitLink optimises
  // across them (-lto). Without it a linked program's sources compile to relocatable CUBINs.
  // Needed for PTX of a linked program; on for a single source, it links that source alone.
  bool lto = false;
  // Further nvJitLink options ("-maxrregcount=64", "-Xptxas=-O2"), split at whitespace; part of
  // the cache key. Only for programs that link.
  std::vector<std::string> link_options;
  // Where NVRTC's automatic precompiled headers (CUDA 12.8+) are kept; empty for none. A program
  // that includes heavy headers (cooperative_groups.h, CUB, <cuda/std/...>) then reuses their
  // parse from an earlier compile. Never changes the Image, so not part of the cache key; the
  // folder follows the disk cache's rules (created 0700; refused, PCH off, when it is a link,
  // another user's or writable by others; files 0600, bounded). Jit sets it to
  // <cache directory>/pch (JitOptions::precompiled_headers).
  std::filesystem::path precompiled_header_directory;
  // Cancels a compile that runs longer (nvrtcSetFlowCallback, NVRTC 12.8 and newer: NVRTC asks
  // between its phases, so the cancel lands when the phase in progress ends). The compile then
  // throws Error (compile) with code NVRTC_ERROR_CANCELLED. Not part of the cache key: a compile
  // that finishes is the same whatever the limit.
  std::optional<std::chrono::milliseconds> timeout;
  // Cancels the compile once a stop is requested, as `timeout` does (NVRTC 12.8 and newer, when
  // the phase in progress ends); the compile then throws Error (compile) with code
  // NVRTC_ERROR_CANCELLED. A tune's compile threads set it, so that the compiles in flight when
  // the tune ends do not hold it up. A caller waiting for the same compile in the same Jit gets
  // that error too, as with a timeout. Not part of the cache key.
  std::stop_token stop;
  // nvJitLink links in a child process of this executable, whose main() must first call
  // serve_isolated_link(). LTO-IR is checked up to its header (check_device_code); the IR past it
  // only nvJitLink reads, and a damaged one can crash it, hang it or end the process with
  // "LLVM ERROR". Set this when the program links LTO-IR, or a fatbin, object or library that
  // may hold some, from a file you did not write: such an end then throws Error
  // (invalid_argument) naming those inputs, "b.ltoir: damaged LTO-IR: nvJitLink crashed linking
  // it (SIGSEGV)", and this process goes on. The child is killed after `timeout` (a minute
  // without one). Costs a process start per link; never changes the Image, so not part of the
  // cache key.
  bool isolated_link = false;
};

// Answers an isolated link (CompileOptions::isolated_link) when this process was started as one,
// and returns its exit code; nothing in any other process. Call it first in main():
//   if (std::optional<int> code = ptxrt::serve_isolated_link(argc, argv)) return *code;
PTXRT_API std::optional<int> serve_isolated_link(int argc, char** argv);

// Compiles to the target's format: PTX, CUBIN, LTO-IR (a single source), or a fatbin holding a
// CUBIN per sm_XY and PTX per compute_XY of the target's arch list. A program of several inputs
// (or with lto) is compiled as relocatable device code and linked with nvJitLink; its compile log
// holds each source's log under the source's name, then the linker's. Defines are checked against
// the manifest before NVRTC runs. A compile error throws Error (compile) whose message holds each
// diagnostic with two lines of context around it from the original file, the defines and the
// options; a link error (undefined or duplicate symbol, architecture mismatch) throws Error (link)
// naming the symbol and the inputs. `driver_version` only feeds the key (see cache_key).
PTXRT_API Image compile(const Program& program, const CompileOptions& options,
                        int driver_version = 0);

// SHA-256 (hex) of everything that determines the Image: every source, the content of every
// header they include (quoted includes resolved recursively; named headers too), every
// device object's bytes, the defines after validation (sorted by name), the options, lto and the
// link options, the target arch with its suffix, the NVRTC and nvJitLink versions and, for PTX
// (which the driver JIT-compiles), `driver_version`.
PTXRT_API std::string cache_key(const Program& program, const CompileOptions& options,
                                int driver_version = 0);

// SHA-256 (hex) of what the kernel is, apart from how it is compiled: its name, its sources and
// the content of every header they include (found as for cache_key, without include paths), and
// its device objects.
// Tuning results are keyed by it, so that editing the kernel or a header retires them.
PTXRT_API std::string source_hash(const Program& program);

// One fatbin from compiled images (CUBINs and PTX, one per architecture) with nvFatbin: what
// compile() does for a fatbin target, and what `ptxrt cache warm --fatbin-dir` ships. The result
// is named `name`, its arch lists the parts'. Throws Error (link) when nvFatbin refuses a part.
PTXRT_API Image make_fatbin(const std::vector<Image>& parts, std::string name);

// The toolkit include folders given to NVRTC for <cuda_fp16.h>, <cooperative_groups.h> and
// <cuda/std/...>: $CUDA_PATH/include or $CUDA_HOME/include when set, else the build's toolkit;
// each followed by its cccl/ subfolder when present.
PTXRT_API std::vector<std::filesystem::path> toolkit_include_paths();

}  // namespace ptxrt
