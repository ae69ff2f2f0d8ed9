// A compiled image loaded once for the whole process, usable in every context of every device it
// was compiled for: CUDA 12's context-independent loading (cuLibraryLoadData). Where the driver
// lacks it, a Library loads a Module into each context on first use instead, so callers write one
// code path for both.
//
// Use a Library when one image serves several contexts (one CUBIN for every GPU of one arch, or a
// primary context and contexts of the application's own); a Module when it serves one.
//
// Thread safety: a Library and the Kernels taken from it may be shared by any number of threads;
// kernel() may be called for different contexts at once. Ownership: copies share one loaded
// library, unloaded when the last copy and the last Kernel taken from it are gone. A Library holds
// every context it made a Kernel for (as a Module holds its context) until forget(context).
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/module.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

namespace detail {
struct LibraryState;
}

class PTXRT_API Library {
 public:
  // Whether this process's driver loads images independently of contexts (cuLibraryLoadData,
  // CUDA >= 12.0). When false, Library works through one Module per context.
  static bool context_independent_loading();

  // Loads `image` once (cuLibraryLoadData; nothing is loaded yet without it). A failure is an
  // Error whose message holds the JIT's error log. The image is checked against each device in
  // kernel(), so an sm_90 CUBIN asked for on an sm_80 device is refused there with the reason.
  static Library load(Image image, const ModuleLoadOptions& options = {});

  // The entry point `name` bound to `context` (cuLibraryGetKernel, then cuKernelGetFunction with
  // the context current), with the same launch checks as Module::kernel. Made once per (context,
  // name): asking again is a map lookup. An unknown name is an Error(not_found).
  Kernel kernel(std::string_view name, const Context& context) const;

  // Drops this library's kernels (or per-context module) of `context`; Kernels the caller holds
  // stay valid. Needed before an application destroys a borrowed context (Context::borrow).
  void forget(const Context& context) const;

  // The driver's library, or nullptr when working through per-context modules.
  CUlibrary handle() const noexcept;
  // "matmul_tiled.cu [TILE_WIDTH=32] sm_90", as describe_image() names it.
  const std::string& label() const noexcept;
  const Image& image() const noexcept;

 private:
  explicit Library(std::shared_ptr<detail::LibraryState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::LibraryState> state_;
};

}  // namespace ptxrt
