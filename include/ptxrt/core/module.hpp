// A loaded module (PTX or CUBIN) in one context, its kernels and its global symbols.
//
// Thread safety: a Module and the Kernels and Symbols taken from it may be shared by any number
// of threads; launching one kernel from many threads at once is safe (each launch names its own
// stream). A Module stays loaded while any copy of it, or any Kernel or Symbol from it, exists.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/symbol.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API ModuleLoadOptions {
  int optimization_level = -1;        // PTX JIT level 0..4; -1 keeps the driver's default (4)
  int max_registers = 0;              // PTX JIT register cap per thread; 0 = none
  std::size_t log_bytes = 64 * 1024;  // room for the JIT's info and error logs
};

namespace detail {
struct ModuleState;
}

class PTXRT_API Module {
 public:
  // Loads a PTX text or a CUBIN (cuModuleLoadDataEx) into `context`, keeping the JIT logs. `label`
  // names the module in errors and logs ("matmul_tiled.cu [TILE_WIDTH=32] sm_90"). A failure is
  // an Error whose message holds the JIT's error log.
  static Module load(const Context& context, std::string_view image,
                     const ModuleLoadOptions& options = {}, std::string label = {});
  // Loads a compiled Image: labelled by its name, defines and arch, and its template
  // instantiations reachable by the name expressions they were compiled for.
  static Module load(const Context& context, const Image& image,
                     const ModuleLoadOptions& options = {});

  // The entry point `name` (or a name expression the image was compiled for, such as
  // "scale<float, 4>"); an unknown name is an Error(not_found) listing the module's entry
  // points. Kernels are made once per module and shared: asking again is a map lookup.
  Kernel kernel(std::string_view name) const;
  // The module's entry points (needs a driver with cuModuleEnumerateFunctions, CUDA >= 12.4).
  std::vector<std::string> entry_points() const;

  // A __constant__ or __device__ variable by name, typed; sizes are checked on every copy. A
  // variable in a namespace is found by its C++ name when the image was compiled with the name
  // expression "&ns::name".
  template <typename T>
  Symbol<T> symbol(std::string_view name) const {
    return Symbol<T>(global(name));
  }
  GlobalSymbol global(std::string_view name) const;

  const Context& context() const noexcept;
  CUmodule handle() const noexcept;
  const std::string& label() const noexcept;
  const std::string& info_log() const noexcept;  // the JIT's info log (empty for most CUBINs)
  float jit_wall_ms() const noexcept;            // time the driver spent compiling/linking

 private:
  explicit Module(std::shared_ptr<detail::ModuleState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ModuleState> state_;
};

}  // namespace ptxrt
