// Internal: the CUDA driver's entry points, resolved at run time. libcuda is never linked, so the
// library loads (and compiles, and reports resources) on machines with no driver at all.
#pragma once

#include <cuda.h>

namespace ptxrt::detail {

// Entry points every driver ptxrt supports provides; a missing one is a load error.
#define PTXRT_REQUIRED_DRIVER_FUNCTIONS(X)                                                       \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)      \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                  \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxCreate) X(cuCtxDestroy)        \
  X(cuCtxPushCurrent) X(cuCtxPopCurrent) X(cuCtxGetCurrent) X(cuCtxSetCurrent)                   \
  X(cuCtxSynchronize) X(cuCtxGetDevice) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo)               \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)      \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemsetD32) X(cuMemsetD32Async)       \
  X(cuMemHostAlloc) X(cuMemFreeHost) X(cuStreamCreate) X(cuStreamDestroy)                        \
  X(cuStreamSynchronize) X(cuStreamQuery) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)    \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuModuleLoadDataEx) X(cuModuleUnload)            \
  X(cuModuleGetFunction) X(cuModuleGetGlobal) X(cuFuncGetAttribute) X(cuFuncSetAttribute)        \
  X(cuLaunchKernel) X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuPointerGetAttribute)

// Entry points newer drivers add; null where the driver lacks them, and ptxrt does without.
#define PTXRT_OPTIONAL_DRIVER_FUNCTIONS(X)                                                  \
  X(cuFuncGetParamInfo) X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions)           \
  X(cuFuncGetName) X(cuLibraryLoadData) X(cuLibraryUnload) X(cuLibraryGetKernel)            \
  X(cuKernelGetFunction) X(cuLibraryGetGlobal)

struct DriverApi {
#define PTXRT_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  PTXRT_REQUIRED_DRIVER_FUNCTIONS(PTXRT_DECLARE_ENTRY)
  PTXRT_OPTIONAL_DRIVER_FUNCTIONS(PTXRT_DECLARE_ENTRY)
#undef PTXRT_DECLARE_ENTRY
  int version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
};

// The loaded driver, cuInit already called. Loads on first use (thread-safe); when there is no
// usable driver or no device, every call throws the same Error (kind no_driver / no_device).
const DriverApi& driver();

// Like driver(), but only requires that libcuda loaded and initialised; for cuGetErrorName from
// the error path, which must work even while reporting "no device".
const DriverApi* loaded_driver() noexcept;

}  // namespace ptxrt::detail
