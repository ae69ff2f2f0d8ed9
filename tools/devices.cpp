// `ptxrt devices`: the driver this process sees and every device's properties. Having no driver or
// no GPU is the answer, not a failure: the command exits 0 and says so.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/driver.hpp"

namespace ptxrt::cli {
namespace {

nlohmann::json to_json(const DeviceProperties& p) {
  return {{"ordinal", p.ordinal},
          {"name", p.name},
          {"pci_bus_id", p.pci_bus_id},
          {"compute_capability", p.compute_capability()},
          {"arch", p.arch()},
          {"cc_major", p.cc_major},
          {"cc_minor", p.cc_minor},
          {"sm_count", p.sm_count},
          {"global_memory_bytes", p.global_memory_bytes},
          {"l2_cache_bytes", p.l2_cache_bytes},
          {"shared_memory_per_block", p.shared_memory_per_block},
          {"shared_memory_per_block_optin", p.shared_memory_per_block_optin},
          {"shared_memory_per_sm", p.shared_memory_per_sm},
          {"reserved_shared_memory_per_block", p.reserved_shared_memory_per_block},
          {"registers_per_block", p.registers_per_block},
          {"registers_per_sm", p.registers_per_sm},
          {"max_threads_per_block", p.max_threads_per_block},
          {"max_threads_per_sm", p.max_threads_per_sm},
          {"max_blocks_per_sm", p.max_blocks_per_sm},
          {"warp_size", p.warp_size},
          {"max_block_dim", p.max_block_dim},
          {"max_grid_dim", p.max_grid_dim},
          {"clock_khz", p.clock_khz},
          {"memory_clock_khz", p.memory_clock_khz},
          {"memory_bus_width_bits", p.memory_bus_width_bits},
          {"theoretical_bandwidth_gb_per_s", p.theoretical_bandwidth_gb_per_s()},
          {"driver_version", p.driver_version},
          {"cooperative_launch", p.cooperative_launch},
          {"cluster_launch", p.cluster_launch},
          {"managed_memory", p.managed_memory},
          {"concurrent_managed_access", p.concurrent_managed_access},
          {"memory_pools", p.memory_pools}};
}

std::string problem_of(const DriverStatus& status) {
  return status.problem.empty() ? "no CUDA device" : status.problem;
}

void list_devices(bool json) {
  const DriverStatus status = driver_status();
  std::vector<DeviceProperties> devices;
  if (status.usable)
    for (int ordinal = 0; ordinal < status.device_count; ++ordinal)
      devices.push_back(Device::get(ordinal).properties());
  if (json) {
    nlohmann::json driver{{"usable", status.usable},
                          {"version", status.version},
                          {"device_count", status.device_count}};
    if (!status.usable) driver["problem"] = problem_of(status);
    nlohmann::json listed = nlohmann::json::array();
    for (const DeviceProperties& properties : devices) listed.push_back(to_json(properties));
    print_json(std::cout, {{"driver", driver}, {"devices", listed}});
    return;
  }
  if (!status.usable) {
    std::cout << "no usable CUDA device: " << problem_of(status) << '\n';
    return;
  }
  std::cout << "CUDA driver " << format_cuda_version(status.version) << ", " << status.device_count
            << " device(s)\n";
  for (const DeviceProperties& properties : devices) std::cout << format_properties(properties);
}

}  // namespace

void add_devices_commands(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* command = app.add_subcommand(
      "devices", "The CUDA driver and each device's properties (exit 0 without a GPU too)");
  command->add_flag("--json", *json,
                    "print {\"driver\": {usable, version, device_count, problem}, \"devices\": "
                    "[every DeviceProperties field, plus compute_capability, arch and "
                    "theoretical_bandwidth_gb_per_s]}");
  command->callback([json] { list_devices(*json); });
}

}  // namespace ptxrt::cli
