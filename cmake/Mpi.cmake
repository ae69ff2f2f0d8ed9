# MPI: the optional component ptxrt::mpi (include/ptxrt/mpi.hpp, runtime/mpi/) and the CLI's --mpi
# (tools/mpi/). PTXRT_MPI is on where CMake finds an MPI (Debian: libopenmpi-dev, which
# scripts/setup.sh installs); off, nothing needs MPI and `--mpi` says that this ptxrt was built
# without it. The library uses MPI's C API only: MPI_CXX_SKIP_MPICXX keeps the old C++ bindings'
# header out.
set(MPI_CXX_SKIP_MPICXX ON)
if(NOT DEFINED PTXRT_MPI)
  find_package(MPI COMPONENTS CXX QUIET)
endif()
option(PTXRT_MPI "Build ptxrt::mpi and the CLI's --mpi (needs an MPI)" ${MPI_CXX_FOUND})

if(PTXRT_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)
  ptxrt_add_component(mpi
    runtime/mpi/rank_exchange.cpp runtime/mpi/communicator.cpp
    runtime/mpi/distributed_closest_pair.cpp runtime/mpi/distributed_tune.cpp
    runtime/mpi/host_slab.cpp runtime/mpi/session.cpp runtime/mpi/slab_split.cpp
    runtime/mpi/tune_report_exchange.cpp)
  target_link_libraries(ptxrt_mpi PUBLIC ptxrt_tune MPI::MPI_CXX PRIVATE $<BUILD_INTERFACE:ptxrt_json>)
endif()

if(TARGET ptxrt_cli)
  if(PTXRT_MPI)
    target_sources(ptxrt_cli PRIVATE tools/mpi/ranks.cpp tools/mpi/tune_ranks.cpp
                                     tools/mpi/closest_pair_ranks.cpp
                                     tools/mpi/closest_pair_slabs.cpp)
    target_link_libraries(ptxrt_cli PRIVATE ptxrt_mpi)
  else()
    target_sources(ptxrt_cli PRIVATE tools/mpi/without_mpi.cpp)
  endif()
endif()
