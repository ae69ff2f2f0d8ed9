#include "ptxrt/core/driver.hpp"

#include <dlfcn.h>

#include <mutex>
#include <optional>

#include "driver/driver_api.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace detail {
namespace {

constexpr const char* driver_library = "libcuda.so.1";

Error no_driver(std::string detail) {
  return Error(ErrorKind::no_driver,
               "no CUDA driver found (" + std::string(driver_library) + "): " + detail);
}

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

struct LoadedDriver {
  DriverApi api;
  bool initialised = false;       // libcuda loaded and cuInit returned
  std::optional<Error> failure;   // why driver() must throw, if it must
};

template <typename Function>
CUresult resolve(GetProcAddress get_proc_address, const char* name, int version,
                 Function& entry) {
  void* address = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult result =
      get_proc_address(name, &address, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (result == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS)
    entry = reinterpret_cast<Function>(address);
  return result;
}

Error stub_loaded() {
  return no_driver(
      "the CUDA toolkit's stub library was loaded instead of a real driver "
      "(CUDA_ERROR_STUB_LIBRARY); remove the toolkit's lib64/stubs folder from "
      "LD_LIBRARY_PATH, or install the NVIDIA driver");
}


// Fills `loaded`; never throws, so that driver_status() can report instead of failing.
void load(LoadedDriver& loaded) {
  // RTLD_NODELETE: entry points stay valid through static destruction of other objects.
  void* handle = dlopen(driver_library, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* reason = dlerror();
    loaded.failure = no_driver(reason ? reason : "dlopen failed");
    return;
  }
  auto get_proc_address = reinterpret_cast<GetProcAddress>(dlsym(handle, "cuGetProcAddress_v2"));
  if (!get_proc_address) {
    loaded.failure = no_driver("it has no cuGetProcAddress_v2, so it predates CUDA 12; "
                               "install a driver for CUDA " +
                               format_cuda_version(minimum_driver_version) + " or newer");
    return;
  }
  DriverApi& api = loaded.api;
  // The toolkit's stub answers every call, this one included, with CUDA_ERROR_STUB_LIBRARY.
  if (resolve(get_proc_address, "cuInit", 2000, api.cuInit) == CUDA_ERROR_STUB_LIBRARY) {
    loaded.failure = stub_loaded();
    return;
  }
  // The version first: cuGetProcAddress fails (CUDA_ERROR_INVALID_VALUE) when asked for an ABI
  // newer than the driver, so the entries are asked for only of a driver new enough for them all.
  resolve(get_proc_address, "cuDriverGetVersion", 2020, api.cuDriverGetVersion);
  if (api.cuDriverGetVersion && api.cuDriverGetVersion(&api.version) == CUDA_SUCCESS &&
      api.version < minimum_driver_version) {
    loaded.failure = no_driver("the driver supports CUDA " + format_cuda_version(api.version) +
                               ", and ptxrt needs CUDA " +
                               format_cuda_version(minimum_driver_version) +
                               " or newer; update the driver");
    return;
  }
#define PTXRT_RESOLVE_ENTRY(name, version) resolve(get_proc_address, #name, version, api.name);
  PTXRT_REQUIRED_DRIVER_FUNCTIONS(PTXRT_RESOLVE_ENTRY)
  PTXRT_OPTIONAL_DRIVER_FUNCTIONS(PTXRT_RESOLVE_ENTRY)
#undef PTXRT_RESOLVE_ENTRY
#define PTXRT_REQUIRE_ENTRY(name, version)                               \
  if (!api.name) {                                                        \
    loaded.failure = no_driver("the driver has no entry point " #name);  \
    return;                                                               \
  }
  PTXRT_REQUIRED_DRIVER_FUNCTIONS(PTXRT_REQUIRE_ENTRY)
#undef PTXRT_REQUIRE_ENTRY

  CUresult init = api.cuInit(0);
  loaded.initialised = init != CUDA_ERROR_STUB_LIBRARY;
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    loaded.failure = stub_loaded();
    return;
  }
  if (init == CUDA_ERROR_NO_DEVICE) {
    loaded.failure = Error(ErrorKind::no_device, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)",
                           "cuInit", init, "CUDA_ERROR_NO_DEVICE");
    return;
  }
  try {
    check(init, "cuInit", "initialising the CUDA driver");
    int count = 0;
    check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0)
      loaded.failure = Error(ErrorKind::no_device, "no CUDA device (the driver sees none)");
  } catch (const Error& error) {
    loaded.failure = error;
  }
}

const LoadedDriver& loaded_state() {
  static const LoadedDriver state = [] {
    LoadedDriver loaded;
    load(loaded);
    return loaded;
  }();
  return state;
}

}  // namespace

const DriverApi& driver() {
  const LoadedDriver& loaded = loaded_state();
  if (loaded.failure) [[unlikely]]
    throw *loaded.failure;
  return loaded.api;
}

const DriverApi* loaded_driver() noexcept {
  const LoadedDriver& loaded = loaded_state();
  return loaded.initialised && loaded.api.cuGetErrorName ? &loaded.api : nullptr;
}

}  // namespace detail

DriverStatus driver_status() {
  DriverStatus status;
  try {
    const detail::DriverApi& api = detail::driver();
    status.version = api.version;
    check(api.cuDeviceGetCount(&status.device_count), "cuDeviceGetCount");
    status.usable = status.device_count > 0;
  } catch (const Error& error) {
    if (const detail::DriverApi* api = detail::loaded_driver()) api->cuDriverGetVersion(&status.version);
    status.problem = error.what();
  }
  return status;
}

std::string format_cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace ptxrt
