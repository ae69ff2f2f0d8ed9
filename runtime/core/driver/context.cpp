#include "ptxrt/core/context.hpp"

#include "driver/driver_api.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace detail {

enum class Ownership { primary, created, borrowed };

struct ContextOwner {
  ContextOwner(CUcontext context_, Device device_, Ownership ownership_)
      : context(context_), device(std::move(device_)), ownership(ownership_) {}
  ContextOwner(const ContextOwner&) = delete;
  ContextOwner& operator=(const ContextOwner&) = delete;
  // Release failures cannot be reported from a destructor; the driver frees the rest at exit.
  ~ContextOwner() {
    const DriverApi& api = driver();
    if (ownership == Ownership::primary)
      api.cuDevicePrimaryCtxRelease(device.handle());
    else if (ownership == Ownership::created)
      api.cuCtxDestroy(context);
  }
  CUcontext context;
  Device device;
  Ownership ownership;
};

}  // namespace detail

Context Context::primary(const Device& device) {
  CUcontext context = nullptr;
  check(detail::driver().cuDevicePrimaryCtxRetain(&context, device.handle()),
        "cuDevicePrimaryCtxRetain",
        "retaining the primary context of device " + std::to_string(device.ordinal()));
  return Context(
      std::make_shared<const detail::ContextOwner>(context, device, detail::Ownership::primary));
}

Context Context::create(const Device& device, unsigned flags) {
  const detail::DriverApi& api = detail::driver();
  // cuCtxCreate pushes the new context on the caller's stack; popping it puts theirs back.
  CUcontext context = nullptr;
  check(api.cuCtxCreate(&context, nullptr, flags, device.handle()), "cuCtxCreate",
        "creating a context on device " + std::to_string(device.ordinal()));
  CUcontext popped = nullptr;
  api.cuCtxPopCurrent(&popped);
  return Context(
      std::make_shared<const detail::ContextOwner>(context, device, detail::Ownership::created));
}

Context Context::borrow(CUcontext context, const Device& device) {
  if (!context)
    throw Error(ErrorKind::invalid_argument, "Context::borrow needs a context, got nullptr");
  return Context(
      std::make_shared<const detail::ContextOwner>(context, device, detail::Ownership::borrowed));
}

CUcontext Context::handle() const noexcept { return owner_->context; }
const Device& Context::device() const noexcept { return owner_->device; }
bool Context::is_primary() const noexcept {
  return owner_->ownership == detail::Ownership::primary;
}

void Context::synchronize() const {
  ContextGuard guard(*this);
  check(detail::driver().cuCtxSynchronize(), "cuCtxSynchronize",
        "synchronizing the context of device " + std::to_string(device().ordinal()));
}

std::pair<std::size_t, std::size_t> Context::memory_info() const {
  ContextGuard guard(*this);
  std::size_t free = 0, total = 0;
  check(detail::driver().cuMemGetInfo(&free, &total), "cuMemGetInfo");
  return {free, total};
}

StreamPriorities Context::stream_priorities() const {
  ContextGuard guard(*this);
  StreamPriorities priorities;
  check(detail::driver().cuCtxGetStreamPriorityRange(&priorities.lowest, &priorities.highest),
        "cuCtxGetStreamPriorityRange",
        "reading the stream priorities of device " + std::to_string(device().ordinal()));
  return priorities;
}

ContextGuard::ContextGuard(CUcontext context) {
  if (current_context() == context) return;
  check(detail::driver().cuCtxPushCurrent(context), "cuCtxPushCurrent",
        "making a context current");
  pushed_ = true;
}

ContextGuard::~ContextGuard() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  detail::driver().cuCtxPopCurrent(&popped);
}

CUcontext current_context() {
  CUcontext context = nullptr;
  check(detail::driver().cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  return context;
}

}  // namespace ptxrt
