#include "ptxrt/core/module.hpp"

#include "driver/driver_api.hpp"
#include "driver/load_log.hpp"
#include "driver/module_state.hpp"
#include "ptxrt/core/demangle.hpp"
#include "ptxrt/core/device_code.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace detail {

ModuleState::~ModuleState() {
  try {
    ContextGuard guard(context);
    driver().cuModuleUnload(module);
  } catch (const Error&) {
    // Destructors cannot throw; a module whose context cannot be made current goes with it.
  }
}

}  // namespace detail

Module Module::load(const Context& context, std::string_view image,
                    const ModuleLoadOptions& options, std::string label) {
  // The driver's loader assumes well-formed input: damaged bytes are refused here, naming them.
  check_device_code(image, label, DeviceCodeReader::loader);
  // PTX must reach the driver NUL-terminated; a CUBIN may hold NULs, and a copy serves both.
  const std::string owned(image);
  detail::LoadLog log(options);
  ContextGuard guard(context);
  CUmodule module = nullptr;
  const CUresult result = detail::driver().cuModuleLoadDataEx(&module, owned.c_str(), log.count(),
                                                              log.keys(), log.values());
  if (result != CUDA_SUCCESS)
    log.fail(result, "cuModuleLoadDataEx",
             "loading module" + (label.empty() ? std::string() : " " + label) + " on device " +
                 std::to_string(context.device().ordinal()));
  // From the bytes, once: the driver tells a parameter by index but not how many there are, and
  // asking past the end fails (see parameter_layout.hpp).
  detail::ParameterLayouts layouts =
      detail::read_layouts_of(image, "module " + (label.empty() ? "(unlabelled)" : label));
  return Module(std::make_shared<detail::ModuleState>(
      context, module, std::move(label), log.info_log(), log.wall_ms(), std::move(layouts)));
}

Module Module::load(const Context& context, const Image& image, const ModuleLoadOptions& options) {
  Module module = load(context, image.data, options, describe_image(image));
  module.state_->lowered_names = image.lowered_names;
  return module;
}

Kernel Module::kernel(std::string_view requested) const {
  std::string_view name = requested;
  for (const auto& [expression, lowered] : state_->lowered_names)
    if (expression == requested) name = lowered;
  std::lock_guard lock(state_->kernels_mutex);
  if (auto found = state_->kernels.find(name); found != state_->kernels.end())
    return Kernel(found->second, state_);
  ContextGuard guard(state_->context);
  CUfunction function = nullptr;
  const std::string entry(name);
  CUresult result = detail::driver().cuModuleGetFunction(&function, state_->module, entry.c_str());
  if (result == CUDA_ERROR_NOT_FOUND) {
    std::string known;
    try {
      for (const std::string& symbol : entry_points()) {
        // A C++ kernel by its name, with the symbol this call takes beside it.
        const std::string written = demangle(symbol);
        known += (known.empty() ? "" : ", ") +
                 (written == symbol ? written : written + " [" + symbol + "]");
      }
    } catch (const Error& error) {
      known = error.what();
    }
    throw Error(ErrorKind::not_found,
                "no kernel named '" + entry + "' in module " + state_->label +
                    "; its entry points are: " + (known.empty() ? "(none)" : known),
                "cuModuleGetFunction", result, "CUDA_ERROR_NOT_FOUND", state_->label);
  }
  check(result, "cuModuleGetFunction", "getting kernel '" + entry + "' of " + state_->label);
  auto kernel_state = detail::make_kernel_state(entry, state_->label, function, state_->context,
                                                state_->parameter_layouts);
  state_->kernels.emplace(entry, kernel_state);
  return Kernel(std::move(kernel_state), state_);
}

std::vector<std::string> Module::entry_points() const {
  const detail::DriverApi& api = detail::driver();
  if (!api.cuModuleGetFunctionCount || !api.cuModuleEnumerateFunctions || !api.cuFuncGetName)
    throw Error(ErrorKind::driver, "this driver cannot list a module's entry points (CUDA " +
                                       format_cuda_version(api.version) + "; 12.4 needed)");
  ContextGuard guard(state_->context);
  unsigned count = 0;
  check(api.cuModuleGetFunctionCount(&count, state_->module), "cuModuleGetFunctionCount");
  std::vector<CUfunction> functions(count);
  check(api.cuModuleEnumerateFunctions(functions.data(), count, state_->module),
        "cuModuleEnumerateFunctions");
  std::vector<std::string> names;
  for (CUfunction function : functions) {
    const char* name = nullptr;
    check(api.cuFuncGetName(&name, function), "cuFuncGetName");
    names.emplace_back(name);
  }
  return names;
}

GlobalSymbol Module::global(std::string_view name) const {
  ContextGuard guard(state_->context);
  // A variable with C++ linkage is found by the name expression "&name" it was compiled with.
  std::string_view lowered_name = name;
  for (const auto& [expression, lowered] : state_->lowered_names)
    if (expression == name || (expression.starts_with('&') && expression.substr(1) == name))
      lowered_name = lowered;
  const std::string symbol(lowered_name);
  CUdeviceptr address = 0;
  std::size_t bytes = 0;
  CUresult result =
      detail::driver().cuModuleGetGlobal(&address, &bytes, state_->module, symbol.c_str());
  if (result == CUDA_ERROR_NOT_FOUND)
    throw Error(ErrorKind::not_found,
                "no __constant__ or __device__ symbol named '" + symbol + "' in module " +
                    state_->label +
                    " (an unmangled name is needed, or the name expression \"&NAME\" in "
                    "CompileOptions::name_expressions)",
                "cuModuleGetGlobal", result, "CUDA_ERROR_NOT_FOUND", state_->label);
  check(result, "cuModuleGetGlobal", "looking up symbol '" + symbol + "' in " + state_->label);
  return GlobalSymbol(state_, address, bytes, symbol);
}

const Context& Module::context() const noexcept { return state_->context; }
CUmodule Module::handle() const noexcept { return state_->module; }
const std::string& Module::label() const noexcept { return state_->label; }
const std::string& Module::info_log() const noexcept { return state_->info_log; }
float Module::jit_wall_ms() const noexcept { return state_->jit_wall_ms; }

}  // namespace ptxrt
