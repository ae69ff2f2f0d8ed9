// What a compiled kernel costs the SM: registers, shared and constant memory, stack, barriers.
// The `ptxas -v` report, read two ways: from the CUBIN itself (no GPU, no log needed) and from
// the compile log, which alone knows about spills. Plain values; every function here is pure and
// safe to call from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API KernelResources {
  std::string name;  // the entry symbol, mangled for C++ kernels ("_Z6kernelPf")
  // Of a program of several sources: the source whose compile reported the kernel (its section
  // of the image's compile log). Empty for one source, for LTO (compiled as one at link time) and
  // where the resources came from a CUBIN alone.
  std::string source;
  int sm = 0;         // SM version the code is for (90 for sm_90); 0 when the source did not say
  int registers = 0;  // 32-bit registers per thread
  int barriers = 0;   // named barriers per block (bar.sync ids used, __syncthreads counts one)
  // From __launch_bounds__ / .maxntid: the most threads a block may have; 0 = no bound.
  int max_threads_per_block = 0;
  // The kernel's own __shared__ variables, per block (excludes dynamic shared memory).
  std::size_t static_shared_bytes = 0;
  // Shared memory the system reserves in front of the user's, when the CUBIN lays it out
  // explicitly (sm_90 and newer with CUDA 13: 1 KB). 0 when the CUBIN leaves it to the driver;
  // occupancy charges the architecture's reserve either way
  // (ArchLimits::reserved_shared_memory_per_block).
  std::size_t reserved_shared_bytes = 0;
  // The module's __constant__ variables (constant bank 3). Shared by every kernel of the module.
  std::size_t user_constant_bytes = 0;
  std::size_t param_bytes = 0;        // the kernel's parameters, as laid out in constant bank 0
  std::size_t param_bank_bytes = 0;   // all of constant bank 0: the driver's area plus parameters
  std::size_t stack_frame_bytes = 0;  // per-thread local memory of the kernel's own frame
  // Per-thread stack the driver must provide: the frame plus the deepest chain of callees.
  std::size_t cumulative_stack_bytes = 0;
  // Spills exist only in the compile log; empty when the resources came from a CUBIN alone.
  std::optional<std::size_t> spill_store_bytes;
  std::optional<std::size_t> spill_load_bytes;

  bool operator==(const KernelResources&) const = default;
};

// Reads every kernel's resources out of a CUBIN (a 64-bit little-endian CUDA ELF), in symbol
// table order. Throws Error (invalid_argument) naming the defect when the bytes are not a
// well-formed CUBIN; never reads outside `cubin`.
PTXRT_API std::vector<KernelResources> read_cubin_resources(std::string_view cubin);

// Reads the entry functions out of a compile log made with `-Xptxas -v` (nvcc's or NVRTC's), in
// log order. A linked program's log, which holds each source's log after a "== a.cu ==" line
// (Image::compile_log), gives each entry its source. Device functions' own property lines are
// skipped: their cost is folded into the entries' cumulative stack. Lines that are not ptxas'
// report are ignored.
PTXRT_API std::vector<KernelResources> parse_ptxas_info(std::string_view log);

// One report from both sources, matched by name: the CUBIN is authoritative for everything it
// records; the log adds the spills and the source. Kernels only the log knows are appended as the
// log has them.
PTXRT_API std::vector<KernelResources> merge(std::vector<KernelResources> from_cubin,
                                             const std::vector<KernelResources>& from_log);

// An image's kernels: a CUBIN's records merged with its compile log's; for any other format,
// what the log reports.
PTXRT_API std::vector<KernelResources> image_resources(const Image& image);

}  // namespace ptxrt
