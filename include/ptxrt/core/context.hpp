// Contexts, explicitly: a device's primary context (the default, shared with the CUDA runtime API
// and every other library in the process) or a context ptxrt creates and owns.
//
// Thread safety: a Context may be shared by any number of threads; ptxrt never leaves it current
// on a thread. Every ptxrt call that needs a context makes its own current for the call with a
// ContextGuard and then restores what the calling thread had current before — also on exceptions.
// So an application that manages its own contexts (cuCtxSetCurrent, the runtime API) sees its
// current context unchanged after any ptxrt call. docs/threading.md has the whole contract.
#pragma once

#include <cuda.h>

#include <memory>

#include "ptxrt/core/device.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

namespace detail {
struct ContextOwner;
}

// The priorities streams and launches of a context may take (cuCtxGetStreamPriorityRange): from
// `lowest` (the default, numerically greatest) to `highest` (numerically least, e.g. -5).
struct PTXRT_API StreamPriorities {
  int lowest = 0;
  int highest = 0;
};

// A shared handle: copies refer to one context, released when the last copy (and every buffer,
// module, stream and event made in it, which hold a copy) is gone.
class PTXRT_API Context {
 public:
  // Retains the device's primary context (cuDevicePrimaryCtxRetain).
  static Context primary(const Device& device);
  static Context primary(int ordinal = 0) { return primary(Device::get(ordinal)); }
  // Creates a context of ptxrt's own (cuCtxCreate), destroyed with the last handle.
  static Context create(const Device& device, unsigned flags = 0);
  // Wraps a context the application created and keeps alive itself; ptxrt never destroys it.
  // Everything made in it (buffers, modules, a Jit's cached modules: Jit::forget) must be gone
  // before the application destroys the context.
  static Context borrow(CUcontext context, const Device& device);

  CUcontext handle() const noexcept;
  const Device& device() const noexcept;
  bool is_primary() const noexcept;

  // Waits for all work in the context; a fault in an earlier kernel surfaces here (sticky error).
  void synchronize() const;
  // Free and total device memory, in bytes (cuMemGetInfo).
  std::pair<std::size_t, std::size_t> memory_info() const;
  StreamPriorities stream_priorities() const;

  friend bool operator==(const Context& a, const Context& b) noexcept {
    return a.handle() == b.handle();
  }

 private:
  explicit Context(std::shared_ptr<const detail::ContextOwner> owner) : owner_(std::move(owner)) {}
  std::shared_ptr<const detail::ContextOwner> owner_;
};

// Makes a context current on this thread for the guard's lifetime and restores the thread's
// previous current context (or none) when it ends, on every path. Cheap when the context is
// already current: then it changes nothing. Not movable: it belongs to one scope on one thread.
class PTXRT_API ContextGuard {
 public:
  explicit ContextGuard(CUcontext context);
  explicit ContextGuard(const Context& context) : ContextGuard(context.handle()) {}
  ~ContextGuard();
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;

 private:
  bool pushed_ = false;
};

// The context current on the calling thread (nullptr when none): for tests and interop.
PTXRT_API CUcontext current_context();

}  // namespace ptxrt
