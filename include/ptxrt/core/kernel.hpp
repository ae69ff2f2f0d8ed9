// A kernel (entry point) of a loaded module, its attributes, and the typed launch.
//
// Before cuLaunchKernel, a launch checks the block against the device and the kernel's own limit,
// the grid against the device, dynamic shared memory against the opt-in limit (opting the kernel
// in automatically above 48 KiB), and the number and byte sizes of the arguments against the
// kernel's parameter layout (read from its image when it was loaded; see parameter_layout.hpp).
// The argument check runs once per (kernel, argument-type list) and its verdict is remembered, so
// a steady-state launch costs about what a raw cuLaunchKernel costs.
//
// A launch with attributes (a cluster, cooperative, programmatic stream serialization, a
// priority), or of a kernel compiled with __cluster_dims__, goes through cuLaunchKernelEx after
// two more checks: check_launch_attributes (the device and kernel can take them) and
// check_launch_residency (the blocks that must be resident at once can be: a cooperative grid
// within occupancy x SMs, at least one cluster per cuOccupancyMaxActiveClusters). So the driver's
// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE or CUDA_ERROR_INVALID_CLUSTER_SIZE never reaches a user.
// The residency check asks the driver's occupancy calculator on every such launch (a few µs).
//
// Thread safety: a Kernel may be shared by any number of threads, and launched from all of them at
// once; each launch names its own stream. A Kernel is bound to one context (its Module's, or the
// one Library::kernel was given) and makes that context current only for the calls it makes.
#pragma once

#include <cuda.h>

#include <array>
#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/parameter_layout.hpp"
#include "ptxrt/core/stream_ref.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API Dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr unsigned long long count() const noexcept {
    return static_cast<unsigned long long>(x) * y * z;
  }
};
PTXRT_API std::string to_string(const Dim3& dims);  // "64x32x1"

// Blocks needed to cover `count` items `per_block` at a time (a grid size for any n).
constexpr unsigned blocks_for(unsigned long long count, unsigned per_block) {
  return static_cast<unsigned>((count + per_block - 1) / per_block);
}

struct PTXRT_API LaunchConfig {
  Dim3 grid;
  Dim3 block;
  std::size_t dynamic_shared_bytes = 0;
  StreamRef stream;  // none: the context's default stream
  // Launch attributes; any of them sends the launch through cuLaunchKernelEx.
  // Thread-block cluster dimensions (CC 9.0 and newer); each must divide the grid's.
  std::optional<Dim3> cluster;
  // Every block resident at once, so that the grid may synchronize
  // (cooperative_groups::this_grid().sync()).
  bool cooperative = false;
  // The kernel may start before the previous kernel in the stream ends, up to its
  // cudaGridDependencySynchronize() (programmatic dependent launch, CC 9.0 and newer).
  bool programmatic_serialization = false;
  // Scheduling priority within Context::stream_priorities() (lower numbers first); unset: the
  // stream's.
  std::optional<int> priority;

  bool has_attributes() const noexcept {
    return cluster || cooperative || programmatic_serialization || priority;
  }
};

struct PTXRT_API KernelAttributes {
  int registers = 0;              // per thread
  int max_threads_per_block = 0;  // the kernel's own limit (launch bounds, registers)
  std::size_t static_shared_bytes = 0;
  std::size_t constant_bytes = 0;
  std::size_t local_bytes = 0;               // stack frame per thread (spills, local arrays)
  int ptx_version = 0;                       // e.g. 90 for PTX ISA 9.0
  int binary_version = 0;                    // e.g. 90 for sm_90 SASS
  std::size_t max_dynamic_shared_bytes = 0;  // current opt-in limit
};

// The identity of an argument-type list, one static instance per list (so its address is the key
// under which a verdict is remembered).
struct PTXRT_API ArgumentSignature {
  std::span<const std::size_t> sizes;
  std::span<const std::type_info* const> types;
};

namespace detail {
struct KernelState;

template <typename... Args>
struct SignatureOf {
  static constexpr std::array<std::size_t, sizeof...(Args)> sizes{sizeof(Args)...};
  static inline const std::array<const std::type_info*, sizeof...(Args)> types{&typeid(Args)...};
  static inline const ArgumentSignature value{sizes, types};
};

// Device memory of any kind (DeviceBuffer, ManagedBuffer, every DeviceRange): whatever has a
// device address.
template <typename T>
concept DeviceAddressable = requires(const T& memory) {
  { memory.address() } -> std::same_as<CUdeviceptr>;
};

// What a C++ argument becomes in the kernel's parameter buffer: memory passes its address, any
// other value its bytes.
template <typename T>
requires(!DeviceAddressable<T>) const T& kernel_argument(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "kernel arguments must be trivially copyable");
  return value;
}
template <DeviceAddressable T>
CUdeviceptr kernel_argument(const T& memory) {
  return memory.address();
}

// Calls action(signature, parameters) with the driver's parameter array for `converted`.
template <typename Action, typename... Converted>
decltype(auto) call_with_converted(Action&& action, const Converted&... converted) {
  void* parameters[sizeof...(Converted) + 1] = {
      const_cast<void*>(static_cast<const void*>(&converted))...};
  return action(SignatureOf<Converted...>::value, parameters);
}

// The one road from C++ arguments to a parameter array, for launches and graph kernel nodes
// alike: the converted values live until `action` returns.
template <typename Action, typename... Args>
decltype(auto) with_kernel_parameters(Action&& action, const Args&... args) {
  return call_with_converted(std::forward<Action>(action), kernel_argument(args)...);
}
}  // namespace detail

class PTXRT_API Kernel {
 public:
  const std::string& name() const noexcept;
  CUfunction handle() const noexcept;
  const Context& context() const noexcept;
  KernelAttributes attributes() const;
  // The parameter layout, or empty when the image did not record it (a fatbin whose members are
  // all compressed): then has_parameter_layout() is false and arguments go unchecked.
  const std::vector<ParameterInfo>& parameters() const noexcept;
  bool has_parameter_layout() const noexcept;
  // "kernel 'matmul_tiled' of matmul_tiled.cu [TILE_WIDTH=32] sm_90", for messages.
  const std::string& describe() const noexcept;

  // Raises the kernel's dynamic shared memory limit (cuFuncSetAttribute); launch does this itself.
  void set_max_dynamic_shared_bytes(std::size_t bytes) const;
  // cuOccupancyMaxActiveBlocksPerMultiprocessor.
  int max_active_blocks_per_sm(int block_threads, std::size_t dynamic_shared_bytes = 0) const;
  // The most blocks a cooperative launch of this block and dynamic shared memory may have: the
  // blocks per SM the occupancy allows times the SMs.
  long long max_cooperative_blocks(const Dim3& block, std::size_t dynamic_shared_bytes = 0) const;
  // cuOccupancyMaxActiveClusters: how many clusters of `config`'s shape (its cluster, else the
  // kernel's __cluster_dims__) can be resident at once. The launch is checked first, and the
  // kernel opted in to its shared memory, as launch would; a launch without a cluster is an
  // Error.
  int max_active_clusters(const LaunchConfig& config) const;
  // Lets launches use clusters above the portable 8 blocks (up to 16 where the device allows):
  // cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1).
  void allow_non_portable_cluster_size() const;
  // The __cluster_dims__ the kernel was compiled with, or nothing.
  std::optional<Dim3> compiled_cluster() const noexcept;

  template <typename... Args>
  void launch(const LaunchConfig& config, const Args&... args) const {
    detail::with_kernel_parameters(
        [&](const ArgumentSignature& signature, void** parameters) {
          launch_raw(config, signature, parameters);
        },
        args...);
  }

  // Checks an argument list against the layout, throwing as a launch would, without launching.
  void check_arguments(const ArgumentSignature& signature) const;
  // Every check a launch of `config` with these arguments makes, and the opt-ins it does, without
  // launching: what a graph's kernel node needs before the driver sees it.
  void prepare_launch(const LaunchConfig& config, const ArgumentSignature& signature) const;

  // A launch whose argument list is known only at run time (a tuning problem's): `parameters[i]`
  // points at argument i of `sizes[i]` bytes. Checked as launch() checks, every time.
  void launch_untyped(const LaunchConfig& config, std::span<void* const> parameters,
                      std::span<const std::size_t> sizes) const;

 private:
  friend class Module;
  friend class Library;
  // `owner` is what keeps the function loaded: the Module's or the Library's shared state.
  Kernel(std::shared_ptr<detail::KernelState> state, std::shared_ptr<const void> owner)
      : state_(std::move(state)), owner_(std::move(owner)) {}

  void launch_raw(const LaunchConfig& config, const ArgumentSignature& signature,
                  void** parameters) const;
  // Geometry, arguments and the shared memory opt-in: what every launch checks.
  void check_plain_launch(const LaunchConfig& config, const ArgumentSignature& signature) const;
  void opt_in_dynamic_shared_bytes(const LaunchConfig& config) const;
  // The launch after the checks: cuLaunchKernel, or cuLaunchKernelEx for launch attributes.
  void launch_checked(const LaunchConfig& config, void** parameters) const;
  void launch_with_attributes(const LaunchConfig& config, void** parameters) const;
  void check_attributes_and_residency(const LaunchConfig& config) const;

  std::shared_ptr<detail::KernelState> state_;
  std::shared_ptr<const void> owner_;
};

// Checks `signature` against a parameter layout; throws Error(invalid_argument) naming the kernel
// (`who`), the position, both sizes and the C++ type (when `signature.types` lists them). Every
// launch makes this check; it needs no GPU.
PTXRT_API void check_arguments_against_layout(const std::vector<ParameterInfo>& layout,
                                              const ArgumentSignature& signature,
                                              std::string_view who);

// The geometry checks a launch makes, as a pure function of the limits (testable with no GPU).
struct PTXRT_API LaunchLimits {
  std::array<int, 3> max_block_dim{};
  std::array<int, 3> max_grid_dim{};
  int max_threads_per_block = 0;  // the kernel's own
  std::size_t static_shared_bytes = 0;
  std::size_t shared_memory_per_block_optin = 0;
};
PTXRT_API void check_launch_geometry(const LaunchConfig& config, const LaunchLimits& limits,
                                     std::string_view who);

// A cluster of more blocks than this needs the kernel's opt-in (allow_non_portable_cluster_size),
// and no device runs one of more than max_cluster_blocks (CC 9.0 and 10.0: 16).
inline constexpr unsigned portable_cluster_blocks = 8;
inline constexpr unsigned max_cluster_blocks = 16;

// What launch attributes are checked against: the device's and the kernel's own.
struct PTXRT_API LaunchAttributeLimits {
  int device = 0;  // the ordinal, for messages
  int cc_major = 0;
  int cc_minor = 0;
  bool cluster_launch = false;           // CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH
  bool cooperative_launch = false;       // CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH
  std::optional<Dim3> compiled_cluster;  // the kernel's __cluster_dims__
  bool non_portable_cluster_size_allowed = false;
  // Context::stream_priorities(): the numerically greatest (lowest) priority and the least
  // (highest), e.g. 0 and -5.
  int lowest_priority = 0;
  int highest_priority = 0;
};

// The cluster a launch runs with: its own, else the kernel's compiled one, else none.
PTXRT_API std::optional<Dim3> launch_cluster(const LaunchConfig& config,
                                             const LaunchAttributeLimits& limits);

// The checks of a launch's attributes that need no occupancy (pure, testable with no GPU): the
// device supports what is asked, a cluster divides the grid, agrees with __cluster_dims__ and
// stays within the portable size unless the kernel opted in, the priority is in range.
PTXRT_API void check_launch_attributes(const LaunchConfig& config,
                                       const LaunchAttributeLimits& limits, std::string_view who);

// What can be resident at once for one launch shape: from the driver's occupancy calculator, or
// from the offline model (compute_occupancy, max_active_clusters in occupancy.hpp).
struct PTXRT_API LaunchResidency {
  int sm_count = 0;
  int active_blocks_per_sm = 0;  // blocks of this size and shared memory per SM
  int active_clusters = 0;       // clusters of the launch's cluster (cluster launches only)
};

// A cluster launch needs at least one resident cluster; a cooperative launch needs every block
// resident: at most active_blocks_per_sm x sm_count blocks, or active_clusters x the cluster's
// blocks when it also has a cluster.
PTXRT_API void check_launch_residency(const LaunchConfig& config,
                                      const std::optional<Dim3>& cluster,
                                      const LaunchResidency& residency, std::string_view who);

}  // namespace ptxrt
