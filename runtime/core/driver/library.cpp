#include "ptxrt/core/library.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "driver/driver_api.hpp"
#include "driver/kernel_state.hpp"
#include "driver/load_log.hpp"
#include "ptxrt/core/architecture.hpp"
#include "ptxrt/core/device_code.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace detail {

struct LibraryState {
  LibraryState(Image image_, const ModuleLoadOptions& options_)
      : image(std::move(image_)), options(options_), label(describe_image(image)) {}
  LibraryState(const LibraryState&) = delete;
  LibraryState& operator=(const LibraryState&) = delete;
  // An unload failure cannot be reported from a destructor; the driver frees the rest at exit.
  ~LibraryState() {
    if (library) driver().cuLibraryUnload(library);
  }

  // Refuses an image this context's device cannot run, before the driver is asked.
  void check_for(const Context& context) const {
    const DeviceProperties& device = context.device().properties();
    check_image_for_driver(image, device.driver_version, device.cc_major, device.cc_minor);
  }

  // Kept whole for the library's lifetime: the metadata checks each device, the bytes serve the
  // per-context modules, and nothing the driver was handed is freed before the library.
  Image image;
  ModuleLoadOptions options;
  std::string label;
  CUlibrary library = nullptr;         // null: the driver lacks cuLibraryLoadData
  ParameterLayouts parameter_layouts;  // read at load, for the kernels of every context
  // A library may be JIT-compiled later, for each device as it is first used, and the driver
  // writes its logs then: the buffers the options point to live as long as the library.
  std::unique_ptr<LoadLog> log;

  // Keyed by the context's handle: each KernelState (or Module) holds its context, so a handle
  // cannot be reused while its entry exists; a borrowed context leaves through forget().
  using Kernels = std::map<std::string, std::shared_ptr<KernelState>, std::less<>>;
  std::mutex mutex;
  std::map<CUcontext, Kernels> kernels;  // guarded by mutex
  std::map<CUcontext, Module> modules;   // guarded by mutex; used without cuLibraryLoadData
};

}  // namespace detail

namespace {

CUfunction function_in(const detail::LibraryState& state, const std::string& name,
                       const Context& context) {
  const detail::DriverApi& api = detail::driver();
  CUkernel kernel = nullptr;
  const CUresult result = api.cuLibraryGetKernel(&kernel, state.library, name.c_str());
  if (result == CUDA_ERROR_NOT_FOUND)
    throw Error(ErrorKind::not_found, "no kernel named '" + name + "' in library " + state.label,
                "cuLibraryGetKernel", result, "CUDA_ERROR_NOT_FOUND", state.label);
  check(result, "cuLibraryGetKernel", "getting kernel '" + name + "' of " + state.label);
  ContextGuard guard(context);
  CUfunction function = nullptr;
  check(api.cuKernelGetFunction(&function, kernel), "cuKernelGetFunction",
        "getting kernel '" + name + "' of " + state.label + " in a context of device " +
            std::to_string(context.device().ordinal()));
  return function;
}

Module module_in(detail::LibraryState& state, const Context& context) {
  std::lock_guard lock(state.mutex);
  if (auto found = state.modules.find(context.handle()); found != state.modules.end())
    return found->second;
  state.check_for(context);
  Module module = Module::load(context, state.image.data, state.options, state.label);
  state.modules.emplace(context.handle(), module);
  return module;
}

}  // namespace

bool Library::context_independent_loading() {
  return detail::driver().cuLibraryLoadData != nullptr;
}

Library Library::load(Image image, const ModuleLoadOptions& options) {
  check_device_code(image.data, describe_image(image), DeviceCodeReader::loader);
  auto state = std::make_shared<detail::LibraryState>(std::move(image), options);
  const detail::DriverApi& api = detail::driver();
  if (!api.cuLibraryLoadData) return Library(std::move(state));
  state->log = std::make_unique<detail::LoadLog>(options);
  detail::LoadLog& log = *state->log;
  // c_str(): PTX must reach the driver NUL-terminated; a CUBIN's length is in its header.
  const CUresult result =
      api.cuLibraryLoadData(&state->library, state->image.data.c_str(), log.keys(), log.values(),
                            log.count(), nullptr, nullptr, 0);
  if (result != CUDA_SUCCESS)
    log.fail(result, "cuLibraryLoadData", "loading library " + state->label);
  state->parameter_layouts = detail::read_layouts_of(state->image.data, "library " + state->label);
  return Library(std::move(state));
}

Kernel Library::kernel(std::string_view name, const Context& context) const {
  if (!state_->library) return module_in(*state_, context).kernel(name);
  std::lock_guard lock(state_->mutex);
  auto in_context = state_->kernels.find(context.handle());
  if (in_context == state_->kernels.end()) {
    state_->check_for(context);
    in_context = state_->kernels.emplace(context.handle(), detail::LibraryState::Kernels{}).first;
  }
  detail::LibraryState::Kernels& kernels = in_context->second;
  if (auto found = kernels.find(name); found != kernels.end()) return Kernel(found->second, state_);
  const std::string entry(name);
  auto kernel_state =
      detail::make_kernel_state(entry, state_->label, function_in(*state_, entry, context), context,
                                state_->parameter_layouts);
  kernels.emplace(entry, kernel_state);
  return Kernel(std::move(kernel_state), state_);
}

void Library::forget(const Context& context) const {
  // Extracted under the lock, destroyed after it: unloading a module talks to the driver.
  decltype(state_->kernels)::node_type kernels;
  decltype(state_->modules)::node_type module;
  std::lock_guard lock(state_->mutex);
  kernels = state_->kernels.extract(context.handle());
  module = state_->modules.extract(context.handle());
}

CUlibrary Library::handle() const noexcept { return state_->library; }
const std::string& Library::label() const noexcept { return state_->label; }
const Image& Library::image() const noexcept { return state_->image; }

}  // namespace ptxrt
