// The JIT as one object: source → Image (memory cache → disk cache → NVRTC) → Module per context,
// or one Library for every context.
//
// Every step is single-flight: N threads asking at once for the same specialization trigger one
// compile and one load (and N processes sharing the disk cache, one compile: see DiskCache);
// different specializations compile in parallel; a hit never waits on a compile. Thread safety:
// share one Jit (or Jit::shared()) across all threads. See docs/threading.md for the whole
// contract.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/library.hpp"
#include "ptxrt/core/module.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API JitOptions {
  // Where compiled images persist between processes; empty for memory only. A folder that is a
  // link, another user's or writable by others is not written at all: the Jit then runs without
  // disk (see DiskCache).
  std::filesystem::path cache_directory = DiskCache::default_directory();
  std::uintmax_t cache_max_bytes = DiskCache::default_max_bytes();
  // NVRTC's automatic precompiled headers in <cache_directory>/pch, for requests that name no
  // folder of their own (CompileOptions::precompiled_header_directory); off without a cache
  // directory or where it is refused (said once), or where NVRTC lacks them (before CUDA 12.8).
  bool precompiled_headers = true;
  ModuleLoadOptions load_options;
};

struct PTXRT_API JitStats {
  std::uint64_t image_memory_hits = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t compiles = 0;
  std::uint64_t module_hits = 0;
  std::uint64_t module_loads = 0;
  std::uint64_t library_hits = 0;
  std::uint64_t library_loads = 0;
};

// What Jit::precompile did: the key the image is cached under (cache_key) and whether NVRTC ran
// for it (false: the memory or the disk cache had it).
struct PTXRT_API PrecompiledImage {
  std::string key;
  bool compiled = false;
  std::shared_ptr<const Image> image;
};

class PTXRT_API Jit {
 public:
  explicit Jit(JitOptions options = {});
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  // The process-wide instance, with options from the environment (PTXRT_CACHE_DIR, ...).
  static Jit& shared();

  // The compiled image; options.target must name an arch (see target_for). Asking again with the
  // same Program (or a copy) and options is a lookup: no hashing, no file reads.
  std::shared_ptr<const Image> image(const Program& program, const CompileOptions& options,
                                     int driver_version = 0);
  // The image compiled ahead of time into the caches (options.target must name an arch), as
  // image() compiles it, with its key and whether this call compiled it: what `ptxrt cache warm`
  // does for each configuration. No GPU is needed.
  PrecompiledImage precompile(const Program& program, const CompileOptions& options,
                              int driver_version = 0);
  // The options with the target filled in for `context`'s device when none is named: the exact
  // sm_XY CUBIN, or PTX when the device is newer than NVRTC (see select_target).
  static CompileOptions target_for(CompileOptions options, const Context& context);
  // Compiled for, checked against, and loaded into `context` (once per context and key). Asking
  // again with the same Program (or a copy) and options is a lookup: no hashing, no file reads.
  Module module(const Program& program, const CompileOptions& options, const Context& context);
  Kernel kernel(const Program& program, const CompileOptions& options, const Context& context,
                std::string_view entry);

  // One Library per image, shared by every context: for one image that serves several devices
  // of one arch (or several contexts of one device), loaded once where the driver supports
  // context-independent loading and as a module per context otherwise. options.target must
  // name an arch (see target_for): the library is not tied to any one device.
  Library library(const Program& program, const CompileOptions& options);

  // Drops this Jit's modules of `context`, and its libraries' kernels of `context` (they stay
  // loaded while the caller holds them). Needed before an application destroys a borrowed context.
  void forget(const Context& context);
  DiskCache* disk_cache() noexcept;  // nullptr when running without disk
  JitStats stats() const;

 private:
  // By cache key: memory, then disk, then NVRTC.
  PrecompiledImage find_or_compile(const Program& program, const CompileOptions& options,
                                   int driver_version);
  Module load_module(const Program& program, const CompileOptions& options,
                     const Context& context);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ptxrt
