// Internal: a launch's attributes as the driver takes them, shared by Kernel's launches and a
// Graph's kernel nodes, and the one way a refused launch is reported.
#pragma once

#include <cuda.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "ptxrt/core/kernel.hpp"

namespace ptxrt::detail {

// Error(invalid_argument) "<who>: <problem>", with the kernel as the error's context.
[[noreturn]] void invalid_launch(std::string_view who, const std::string& problem);

// "grid 10x1x1, block 256x1x1, 0 bytes of dynamic shared memory, cluster 2x1x1, cooperative":
// for the messages of failed launches and nodes.
std::string describe_launch(const LaunchConfig& config);

// The attributes `config` sets, at most one of each kind, in a fixed order. A kernel compiled
// with __cluster_dims__ gets no cluster attribute: its cluster is its own (the checks made sure
// the launch's agrees), and the driver takes none for it.
struct LaunchAttributeList {
  std::array<CUlaunchAttribute, 4> entries{};
  unsigned count = 0;
};
LaunchAttributeList launch_attribute_list(const LaunchConfig& config,
                                          const std::optional<Dim3>& compiled_cluster);

// The grid, block and dynamic shared memory of `config`, into a driver struct that names them as
// cuLaunchKernel does (CUlaunchConfig, CUDA_KERNEL_NODE_PARAMS).
template <typename DriverLaunch>
void set_geometry(DriverLaunch& launch, const LaunchConfig& config) {
  launch.gridDimX = config.grid.x;
  launch.gridDimY = config.grid.y;
  launch.gridDimZ = config.grid.z;
  launch.blockDimX = config.block.x;
  launch.blockDimY = config.block.y;
  launch.blockDimZ = config.block.z;
  launch.sharedMemBytes = static_cast<unsigned>(config.dynamic_shared_bytes);
}

// cuLaunchKernelEx's configuration for `config`, pointing into `attributes` (which must outlive
// it).
CUlaunchConfig driver_launch_config(const LaunchConfig& config, LaunchAttributeList& attributes);

}  // namespace ptxrt::detail
