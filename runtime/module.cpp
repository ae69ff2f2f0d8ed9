#include "ptxrt/module.hpp"

#include <cstring>

#include "driver_api.hpp"
#include "module_state.hpp"
#include "ptxrt/driver.hpp"
#include "ptxrt/error.hpp"

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

namespace {

std::string trimmed_log(const std::vector<char>& buffer) {
  std::string log(buffer.data(), strnlen(buffer.data(), buffer.size()));
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

int function_attribute(CUfunction function, CUfunction_attribute which, const char* what,
                       const std::string& who) {
  int value = 0;
  check(detail::driver().cuFuncGetAttribute(&value, which, function), "cuFuncGetAttribute",
        std::string("reading ") + what + " of " + who);
  return value;
}

std::vector<ParameterInfo> parameter_layout(CUfunction function, bool& available) {
  std::vector<ParameterInfo> layout;
  const detail::DriverApi& api = detail::driver();
  available = api.cuFuncGetParamInfo != nullptr;
  if (!available) return layout;
  // The driver has no parameter count: ask index by index until it says the index is past the end.
  for (std::size_t index = 0;; ++index) {
    ParameterInfo info;
    CUresult result = api.cuFuncGetParamInfo(function, index, &info.offset, &info.bytes);
    if (result == CUDA_ERROR_INVALID_VALUE) break;
    check(result, "cuFuncGetParamInfo");
    layout.push_back(info);
  }
  return layout;
}

std::shared_ptr<detail::KernelState> make_kernel_state(const detail::ModuleState& module,
                                                        std::string name, CUfunction function) {
  auto state =
      std::make_shared<detail::KernelState>(std::move(name), module.label, function, module.context);
  const std::string who = "kernel '" + state->name + "'";
  const DeviceProperties& device = module.context.device().properties();
  state->limits.max_block_dim = device.max_block_dim;
  state->limits.max_grid_dim = device.max_grid_dim;
  state->limits.shared_memory_per_block_optin = device.shared_memory_per_block_optin;
  state->limits.max_threads_per_block = function_attribute(
      function, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block", who);
  state->limits.static_shared_bytes = function_attribute(
      function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory", who);
  state->max_dynamic_shared_bytes = static_cast<std::size_t>(function_attribute(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "dynamic shared memory", who));
  state->parameters = parameter_layout(function, state->has_parameter_layout);
  return state;
}

}  // namespace

Module Module::load(const Context& context, std::string_view image,
                    const ModuleLoadOptions& options, std::string label) {
  if (image.empty())
    throw Error(ErrorKind::invalid_argument, "cannot load an empty image" +
                                                 (label.empty() ? "" : " (" + label + ")"));
  // PTX must reach the driver NUL-terminated; a CUBIN may hold NULs, and a copy serves both.
  const std::string owned(image);
  std::vector<char> info_log(options.log_bytes + 1, '\0');
  std::vector<char> error_log(options.log_bytes + 1, '\0');

  std::vector<CUjit_option> keys = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                    CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                    CU_JIT_LOG_VERBOSE, CU_JIT_WALL_TIME};
  std::vector<void*> values = {info_log.data(), reinterpret_cast<void*>(options.log_bytes),
                               error_log.data(), reinterpret_cast<void*>(options.log_bytes),
                               reinterpret_cast<void*>(std::uintptr_t{1}), nullptr};
  constexpr std::size_t wall_time_slot = 5;
  if (options.optimization_level >= 0) {
    keys.push_back(CU_JIT_OPTIMIZATION_LEVEL);
    values.push_back(reinterpret_cast<void*>(static_cast<std::uintptr_t>(options.optimization_level)));
  }
  if (options.max_registers > 0) {
    keys.push_back(CU_JIT_MAX_REGISTERS);
    values.push_back(reinterpret_cast<void*>(static_cast<std::uintptr_t>(options.max_registers)));
  }

  ContextGuard guard(context);
  CUmodule module = nullptr;
  CUresult result = detail::driver().cuModuleLoadDataEx(
      &module, owned.c_str(), static_cast<unsigned>(keys.size()), keys.data(), values.data());
  std::string doing = "loading module" + (label.empty() ? std::string() : " " + label) +
                      " on device " + std::to_string(context.device().ordinal());
  if (result != CUDA_SUCCESS) {
    std::string log = trimmed_log(error_log);
    check(result, "cuModuleLoadDataEx", log.empty() ? doing : doing + "; JIT log:\n" + log);
  }
  float wall_ms = 0;  // the driver writes a float into the option's value slot
  std::memcpy(&wall_ms, &values[wall_time_slot], sizeof wall_ms);
  return Module(std::make_shared<detail::ModuleState>(context, module, std::move(label),
                                                      trimmed_log(info_log), wall_ms));
}

Module Module::load(const Context& context, const Image& image,
                    const ModuleLoadOptions& options) {
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
      for (const std::string& entry_point : entry_points())
        known += (known.empty() ? "" : ", ") + entry_point;
    } catch (const Error& error) {
      known = error.what();
    }
    throw Error(ErrorKind::not_found,
                "no kernel named '" + entry + "' in module " + state_->label +
                    "; its entry points are: " + (known.empty() ? "(none)" : known),
                "cuModuleGetFunction", result, "CUDA_ERROR_NOT_FOUND", state_->label);
  }
  check(result, "cuModuleGetFunction", "getting kernel '" + entry + "' of " + state_->label);
  auto kernel_state = make_kernel_state(*state_, entry, function);
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
  const std::string symbol(name);
  CUdeviceptr address = 0;
  std::size_t bytes = 0;
  CUresult result =
      detail::driver().cuModuleGetGlobal(&address, &bytes, state_->module, symbol.c_str());
  if (result == CUDA_ERROR_NOT_FOUND)
    throw Error(ErrorKind::not_found,
                "no __constant__ or __device__ symbol named '" + symbol + "' in module " +
                    state_->label + " (an extern \"C\" or unmangled name is needed)",
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
