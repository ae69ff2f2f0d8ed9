// A tuned kernel at run time: the config the tuning database picks for this device and these
// sizes, compiled through the JIT's caches, loaded, its launch computed, all once; then each
// launch is one call.
//
//   const ptxrt::TunedKernel scale(problem, {{"n", n}}, context, database);
//   std::printf("%s\n", scale.choice().describe().c_str());  // the config and where it came from
//   scale.launch(x, y, n);                                   // the hot path
//
// Thread safety: a TunedKernel is immutable once made; launch it from any number of threads
// (each launch goes on the stream it names).
#pragma once

#include <cuda.h>

#include <string_view>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/module.hpp"
#include "ptxrt/core/stream_ref.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt {

class PTXRT_API TunedKernel {
 public:
  // Reads `database` once: choose() for this problem's key on `context`'s device at `sizes`
  // (exact size → nearest size → same compute capability → the problem's fallback config; the
  // level in choice(), and in the log at info level). Compiles that config for the device, loads
  // it into `context`, and checks the problem's argument list against the kernel's parameter
  // layout and its launch against the device. Throws Error (io) for a corrupt database, what
  // compiling and loading throw, and Error (invalid_argument) for a launch or argument list the
  // kernel cannot take.
  TunedKernel(const KernelProblem& problem, const ProblemSizes& sizes, const Context& context,
              const TuningDatabase& database, Jit& jit = Jit::shared());

  const TunedChoice& choice() const noexcept { return choice_; }
  const Kernel& kernel() const noexcept { return kernel_; }
  // The loaded module, for the kernel's __constant__ and __device__ variables.
  const Module& module() const noexcept { return module_; }
  const LaunchConfig& launch_config() const noexcept { return launch_; }

  // The tuned launch on the context's default stream, or on `stream`. Arguments go as to
  // Kernel::launch: buffers pass their address, and the list is checked against the kernel's
  // parameter layout once per argument-type list.
  template <typename... Args>
  void launch(const Args&... args) const {
    kernel_.launch(launch_, args...);
  }
  template <typename... Args>
  void launch_on(StreamRef stream, const Args&... args) const {
    LaunchConfig on_stream = launch_;
    on_stream.stream = stream;
    kernel_.launch(on_stream, args...);
  }

 private:
  TunedChoice choice_;
  Module module_;
  Kernel kernel_;
  LaunchConfig launch_;
};

}  // namespace ptxrt
