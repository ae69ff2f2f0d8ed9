// The checks of launch attributes, as pure functions of the limits (the GPU path and the CPU tests
// run the same code), and their translation into the driver's CUlaunchAttribute list.
#include "driver/launch_attributes.hpp"

#include <array>

#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace detail {

void invalid_launch(std::string_view who, const std::string& problem) {
  throw Error(ErrorKind::invalid_argument, std::string(who) + ": " + problem, "", 0, "",
              std::string(who));
}

std::string describe_launch(const LaunchConfig& config) {
  std::string text = "grid " + to_string(config.grid) + ", block " + to_string(config.block) +
                     ", " + std::to_string(config.dynamic_shared_bytes) +
                     " bytes of dynamic shared memory";
  if (config.cluster) text += ", cluster " + to_string(*config.cluster);
  if (config.cooperative) text += ", cooperative";
  if (config.programmatic_serialization) text += ", programmatic stream serialization";
  if (config.priority) text += ", priority " + std::to_string(*config.priority);
  return text;
}

LaunchAttributeList launch_attribute_list(const LaunchConfig& config,
                                          const std::optional<Dim3>& compiled_cluster) {
  LaunchAttributeList list;
  auto add = [&list](CUlaunchAttributeID id) -> CUlaunchAttributeValue& {
    CUlaunchAttribute& attribute = list.entries[list.count++];
    attribute.id = id;
    return attribute.value;
  };
  if (config.cluster && !compiled_cluster) {
    CUlaunchAttributeValue& value = add(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    value.clusterDim.x = config.cluster->x;
    value.clusterDim.y = config.cluster->y;
    value.clusterDim.z = config.cluster->z;
  }
  if (config.cooperative) add(CU_LAUNCH_ATTRIBUTE_COOPERATIVE).cooperative = 1;
  if (config.programmatic_serialization)
    add(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
        .programmaticStreamSerializationAllowed = 1;
  if (config.priority) add(CU_LAUNCH_ATTRIBUTE_PRIORITY).priority = *config.priority;
  return list;
}

CUlaunchConfig driver_launch_config(const LaunchConfig& config, LaunchAttributeList& attributes) {
  CUlaunchConfig launch{};
  set_geometry(launch, config);
  launch.hStream = config.stream.handle();
  launch.attrs = attributes.count > 0 ? attributes.entries.data() : nullptr;
  launch.numAttrs = attributes.count;
  return launch;
}

}  // namespace detail

namespace {

std::string compute_capability(const LaunchAttributeLimits& limits) {
  return std::to_string(limits.cc_major) + "." + std::to_string(limits.cc_minor);
}

void check_cluster(const LaunchConfig& config, const Dim3& cluster,
                   const LaunchAttributeLimits& limits, std::string_view who) {
  const std::string named = "cluster " + to_string(cluster);
  if (!limits.cluster_launch)
    detail::invalid_launch(who, named + " needs thread-block clusters, which device " +
                                    std::to_string(limits.device) + " (compute capability " +
                                    compute_capability(limits) + ") lacks: they need 9.0 or newer");
  if (cluster.count() == 0)
    detail::invalid_launch(who, named +
                                    " has an empty dimension (every dimension must be at "
                                    "least 1)");
  if (limits.compiled_cluster) {
    const Dim3& compiled = *limits.compiled_cluster;
    if (compiled.x != cluster.x || compiled.y != cluster.y || compiled.z != cluster.z)
      detail::invalid_launch(who, named + " differs from the " + to_string(compiled) +
                                      " the kernel was compiled with (__cluster_dims__)");
  }
  const std::array<unsigned, 3> grid{config.grid.x, config.grid.y, config.grid.z};
  const std::array<unsigned, 3> sides{cluster.x, cluster.y, cluster.z};
  static constexpr const char* axes[] = {"x", "y", "z"};
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] % sides[axis] != 0)
      detail::invalid_launch(who, named + " does not divide grid " + to_string(config.grid) + ": " +
                                      axes[axis] + " = " + std::to_string(grid[axis]) +
                                      " is not a multiple of " + std::to_string(sides[axis]));
  const std::string blocks = named + " = " + std::to_string(cluster.count()) + " blocks";
  if (cluster.count() > max_cluster_blocks)
    detail::invalid_launch(who, blocks + " exceeds the maximum of " +
                                    std::to_string(max_cluster_blocks) + " blocks per cluster");
  if (cluster.count() > portable_cluster_blocks && !limits.non_portable_cluster_size_allowed)
    detail::invalid_launch(who, blocks + " exceeds the portable maximum of " +
                                    std::to_string(portable_cluster_blocks) +
                                    " blocks; opt the kernel in to non-portable sizes first "
                                    "(Kernel::allow_non_portable_cluster_size)");
}

}  // namespace

std::optional<Dim3> launch_cluster(const LaunchConfig& config,
                                   const LaunchAttributeLimits& limits) {
  return config.cluster ? config.cluster : limits.compiled_cluster;
}

void check_launch_attributes(const LaunchConfig& config, const LaunchAttributeLimits& limits,
                             std::string_view who) {
  if (const std::optional<Dim3> cluster = launch_cluster(config, limits))
    check_cluster(config, *cluster, limits, who);
  const std::string device = "device " + std::to_string(limits.device);
  if (config.cooperative && !limits.cooperative_launch)
    detail::invalid_launch(who, device +
                                    " does not support cooperative launches "
                                    "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 0)");
  if (config.programmatic_serialization && limits.cc_major < 9)
    detail::invalid_launch(who,
                           "programmatic stream serialization needs compute capability 9.0 "
                           "or newer; " +
                               device + " is " + compute_capability(limits));
  if (config.priority &&
      (*config.priority < limits.highest_priority || *config.priority > limits.lowest_priority))
    detail::invalid_launch(who, "priority " + std::to_string(*config.priority) +
                                    " is outside the device's range " +
                                    std::to_string(limits.highest_priority) + " (highest) to " +
                                    std::to_string(limits.lowest_priority) + " (lowest)");
}

void check_launch_residency(const LaunchConfig& config, const std::optional<Dim3>& cluster,
                            const LaunchResidency& residency, std::string_view who) {
  if (cluster && residency.active_clusters == 0)
    detail::invalid_launch(who, "no cluster of " + to_string(*cluster) + " blocks (block " +
                                    to_string(config.block) + ", " +
                                    std::to_string(config.dynamic_shared_bytes) +
                                    " bytes of dynamic shared memory each) can be resident at "
                                    "once (cuOccupancyMaxActiveClusters = 0)");
  if (!config.cooperative) return;
  const unsigned long long resident =
      cluster ? static_cast<unsigned long long>(residency.active_clusters) * cluster->count()
              : static_cast<unsigned long long>(residency.active_blocks_per_sm) *
                    static_cast<unsigned long long>(residency.sm_count);
  if (config.grid.count() <= resident) return;
  const std::string why = cluster ? std::to_string(residency.active_clusters) + " clusters of " +
                                        to_string(*cluster) + " blocks"
                                  : std::to_string(residency.active_blocks_per_sm) + " blocks of " +
                                        to_string(config.block) + " per SM x " +
                                        std::to_string(residency.sm_count) + " SMs";
  detail::invalid_launch(who, "cooperative grid " + to_string(config.grid) + " = " +
                                  std::to_string(config.grid.count()) + " blocks exceeds the " +
                                  std::to_string(resident) +
                                  " blocks that can be resident at once (" + why + ")");
}

}  // namespace ptxrt
