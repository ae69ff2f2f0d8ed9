// Internal: the CUDA driver's entry points, resolved at run time. libcuda is never linked, so the
// library loads (and compiles, and reports resources) on machines with no driver at all.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

namespace ptxrt::detail {

// Each entry names the CUDA version whose ABI the header declares for it, and is asked of
// cuGetProcAddress at that version. Asking every entry at CUDA_VERSION would be wrong: the
// driver then hands out the newest variant, e.g. cuCtxSynchronize_v2(CUcontext) of CUDA 13.0 for
// the header's cuCtxSynchronize(void).
// Entry points every driver ptxrt supports provides; a missing one is a load error.
#define PTXRT_REQUIRED_DRIVER_FUNCTIONS(X) \
  X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000) \
  X(cuDeviceGetCount, 2000) X(cuDeviceGet, 2000) X(cuDeviceGetName, 2000) \
  X(cuDeviceGetAttribute, 2000) X(cuDeviceTotalMem, 3020) X(cuDevicePrimaryCtxRetain, 7000) \
  X(cuDevicePrimaryCtxRelease, 11000) X(cuCtxCreate, 12050) X(cuCtxDestroy, 4000) \
  X(cuCtxPushCurrent, 4000) X(cuCtxPopCurrent, 4000) X(cuCtxGetCurrent, 4000) \
  X(cuCtxSetCurrent, 4000) X(cuCtxSynchronize, 2000) X(cuCtxGetDevice, 2000) \
  X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemGetInfo, 3020) X(cuMemcpyHtoD, 3020) \
  X(cuMemcpyDtoH, 3020) X(cuMemcpyDtoD, 3020) X(cuMemcpyHtoDAsync, 3020) \
  X(cuMemcpyDtoHAsync, 3020) X(cuMemcpyDtoDAsync, 3020) X(cuMemsetD8, 3020) \
  X(cuMemsetD8Async, 3020) X(cuMemsetD32, 3020) X(cuMemsetD32Async, 3020) \
  X(cuMemHostAlloc, 2020) X(cuMemFreeHost, 2000) X(cuStreamCreate, 2000) \
  X(cuStreamDestroy, 4000) X(cuStreamSynchronize, 2000) X(cuStreamQuery, 2000) \
  X(cuEventCreate, 2000) X(cuEventDestroy, 4000) X(cuEventRecord, 2000) \
  X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 12080) X(cuModuleLoadDataEx, 2010) \
  X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000) X(cuModuleGetGlobal, 3020) \
  X(cuFuncGetAttribute, 2020) X(cuFuncSetAttribute, 9000) X(cuLaunchKernel, 4000) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) X(cuPointerGetAttribute, 4000) \
  PTXRT_LAUNCH_DRIVER_FUNCTIONS(X) PTXRT_GRAPH_DRIVER_FUNCTIONS(X) \
  PTXRT_MEMORY_KIND_DRIVER_FUNCTIONS(X)

// Launch attributes (cuLaunchKernelEx) and what their checks ask.
#define PTXRT_LAUNCH_DRIVER_FUNCTIONS(X) \
  X(cuLaunchKernelEx, 11060) X(cuOccupancyMaxActiveClusters, 11070) \
  X(cuCtxGetStreamPriorityRange, 5050) X(cuStreamWaitEvent, 3020)

// Stream capture, graphs and executable graphs.
#define PTXRT_GRAPH_DRIVER_FUNCTIONS(X) \
  X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000) X(cuStreamIsCapturing, 10000) \
  X(cuGraphCreate, 10000) X(cuGraphDestroy, 10000) X(cuGraphAddKernelNode, 12000) \
  X(cuGraphKernelNodeSetAttribute, 11000) X(cuGraphAddMemcpyNode, 10000) \
  X(cuGraphAddMemsetNode, 10000) X(cuGraphGetNodes, 10000) X(cuGraphGetEdges, 12030) \
  X(cuGraphNodeGetType, 10000) X(cuGraphInstantiateWithFlags, 11040) \
  X(cuGraphExecDestroy, 10000) X(cuGraphLaunch, 10000) X(cuGraphExecKernelNodeSetParams, 12000) \
  X(cuGraphExecUpdate, 12000)

// Managed, stream-ordered and peer memory, and copies between any two kinds. CUDA 12.2 gave
// cuMemPrefetchAsync and cuMemAdvise a CUmemLocation (the header's, and CUDA 13.0's only, form).
#define PTXRT_MEMORY_KIND_DRIVER_FUNCTIONS(X) \
  X(cuMemAllocManaged, 6000) X(cuMemPrefetchAsync, 12020) X(cuMemAdvise, 12020) \
  X(cuMemAllocFromPoolAsync, 11020) X(cuMemFreeAsync, 11020) X(cuMemPoolCreate, 11020) \
  X(cuMemPoolDestroy, 11020) X(cuMemPoolSetAttribute, 11020) X(cuMemPoolTrimTo, 11020) \
  X(cuDeviceGetDefaultMemPool, 11020) X(cuMemcpyAsync, 4000) X(cuPointerGetAttributes, 7000) \
  X(cuDeviceCanAccessPeer, 4000) X(cuCtxEnablePeerAccess, 4000) X(cuMemcpyPeerAsync, 4000)

// Entry points newer drivers add; null where the driver lacks them, and ptxrt does without.
#define PTXRT_OPTIONAL_DRIVER_FUNCTIONS(X) \
  X(cuModuleGetFunctionCount, 12040) X(cuModuleEnumerateFunctions, 12040) \
  X(cuFuncGetName, 12030) X(cuLibraryLoadData, 12000) X(cuLibraryUnload, 12000) \
  X(cuLibraryGetKernel, 12000) X(cuKernelGetFunction, 12000) X(cuLibraryGetGlobal, 12000)

// The oldest driver that has every required entry point (cuEventElapsedTime_v2 came in 12.8).
inline constexpr int minimum_driver_version = 12080;

// cuGetProcAddress fails (CUDA_ERROR_INVALID_VALUE) when asked for an ABI newer than the driver,
// and an application's compute-sanitizer run reports every such failure. An entry of a CUDA newer
// than the minimum must be asked for only of a driver that has it (test api.version first).
#define PTXRT_ASSERT_NOT_NEWER_THAN_MINIMUM(name, version)    \
  static_assert(version <= minimum_driver_version, #name      \
                " is newer than the minimum driver: ask for " \
                "it only of a driver that has it");
PTXRT_REQUIRED_DRIVER_FUNCTIONS(PTXRT_ASSERT_NOT_NEWER_THAN_MINIMUM)
PTXRT_OPTIONAL_DRIVER_FUNCTIONS(PTXRT_ASSERT_NOT_NEWER_THAN_MINIMUM)
#undef PTXRT_ASSERT_NOT_NEWER_THAN_MINIMUM

struct DriverApi {
#define PTXRT_DECLARE_ENTRY(name, version) PFN_##name##_v##version name = nullptr;
  PTXRT_REQUIRED_DRIVER_FUNCTIONS(PTXRT_DECLARE_ENTRY)
  PTXRT_OPTIONAL_DRIVER_FUNCTIONS(PTXRT_DECLARE_ENTRY)
#undef PTXRT_DECLARE_ENTRY
  int version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
};

// The loaded driver, cuInit already called. Loads on first use (thread-safe); when there is no
// usable driver or no device, every call throws the same Error (kind no_driver / no_device).
const DriverApi& driver();

// The driver if libcuda loaded and initialised, else nullptr; for cuGetErrorName on the error
// path, which must work even while reporting "no device".
const DriverApi* loaded_driver() noexcept;

}  // namespace ptxrt::detail
