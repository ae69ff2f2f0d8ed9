# ptxrt_sort_bench (tests/bench/sort_bench.cpp): the sorts of ptx_src/ against CUB's radix sort in
# one process. CUB's host-side dispatch needs nvcc, so its half (cub_radix_sort.cu) is compiled by
# the toolkit's nvcc into an object of its own, without enabling CMake's CUDA language for the
# project. Not part of `all` (a CUB compile takes minutes on a small machine): build it by name.
# PTXRT_SORT_BENCH_ARCH: the GPU architecture of CUB's kernels (90: the H100 and H200; PTX for
# compute_90 rides along for newer GPUs).
set(PTXRT_SORT_BENCH_ARCH 90 CACHE STRING "Compute capability of ptxrt_sort_bench's CUB kernels")
set(PTXRT_CUB_SORT_OBJECT ${CMAKE_CURRENT_BINARY_DIR}/cub_radix_sort.o)
add_custom_command(
  OUTPUT ${PTXRT_CUB_SORT_OBJECT}
  COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -ccbin ${CMAKE_CXX_COMPILER} -O3 -std=c++17
          -gencode arch=compute_${PTXRT_SORT_BENCH_ARCH},code=[sm_${PTXRT_SORT_BENCH_ARCH},compute_${PTXRT_SORT_BENCH_ARCH}]
          -Xcompiler -fPIC -c ${PROJECT_SOURCE_DIR}/tests/bench/cub_radix_sort.cu
          -o ${PTXRT_CUB_SORT_OBJECT}
  DEPENDS ${PROJECT_SOURCE_DIR}/tests/bench/cub_radix_sort.cu
          ${PROJECT_SOURCE_DIR}/tests/bench/cub_radix_sort.hpp
  COMMENT "nvcc: CUB's radix sort for ptxrt_sort_bench"
  VERBATIM)
add_executable(ptxrt_sort_bench EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/tests/bench/sort_bench.cpp
               ${PTXRT_CUB_SORT_OBJECT})
target_link_libraries(ptxrt_sort_bench PRIVATE ptxrt ptxrt_apps CLI11::CLI11 CUDA::cudart_static)
