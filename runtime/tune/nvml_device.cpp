#include "tune/nvml_device.hpp"

#include <dlfcn.h>

#include <string>

#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {

namespace {

// The few NVML entry points a tune reads, declared as nvml.h declares them (the toolkit's header
// is not needed to build ptxrt). Their ABI has been stable since NVML 5 and 11.
using NvmlResult = int;
constexpr NvmlResult nvml_success = 0;
constexpr int nvml_clock_sm = 1;         // NVML_CLOCK_SM
constexpr int nvml_temperature_gpu = 0;  // NVML_TEMPERATURE_GPU

struct NvmlApi {
  NvmlResult (*init)() = nullptr;
  const char* (*error_string)(NvmlResult) = nullptr;
  NvmlResult (*handle_by_pci_bus_id)(const char*, nvmlDevice_st**) = nullptr;
  NvmlResult (*total_energy)(nvmlDevice_st*, unsigned long long*) = nullptr;
  NvmlResult (*clock_info)(nvmlDevice_st*, int, unsigned int*) = nullptr;
  NvmlResult (*temperature)(nvmlDevice_st*, int, unsigned int*) = nullptr;
};

struct LoadedNvml {
  NvmlApi api;
  std::string failure;  // empty when loaded and started
};

template <typename Function>
bool resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

LoadedNvml load() {
  LoadedNvml loaded;
  // RTLD_NODELETE: the entry points stay valid through the static destruction of other objects.
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* reason = dlerror();
    loaded.failure = reason != nullptr ? reason : "dlopen failed";
    return loaded;
  }
  NvmlApi& api = loaded.api;
  if (!resolve(library, "nvmlInit_v2", api.init) ||
      !resolve(library, "nvmlErrorString", api.error_string) ||
      !resolve(library, "nvmlDeviceGetHandleByPciBusId_v2", api.handle_by_pci_bus_id) ||
      !resolve(library, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy) ||
      !resolve(library, "nvmlDeviceGetClockInfo", api.clock_info) ||
      !resolve(library, "nvmlDeviceGetTemperature", api.temperature)) {
    loaded.failure = "it lacks an entry point ptxrt reads (a driver older than CUDA 11?)";
    return loaded;
  }
  // Started once and never shut down: other threads may still read while the process ends.
  if (const NvmlResult result = api.init(); result != nvml_success)
    loaded.failure = std::string("nvmlInit_v2: ") + api.error_string(result);
  return loaded;
}

const NvmlApi& nvml(std::string_view user) {
  static const LoadedNvml loaded = load();
  if (!loaded.failure.empty())
    throw Error(ErrorKind::no_driver,
                std::string(user) +
                    " observes power through NVML (libnvidia-ml.so.1, installed with the NVIDIA "
                    "driver), which is not usable here: " +
                    loaded.failure);
  return loaded.api;
}

void check_nvml(NvmlResult result, const char* call, const std::string& doing) {
  if (result != nvml_success)
    throw Error(ErrorKind::driver, doing + ": " + call + ": " + nvml("").error_string(result), call,
                result);
}

}  // namespace

void require_nvml(std::string_view user) { nvml(user); }

NvmlDevice::NvmlDevice(const Device& device, std::string_view user) {
  const NvmlApi& api = nvml(user);
  const std::string& address = device.properties().pci_bus_id;
  const std::string doing = std::string(user) + " on device " + std::to_string(device.ordinal()) +
                            " (PCI " + address + ")";
  check_nvml(api.handle_by_pci_bus_id(address.c_str(), &handle_),
             "nvmlDeviceGetHandleByPciBusId_v2", doing);
  // A device without an energy counter (before Volta, some boards) says so now, not mid-tune.
  unsigned long long millijoules = 0;
  check_nvml(api.total_energy(handle_, &millijoules), "nvmlDeviceGetTotalEnergyConsumption", doing);
}

double NvmlDevice::energy_j() const {
  unsigned long long millijoules = 0;
  check_nvml(nvml("").total_energy(handle_, &millijoules), "nvmlDeviceGetTotalEnergyConsumption",
             "reading the GPU's energy");
  return static_cast<double>(millijoules) * 1e-3;
}

double NvmlDevice::sm_clock_mhz() const {
  unsigned int megahertz = 0;
  check_nvml(nvml("").clock_info(handle_, nvml_clock_sm, &megahertz), "nvmlDeviceGetClockInfo",
             "reading the GPU's SM clock");
  return megahertz;
}

double NvmlDevice::temperature_c() const {
  unsigned int celsius = 0;
  check_nvml(nvml("").temperature(handle_, nvml_temperature_gpu, &celsius),
             "nvmlDeviceGetTemperature", "reading the GPU's temperature");
  return celsius;
}

}  // namespace ptxrt::detail
