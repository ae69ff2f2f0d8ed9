// Internal: what a loaded module and its kernels hold, shared by Module, Kernel and Symbol.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ptxrt/context.hpp"
#include "ptxrt/kernel.hpp"

namespace ptxrt::detail {

struct KernelState {
  KernelState(std::string name_, std::string label_, CUfunction function_, Context context_)
      : name(std::move(name_)),
        label(std::move(label_)),
        function(function_),
        context(std::move(context_)),
        description("kernel '" + name + "'" + (label.empty() ? "" : " of " + label)) {}

  std::string name;
  std::string label;        // the module's label
  CUfunction function;
  Context context;
  std::string description;  // "kernel 'x' of <label>", built once for messages
  LaunchLimits limits;
  std::vector<ParameterInfo> parameters;
  bool has_parameter_layout = false;

  // Argument-type lists already checked and found right: lock-free reads on the launch path.
  static constexpr int verified_slots = 8;
  std::array<std::atomic<const ArgumentSignature*>, verified_slots> verified{};
  std::mutex verify_mutex;

  // The dynamic shared memory limit the kernel is opted in to; raised under opt_in_mutex.
  std::atomic<std::size_t> max_dynamic_shared_bytes{0};
  std::mutex opt_in_mutex;
};

struct ModuleState {
  ModuleState(Context context_, CUmodule module_, std::string label_, std::string info_log_,
              float jit_wall_ms_)
      : context(std::move(context_)),
        module(module_),
        label(std::move(label_)),
        info_log(std::move(info_log_)),
        jit_wall_ms(jit_wall_ms_) {}
  ModuleState(const ModuleState&) = delete;
  ModuleState& operator=(const ModuleState&) = delete;
  ~ModuleState();

  Context context;
  CUmodule module;
  std::string label;
  std::string info_log;
  float jit_wall_ms;
  std::vector<std::pair<std::string, std::string>> lowered_names;  // name expression → symbol

  std::mutex kernels_mutex;
  std::map<std::string, std::shared_ptr<KernelState>, std::less<>> kernels;
};

}  // namespace ptxrt::detail
