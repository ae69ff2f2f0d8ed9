// Internal: what a kernel handle holds, whichever way its function was obtained (a Module's
// cuModuleGetFunction, or a Library's cuKernelGetFunction in one context).
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/kernel.hpp"

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

  // The kernel's __cluster_dims__, read at creation where the device has clusters: a launch of
  // such a kernel takes the checked attribute path even when it sets no attribute itself.
  std::optional<Dim3> compiled_cluster;
  // What attribute launches are checked against, read by the first one.
  std::once_flag attribute_limits_read;
  LaunchAttributeLimits attribute_limits;
  std::atomic<bool> non_portable_cluster_size_allowed{false};
};

// The parameter layouts of an image's entry points by name, read once where the image is loaded
// (Module::load, Library::load) and kept beside it, so that making a kernel is a lookup.
// nullopt where the image does not record them (see read_parameter_layouts).
using ParameterLayouts =
    std::optional<std::map<std::string, std::vector<ParameterInfo>, std::less<>>>;

// The layouts of `image`. An image the driver loaded but this reader cannot read costs its
// kernels the argument check, not the load: that is logged as a warning naming `label`.
ParameterLayouts read_layouts_of(std::string_view image, const std::string& label);

// Reads what every launch checks against (the device's limits, the function's attributes and
// parameter layout) once, so that launches only compare numbers. `label` names the module or
// library in messages; `function` must belong to `context`; `layouts` are those of its image.
std::shared_ptr<KernelState> make_kernel_state(std::string name, std::string label,
                                               CUfunction function, const Context& context,
                                               const ParameterLayouts& layouts);

}  // namespace ptxrt::detail
