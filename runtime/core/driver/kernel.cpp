#include "ptxrt/core/kernel.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include "driver/driver_api.hpp"
#include "driver/kernel_state.hpp"
#include "driver/launch_attributes.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"

namespace ptxrt {
namespace {

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? demangled.get() : type.name();
}

using detail::invalid_launch;

int function_attribute(CUfunction function, CUfunction_attribute which, const char* what,
                       const std::string& who) {
  int value = 0;
  check(detail::driver().cuFuncGetAttribute(&value, which, function), "cuFuncGetAttribute",
        std::string("reading ") + what + " of " + who);
  return value;
}

// The driver reports byte counts as int; a negative one would be its defect, read as none.
std::size_t function_bytes(CUfunction function, CUfunction_attribute which, const char* what,
                           const std::string& who) {
  return static_cast<std::size_t>(std::max(function_attribute(function, which, what, who), 0));
}

// The kernel's __cluster_dims__. Asked only where the device has clusters, so that the query
// cannot fail on an older device.
std::optional<Dim3> compiled_cluster_of(CUfunction function, const DeviceProperties& device,
                                        const std::string& who) {
  if (!device.cluster_launch) return std::nullopt;
  auto side = [&](CUfunction_attribute which) {
    return static_cast<unsigned>(function_attribute(function, which, "the compiled cluster", who));
  };
  const unsigned width = side(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
  if (width == 0) return std::nullopt;
  return Dim3(width, side(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT),
              side(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH));
}

}  // namespace

namespace detail {

ParameterLayouts read_layouts_of(std::string_view image, const std::string& label) {
  std::optional<std::vector<EntryParameters>> entries;
  try {
    entries = read_parameter_layouts(image);
  } catch (const Error& error) {
    log::write(log::Level::warning, "the arguments of the kernels of " + label +
                                        " go unchecked: their parameters could not be read (" +
                                        error.what() + ")");
    return std::nullopt;
  }
  if (!entries) {
    log::write(log::Level::info, "the arguments of the kernels of " + label +
                                     " go unchecked: the image records no parameter layout");
    return std::nullopt;
  }
  ParameterLayouts layouts(std::in_place);
  for (EntryParameters& entry : *entries)
    layouts->emplace(std::move(entry.name), std::move(entry.parameters));
  return layouts;
}

std::shared_ptr<KernelState> make_kernel_state(std::string name, std::string label,
                                               CUfunction function, const Context& context,
                                               const ParameterLayouts& layouts) {
  auto state = std::make_shared<KernelState>(std::move(name), std::move(label), function, context);
  const std::string& who = state->description;
  const DeviceProperties& device = context.device().properties();
  state->limits.max_block_dim = device.max_block_dim;
  state->limits.max_grid_dim = device.max_grid_dim;
  state->limits.shared_memory_per_block_optin = device.shared_memory_per_block_optin;
  state->limits.max_threads_per_block = function_attribute(
      function, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block", who);
  state->limits.static_shared_bytes =
      function_bytes(function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory", who);
  state->max_dynamic_shared_bytes = function_bytes(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "dynamic shared memory", who);
  if (layouts) {
    if (auto found = layouts->find(state->name); found != layouts->end()) {
      state->parameters = found->second;
      state->has_parameter_layout = true;
    } else {
      log::write(log::Level::warning,
                 "the arguments of " + who + " go unchecked: its image lists no such entry point");
    }
  }
  state->compiled_cluster = compiled_cluster_of(function, device, who);
  return state;
}

}  // namespace detail

std::string to_string(const Dim3& dims) {
  return std::to_string(dims.x) + "x" + std::to_string(dims.y) + "x" + std::to_string(dims.z);
}

void check_arguments_against_layout(const std::vector<ParameterInfo>& layout,
                                    const ArgumentSignature& signature, std::string_view who) {
  if (signature.sizes.size() != layout.size())
    invalid_launch(who, "takes " + std::to_string(layout.size()) + " argument(s), but " +
                            std::to_string(signature.sizes.size()) + " were given");
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (signature.sizes[i] != layout[i].bytes)
      invalid_launch(
          who,
          "argument " + std::to_string(i) + " is " + std::to_string(layout[i].bytes) +
              " bytes in the kernel, but a " + std::to_string(signature.sizes[i]) + "-byte " +
              (signature.types.empty() ? std::string("value") : type_name(*signature.types[i])) +
              " was given");
  }
}

void check_launch_geometry(const LaunchConfig& config, const LaunchLimits& limits,
                           std::string_view who) {
  const Dim3& block = config.block;
  const Dim3& grid = config.grid;
  const std::array<unsigned, 3> block_dims{block.x, block.y, block.z};
  const std::array<unsigned, 3> grid_dims{grid.x, grid.y, grid.z};
  static constexpr const char* axes[] = {"x", "y", "z"};
  for (int axis = 0; axis < 3; ++axis) {
    if (block_dims[axis] == 0 || grid_dims[axis] == 0)
      invalid_launch(who, "grid " + to_string(grid) + " with block " + to_string(block) +
                              " has an empty dimension (every dimension must be at least 1)");
    if (block_dims[axis] > static_cast<unsigned>(limits.max_block_dim[axis]))
      invalid_launch(who, "block " + to_string(block) + " has " + axes[axis] + " = " +
                              std::to_string(block_dims[axis]) + ", over the device's max " +
                              std::to_string(limits.max_block_dim[axis]));
    if (grid_dims[axis] > static_cast<unsigned>(limits.max_grid_dim[axis]))
      invalid_launch(who, "grid " + to_string(grid) + " has " + axes[axis] + " = " +
                              std::to_string(grid_dims[axis]) + ", over the device's max " +
                              std::to_string(limits.max_grid_dim[axis]));
  }
  if (block.count() > static_cast<unsigned long long>(limits.max_threads_per_block))
    invalid_launch(who, "block " + to_string(block) + " = " + std::to_string(block.count()) +
                            " threads exceeds the kernel's max " +
                            std::to_string(limits.max_threads_per_block) + " threads per block");
  const std::size_t available =
      limits.shared_memory_per_block_optin > limits.static_shared_bytes
          ? limits.shared_memory_per_block_optin - limits.static_shared_bytes
          : 0;
  if (config.dynamic_shared_bytes > available)
    invalid_launch(who, std::to_string(config.dynamic_shared_bytes) +
                            " bytes of dynamic shared memory exceed the " +
                            std::to_string(available) + " bytes available (opt-in limit " +
                            std::to_string(limits.shared_memory_per_block_optin) + " minus " +
                            std::to_string(limits.static_shared_bytes) + " static)");
}

const std::string& Kernel::name() const noexcept { return state_->name; }
CUfunction Kernel::handle() const noexcept { return state_->function; }
const Context& Kernel::context() const noexcept { return state_->context; }
const std::vector<ParameterInfo>& Kernel::parameters() const noexcept { return state_->parameters; }
bool Kernel::has_parameter_layout() const noexcept { return state_->has_parameter_layout; }

const std::string& Kernel::describe() const noexcept { return state_->description; }

KernelAttributes Kernel::attributes() const {
  const auto read = [this](CUfunction_attribute which, const char* what) {
    return function_attribute(state_->function, which, what, describe());
  };
  const auto read_bytes = [this](CUfunction_attribute which, const char* what) {
    return function_bytes(state_->function, which, what, describe());
  };
  return {
      .registers = read(CU_FUNC_ATTRIBUTE_NUM_REGS, "registers"),
      .max_threads_per_block =
          read(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block"),
      .static_shared_bytes =
          read_bytes(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory"),
      .constant_bytes = read_bytes(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "constant memory"),
      .local_bytes = read_bytes(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local memory"),
      .ptx_version = read(CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX version"),
      .binary_version = read(CU_FUNC_ATTRIBUTE_BINARY_VERSION, "binary version"),
      .max_dynamic_shared_bytes =
          read_bytes(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "dynamic shared memory"),
  };
}

void Kernel::set_max_dynamic_shared_bytes(std::size_t bytes) const {
  std::lock_guard lock(state_->opt_in_mutex);
  if (bytes <= state_->max_dynamic_shared_bytes.load()) return;
  ContextGuard guard(state_->context);
  check(detail::driver().cuFuncSetAttribute(state_->function,
                                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes)),
        "cuFuncSetAttribute",
        "opting " + describe() + " in to " + std::to_string(bytes) +
            " bytes of dynamic shared memory");
  state_->max_dynamic_shared_bytes.store(bytes);
}

int Kernel::max_active_blocks_per_sm(int block_threads, std::size_t dynamic_shared_bytes) const {
  ContextGuard guard(state_->context);
  int blocks = 0;
  check(detail::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, state_->function, block_threads, dynamic_shared_bytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor", "computing the occupancy of " + describe());
  return blocks;
}

void Kernel::check_arguments(const ArgumentSignature& signature) const {
  detail::KernelState& state = *state_;
  for (const auto& slot : state.verified)
    if (slot.load(std::memory_order_acquire) == &signature) return;
  std::lock_guard lock(state.verify_mutex);
  if (state.has_parameter_layout)
    check_arguments_against_layout(state.parameters, signature, describe());
  for (auto& slot : state.verified) {
    const ArgumentSignature* empty = nullptr;
    if (slot.load(std::memory_order_relaxed) == &signature ||
        slot.compare_exchange_strong(empty, &signature, std::memory_order_release))
      return;
  }
  // Every slot holds another type list: this one is checked again next time, which is correct.
}

void Kernel::check_plain_launch(const LaunchConfig& config,
                                const ArgumentSignature& signature) const {
  check_launch_geometry(config, state_->limits, describe());
  check_arguments(signature);
  opt_in_dynamic_shared_bytes(config);
}

void Kernel::opt_in_dynamic_shared_bytes(const LaunchConfig& config) const {
  if (config.dynamic_shared_bytes >
      state_->max_dynamic_shared_bytes.load(std::memory_order_relaxed))
    set_max_dynamic_shared_bytes(config.dynamic_shared_bytes);
}

void Kernel::launch_raw(const LaunchConfig& config, const ArgumentSignature& signature,
                        void** parameters) const {
  check_plain_launch(config, signature);
  launch_checked(config, parameters);
}

void Kernel::launch_untyped(const LaunchConfig& config, std::span<void* const> parameters,
                            std::span<const std::size_t> sizes) const {
  check_launch_geometry(config, state_->limits, describe());
  // No verdict is remembered: a signature of this call's own lives no longer than the call.
  if (state_->has_parameter_layout)
    check_arguments_against_layout(state_->parameters, {sizes, {}}, describe());
  if (parameters.size() != sizes.size())
    invalid_launch(describe(), std::to_string(parameters.size()) + " argument pointers for " +
                                   std::to_string(sizes.size()) + " argument sizes");
  opt_in_dynamic_shared_bytes(config);
  launch_checked(config, const_cast<void**>(parameters.data()));
}

void Kernel::launch_checked(const LaunchConfig& config, void** parameters) const {
  detail::KernelState& state = *state_;
  if (config.has_attributes() || state.compiled_cluster) [[unlikely]] {
    launch_with_attributes(config, parameters);
    return;
  }
  ContextGuard guard(state.context);
  const CUresult result = detail::driver().cuLaunchKernel(
      state.function, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y,
      config.block.z, static_cast<unsigned>(config.dynamic_shared_bytes), config.stream.handle(),
      parameters, nullptr);
  if (result != CUDA_SUCCESS) [[unlikely]]
    check(result, "cuLaunchKernel",
          "launching " + describe() + " with grid " + to_string(config.grid) + ", block " +
              to_string(config.block) + ", " + std::to_string(config.dynamic_shared_bytes) +
              " bytes of dynamic shared memory");
}

}  // namespace ptxrt

namespace ptxrt {
namespace {

// What attribute launches of `state` are checked against: read once, with the non-portable
// opt-in as it stands now.
LaunchAttributeLimits attribute_limits(detail::KernelState& state) {
  std::call_once(state.attribute_limits_read, [&state] {
    const DeviceProperties& device = state.context.device().properties();
    LaunchAttributeLimits& limits = state.attribute_limits;
    limits.device = device.ordinal;
    limits.cc_major = device.cc_major;
    limits.cc_minor = device.cc_minor;
    limits.cluster_launch = device.cluster_launch;
    limits.cooperative_launch = device.cooperative_launch;
    limits.compiled_cluster = state.compiled_cluster;
    const StreamPriorities priorities = state.context.stream_priorities();
    limits.lowest_priority = priorities.lowest;
    limits.highest_priority = priorities.highest;
    ContextGuard guard(state.context);
    if (device.cluster_launch &&
        function_attribute(state.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                           "the non-portable cluster opt-in", state.description) != 0)
      state.non_portable_cluster_size_allowed.store(true);
  });
  LaunchAttributeLimits limits = state.attribute_limits;
  limits.non_portable_cluster_size_allowed = state.non_portable_cluster_size_allowed.load();
  return limits;
}

// cuOccupancyMaxActiveClusters for a launch already checked, asked with its cluster alone.
int active_clusters(const detail::KernelState& state, const LaunchConfig& config) {
  detail::LaunchAttributeList attributes =
      detail::launch_attribute_list({.grid = config.grid,
                                     .block = config.block,
                                     .dynamic_shared_bytes = config.dynamic_shared_bytes,
                                     .cluster = config.cluster},
                                    state.compiled_cluster);
  const CUlaunchConfig launch = detail::driver_launch_config(config, attributes);
  ContextGuard guard(state.context);
  int clusters = 0;
  check(detail::driver().cuOccupancyMaxActiveClusters(&clusters, state.function, &launch),
        "cuOccupancyMaxActiveClusters",
        "computing the cluster occupancy of " + state.description + " with " +
            detail::describe_launch(config));
  return clusters;
}

}  // namespace

std::optional<Dim3> Kernel::compiled_cluster() const noexcept { return state_->compiled_cluster; }

long long Kernel::max_cooperative_blocks(const Dim3& block,
                                         std::size_t dynamic_shared_bytes) const {
  const int per_sm =
      max_active_blocks_per_sm(static_cast<int>(block.count()), dynamic_shared_bytes);
  return static_cast<long long>(per_sm) * state_->context.device().properties().sm_count;
}

int Kernel::max_active_clusters(const LaunchConfig& config) const {
  detail::KernelState& state = *state_;
  check_launch_geometry(config, state.limits, describe());
  opt_in_dynamic_shared_bytes(config);
  const LaunchAttributeLimits limits = attribute_limits(state);
  check_launch_attributes(config, limits, describe());
  if (!launch_cluster(config, limits))
    detail::invalid_launch(describe(), "max_active_clusters needs a launch with a cluster (" +
                                           detail::describe_launch(config) + ")");
  return active_clusters(state, config);
}

void Kernel::allow_non_portable_cluster_size() const {
  detail::KernelState& state = *state_;
  const DeviceProperties& device = state.context.device().properties();
  if (!device.cluster_launch)
    detail::invalid_launch(describe(), "device " + std::to_string(device.ordinal) +
                                           " (compute capability " + device.compute_capability() +
                                           ") has no thread-block clusters to size");
  ContextGuard guard(state.context);
  check(detail::driver().cuFuncSetAttribute(state.function,
                                            CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
        "cuFuncSetAttribute", "allowing non-portable cluster sizes for " + describe());
  state.non_portable_cluster_size_allowed.store(true);
}

void Kernel::check_attributes_and_residency(const LaunchConfig& config) const {
  detail::KernelState& state = *state_;
  const LaunchAttributeLimits limits = attribute_limits(state);
  check_launch_attributes(config, limits, describe());
  const std::optional<Dim3> cluster = launch_cluster(config, limits);
  if (!cluster && !config.cooperative) return;
  LaunchResidency residency{.sm_count = state.context.device().properties().sm_count};
  if (cluster)
    residency.active_clusters = active_clusters(state, config);
  else
    residency.active_blocks_per_sm = max_active_blocks_per_sm(
        static_cast<int>(config.block.count()), config.dynamic_shared_bytes);
  check_launch_residency(config, cluster, residency, describe());
}

void Kernel::prepare_launch(const LaunchConfig& config, const ArgumentSignature& signature) const {
  check_plain_launch(config, signature);
  if (config.has_attributes() || state_->compiled_cluster) check_attributes_and_residency(config);
}

void Kernel::launch_with_attributes(const LaunchConfig& config, void** parameters) const {
  check_attributes_and_residency(config);
  detail::LaunchAttributeList attributes =
      detail::launch_attribute_list(config, state_->compiled_cluster);
  const CUlaunchConfig launch = detail::driver_launch_config(config, attributes);
  ContextGuard guard(state_->context);
  const CUresult result =
      detail::driver().cuLaunchKernelEx(&launch, state_->function, parameters, nullptr);
  if (result != CUDA_SUCCESS) [[unlikely]]
    check(result, "cuLaunchKernelEx",
          "launching " + describe() + " with " + detail::describe_launch(config));
}

}  // namespace ptxrt
