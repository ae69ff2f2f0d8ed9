#include "ptxrt/core/device.hpp"

#include <cstdio>
#include <sstream>

#include "driver/driver_api.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace {

int attribute(CUdevice device, CUdevice_attribute which, const char* name) {
  int value = 0;
  check(detail::driver().cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute",
        std::string("reading ") + name);
  return value;
}

DeviceProperties read_properties(CUdevice device, int ordinal) {
  const detail::DriverApi& api = detail::driver();
  DeviceProperties p;
  p.ordinal = ordinal;
  char name[256] = {};
  check(api.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  p.name = name;
  // NVML_DEVICE_PCI_BUS_ID_FMT; a device has function 0.
  const auto pci = [&](CUdevice_attribute which, const char* attribute_name) {
    return static_cast<unsigned>(attribute(device, which, attribute_name));
  };
  char pci_bus_id[32];
  std::snprintf(pci_bus_id, sizeof pci_bus_id, "%08X:%02X:%02X.0",
                pci(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI_DOMAIN_ID"),
                pci(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI_BUS_ID"),
                pci(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI_DEVICE_ID"));
  p.pci_bus_id = pci_bus_id;
#define PTXRT_ATTRIBUTE(field, which) p.field = attribute(device, CU_DEVICE_ATTRIBUTE_##which, #which)
  PTXRT_ATTRIBUTE(cc_major, COMPUTE_CAPABILITY_MAJOR);
  PTXRT_ATTRIBUTE(cc_minor, COMPUTE_CAPABILITY_MINOR);
  PTXRT_ATTRIBUTE(sm_count, MULTIPROCESSOR_COUNT);
  PTXRT_ATTRIBUTE(l2_cache_bytes, L2_CACHE_SIZE);
  PTXRT_ATTRIBUTE(shared_memory_per_block, MAX_SHARED_MEMORY_PER_BLOCK);
  PTXRT_ATTRIBUTE(shared_memory_per_block_optin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  PTXRT_ATTRIBUTE(shared_memory_per_sm, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  PTXRT_ATTRIBUTE(reserved_shared_memory_per_block, RESERVED_SHARED_MEMORY_PER_BLOCK);
  PTXRT_ATTRIBUTE(registers_per_block, MAX_REGISTERS_PER_BLOCK);
  PTXRT_ATTRIBUTE(registers_per_sm, MAX_REGISTERS_PER_MULTIPROCESSOR);
  PTXRT_ATTRIBUTE(max_threads_per_block, MAX_THREADS_PER_BLOCK);
  PTXRT_ATTRIBUTE(max_threads_per_sm, MAX_THREADS_PER_MULTIPROCESSOR);
  PTXRT_ATTRIBUTE(max_blocks_per_sm, MAX_BLOCKS_PER_MULTIPROCESSOR);
  PTXRT_ATTRIBUTE(warp_size, WARP_SIZE);
  PTXRT_ATTRIBUTE(max_block_dim[0], MAX_BLOCK_DIM_X);
  PTXRT_ATTRIBUTE(max_block_dim[1], MAX_BLOCK_DIM_Y);
  PTXRT_ATTRIBUTE(max_block_dim[2], MAX_BLOCK_DIM_Z);
  PTXRT_ATTRIBUTE(max_grid_dim[0], MAX_GRID_DIM_X);
  PTXRT_ATTRIBUTE(max_grid_dim[1], MAX_GRID_DIM_Y);
  PTXRT_ATTRIBUTE(max_grid_dim[2], MAX_GRID_DIM_Z);
  PTXRT_ATTRIBUTE(clock_khz, CLOCK_RATE);
  PTXRT_ATTRIBUTE(memory_clock_khz, MEMORY_CLOCK_RATE);
  PTXRT_ATTRIBUTE(memory_bus_width_bits, GLOBAL_MEMORY_BUS_WIDTH);
  PTXRT_ATTRIBUTE(cooperative_launch, COOPERATIVE_LAUNCH);
  PTXRT_ATTRIBUTE(cluster_launch, CLUSTER_LAUNCH);
  PTXRT_ATTRIBUTE(managed_memory, MANAGED_MEMORY);
  PTXRT_ATTRIBUTE(concurrent_managed_access, CONCURRENT_MANAGED_ACCESS);
  PTXRT_ATTRIBUTE(memory_pools, MEMORY_POOLS_SUPPORTED);
#undef PTXRT_ATTRIBUTE
  check(api.cuDeviceTotalMem(&p.global_memory_bytes, device), "cuDeviceTotalMem");
  p.driver_version = api.version;
  return p;
}

}  // namespace

std::string DeviceProperties::compute_capability() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

std::string DeviceProperties::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

double DeviceProperties::theoretical_bandwidth_gb_per_s() const {
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0) / 1e9;
}

std::string format_properties(const DeviceProperties& p) {
  std::ostringstream out;
  auto kib = [](long long bytes) { return std::to_string(bytes / 1024) + " KiB"; };
  auto yes_no = [](bool value) { return value ? "yes" : "no"; };
  out << "device " << p.ordinal << ": " << p.name << "\n"
      << "  PCI bus id:                " << p.pci_bus_id << "\n"
      << "  compute capability:        " << p.compute_capability() << " (" << p.arch() << ")\n"
      << "  multiprocessors:           " << p.sm_count << "\n"
      << "  global memory:             " << p.global_memory_bytes / (1024 * 1024) << " MiB\n"
      << "  L2 cache:                  " << kib(p.l2_cache_bytes) << "\n"
      << "  shared memory per block:   " << kib(p.shared_memory_per_block) << " (opt-in "
      << kib(p.shared_memory_per_block_optin) << ", reserved "
      << p.reserved_shared_memory_per_block << " B)\n"
      << "  shared memory per SM:      " << kib(p.shared_memory_per_sm) << "\n"
      << "  registers per block / SM:  " << p.registers_per_block << " / " << p.registers_per_sm
      << "\n"
      << "  threads per block / SM:    " << p.max_threads_per_block << " / "
      << p.max_threads_per_sm << "\n"
      << "  blocks per SM:             " << p.max_blocks_per_sm << "\n"
      << "  warp size:                 " << p.warp_size << "\n"
      << "  max block:                 " << p.max_block_dim[0] << " x " << p.max_block_dim[1]
      << " x " << p.max_block_dim[2] << "\n"
      << "  max grid:                  " << p.max_grid_dim[0] << " x " << p.max_grid_dim[1] << " x "
      << p.max_grid_dim[2] << "\n"
      << "  SM clock:                  " << p.clock_khz / 1000 << " MHz\n"
      << "  memory:                    " << p.memory_clock_khz / 1000 << " MHz, "
      << p.memory_bus_width_bits << "-bit bus, "
      << static_cast<long long>(p.theoretical_bandwidth_gb_per_s()) << " GB/s theoretical\n"
      << "  launches:                  cooperative " << yes_no(p.cooperative_launch)
      << ", clusters " << yes_no(p.cluster_launch) << "\n"
      << "  memory kinds:              managed " << yes_no(p.managed_memory)
      << (p.concurrent_managed_access ? " (concurrent with the host)" : "") << ", pools "
      << yes_no(p.memory_pools) << "\n"
      << "  driver:                    CUDA " << format_cuda_version(p.driver_version) << "\n";
  return out.str();
}

int Device::count() {
  int count = 0;
  check(detail::driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

Device Device::get(int ordinal) {
  const int available = count();
  if (ordinal < 0 || ordinal >= available)
    throw Error(ErrorKind::invalid_argument,
                "device " + std::to_string(ordinal) + " does not exist: the driver sees " +
                    std::to_string(available) + " device(s), numbered 0 to " +
                    std::to_string(available - 1));
  CUdevice handle = 0;
  check(detail::driver().cuDeviceGet(&handle, ordinal), "cuDeviceGet",
        "opening device " + std::to_string(ordinal));
  return Device(handle, read_properties(handle, ordinal));
}

}  // namespace ptxrt
