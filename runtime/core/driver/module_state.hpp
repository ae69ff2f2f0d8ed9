// Internal: what a loaded module holds, shared by Module, its Kernels and Symbols.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "driver/kernel_state.hpp"
#include "ptxrt/core/context.hpp"

namespace ptxrt::detail {

struct ModuleState {
  ModuleState(Context context_, CUmodule module_, std::string label_, std::string info_log_,
              float jit_wall_ms_, ParameterLayouts parameter_layouts_)
      : context(std::move(context_)),
        module(module_),
        label(std::move(label_)),
        info_log(std::move(info_log_)),
        jit_wall_ms(jit_wall_ms_),
        parameter_layouts(std::move(parameter_layouts_)) {}
  ModuleState(const ModuleState&) = delete;
  ModuleState& operator=(const ModuleState&) = delete;
  ~ModuleState();

  Context context;
  CUmodule module;
  std::string label;
  std::string info_log;
  float jit_wall_ms;
  std::vector<std::pair<std::string, std::string>> lowered_names;  // name expression → symbol
  ParameterLayouts parameter_layouts;

  std::mutex kernels_mutex;
  std::map<std::string, std::shared_ptr<KernelState>, std::less<>> kernels;
};

}  // namespace ptxrt::detail
