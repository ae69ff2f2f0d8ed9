# The parts of the CUDA toolkit that ptxrt uses, as targets: its headers, and NVRTC, nvJitLink
# (linking several device objects) and nvFatbin (multi-arch binaries) by their files.
# CUDA::toolkit and CUDA::nvrtc would also link the driver stub (libcuda.so), and ptxrt must load
# on machines without a driver: it opens libcuda.so.1 at run time. Debian's GCC links with
# --as-needed, which would drop the stub, but not under -fsanitize, and then every executable
# would need libcuda.so.1 just to start. Used by the build and by the installed package alike,
# after find_package(CUDAToolkit).
if(NOT TARGET ptxrt::cuda_headers)
  add_library(ptxrt::cuda_headers INTERFACE IMPORTED)
  set_target_properties(ptxrt::cuda_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
endif()
if(NOT TARGET ptxrt::nvrtc)
  add_library(ptxrt::nvrtc UNKNOWN IMPORTED)
  set_target_properties(ptxrt::nvrtc PROPERTIES IMPORTED_LOCATION "${CUDA_nvrtc_LIBRARY}")
endif()
# FindCUDAToolkit names these from CMake 3.26 (nvJitLink) and 3.30 (nvfatbin) on; the same cache
# variables are searched for here on older CMake. scripts/setup.sh adds nvFatbin to a toolkit
# assembled from pip wheels that lacks it.
find_library(CUDA_nvJitLink_LIBRARY nvJitLink HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
find_library(CUDA_nvfatbin_LIBRARY nvfatbin HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
if(NOT TARGET ptxrt::nvjitlink)
  add_library(ptxrt::nvjitlink UNKNOWN IMPORTED)
  set_target_properties(ptxrt::nvjitlink PROPERTIES IMPORTED_LOCATION "${CUDA_nvJitLink_LIBRARY}")
endif()
if(NOT TARGET ptxrt::nvfatbin)
  add_library(ptxrt::nvfatbin UNKNOWN IMPORTED)
  set_target_properties(ptxrt::nvfatbin PROPERTIES IMPORTED_LOCATION "${CUDA_nvfatbin_LIBRARY}")
endif()
