// A kernel (entry point) of a loaded module, its attributes, and the typed launch.
//
// Before cuLaunchKernel, a launch checks the block against the device and the kernel's own limit,
// the grid against the device, dynamic shared memory against the opt-in limit (opting the kernel
// in automatically above 48 KiB), and the number and byte sizes of the arguments against the
// kernel's parameter layout (read from its image when it was loaded; see parameter_layout.hpp).
// The argument check runs once per (kernel, argument-type list) and its verdict is remembered, so
// a steady-state launch costs about what a raw cuLaunchKernel costs.
//
// Thread safety: a Kernel may be shared by any number of threads, and launched from all of them at
// once; each launch names its own stream. A Kernel is bound to one context (its Module's, or the
// one Library::kernel was given) and makes that context current only for the calls it makes.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

#include "ptxrt/context.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/memory.hpp"
#include "ptxrt/parameter_layout.hpp"

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
  CUstream stream = nullptr;  // nullptr: the context's default stream
};

struct PTXRT_API KernelAttributes {
  int registers = 0;              // per thread
  int max_threads_per_block = 0;  // the kernel's own limit (launch bounds, registers)
  int static_shared_bytes = 0;
  int constant_bytes = 0;
  int local_bytes = 0;            // stack frame per thread (spills, local arrays)
  int ptx_version = 0;            // e.g. 90 for PTX ISA 9.0
  int binary_version = 0;         // e.g. 90 for sm_90 SASS
  int max_dynamic_shared_bytes = 0;  // current opt-in limit
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

// What a C++ argument becomes in the kernel's parameter buffer: buffers pass their address.
template <typename T>
const T& kernel_argument(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "kernel arguments must be trivially copyable");
  return value;
}
inline CUdeviceptr kernel_argument(const DeviceMemory& memory) { return memory.address(); }
template <typename T>
CUdeviceptr kernel_argument(const DeviceBuffer<T>& buffer) {
  return buffer.address();
}
template <typename T>
CUdeviceptr kernel_argument(DeviceBuffer<T>& buffer) {
  return buffer.address();
}
}  // namespace detail

class PTXRT_API Kernel {
 public:
  // `owner` is what keeps the function loaded: the Module's or the Library's shared state.
  Kernel(std::shared_ptr<detail::KernelState> state, std::shared_ptr<const void> owner)
      : state_(std::move(state)), owner_(std::move(owner)) {}

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

  template <typename... Args>
  void launch(const LaunchConfig& config, const Args&... args) const {
    launch_converted(config, detail::kernel_argument(args)...);
  }

  // Checks an argument list against the layout, throwing as a launch would (for tests and tools).
  void check_arguments(const ArgumentSignature& signature) const;

  // A launch whose argument list is known only at run time (a tuning problem's): `parameters[i]`
  // points at argument i of `sizes[i]` bytes. Checked as launch() checks, every time.
  void launch_untyped(const LaunchConfig& config, std::span<void* const> parameters,
                      std::span<const std::size_t> sizes) const;

 private:
  template <typename... Converted>
  void launch_converted(const LaunchConfig& config, const Converted&... converted) const {
    void* parameters[sizeof...(Converted) + 1] = {
        const_cast<void*>(static_cast<const void*>(&converted))...};
    launch_raw(config, detail::SignatureOf<Converted...>::value, parameters);
  }
  void launch_raw(const LaunchConfig& config, const ArgumentSignature& signature,
                  void** parameters) const;
  // The launch after the argument check.
  void launch_checked(const LaunchConfig& config, void** parameters) const;

  std::shared_ptr<detail::KernelState> state_;
  std::shared_ptr<const void> owner_;
};

// Checks `signature` against a parameter layout; throws Error(invalid_argument) naming the kernel
// (`who`), the position, both sizes and the C++ type (when `signature.types` lists them).
// Exposed for tests: no GPU needed.
PTXRT_API void check_arguments_against_layout(const std::vector<ParameterInfo>& layout,
                                              const ArgumentSignature& signature,
                                              std::string_view who);

// The geometry checks a launch makes, as a pure function of the limits (testable with no GPU).
struct PTXRT_API LaunchLimits {
  std::array<int, 3> max_block_dim{};
  std::array<int, 3> max_grid_dim{};
  int max_threads_per_block = 0;  // the kernel's own
  int static_shared_bytes = 0;
  int shared_memory_per_block_optin = 0;
};
PTXRT_API void check_launch_geometry(const LaunchConfig& config, const LaunchLimits& limits,
                                     std::string_view who);

}  // namespace ptxrt
