# The parts of the CUDA toolkit that ptxrt uses, as targets: its headers, and NVRTC by its file.
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
