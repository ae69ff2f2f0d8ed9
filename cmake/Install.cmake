# `cmake --install build --prefix P`: the library, the public headers under P/include/ptxrt, the
# CLI when it is built, the CMake package (find_package(ptxrt) -> ptxrt::ptxrt) and ptxrt.pc for
# pkg-config. The builtin kernels are inside the library, so nothing else is needed at run time.
include(CMakePackageConfigHelpers)

set(PTXRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ptxrt)

install(TARGETS ptxrt EXPORT ptxrtTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# include/ptxrt/mpi.hpp belongs to ptxrt::mpi: installed only with it.
set(PTXRT_HEADERS_LEFT_OUT "")
if(NOT TARGET ptxrt_mpi)
  set(PTXRT_HEADERS_LEFT_OUT PATTERN mpi.hpp EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ptxrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        ${PTXRT_HEADERS_LEFT_OUT})
if(TARGET ptxrt_cli)
  install(TARGETS ptxrt_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT ptxrtTargets NAMESPACE ptxrt:: DESTINATION ${PTXRT_CMAKE_DIR})
# ptxrt::mpi (cmake/Mpi.cmake), when built: an export set of its own, which ptxrtConfig.cmake
# loads for find_package(ptxrt COMPONENTS mpi).
if(TARGET ptxrt_mpi)
  install(TARGETS ptxrt_mpi EXPORT ptxrtMpiTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT ptxrtMpiTargets NAMESPACE ptxrt:: DESTINATION ${PTXRT_CMAKE_DIR})
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ptxrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ptxrtConfig.cmake INSTALL_DESTINATION ${PTXRT_CMAKE_DIR})
# A 0.x release may change its API with each minor version.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ptxrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ptxrtConfig.cmake ${PROJECT_BINARY_DIR}/ptxrtConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/ptxrtCudaTargets.cmake
        DESTINATION ${PTXRT_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own place, so `--prefix` at install time
# is honoured. A static libptxrt lists what it needs on Libs, a shared one on Libs.private.
file(RELATIVE_PATH PTXRT_PC_PREFIX_FROM_PCDIR
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(PTXRT_PC_DEPENDENCIES
    "${CUDA_nvrtc_LIBRARY} ${CUDA_nvJitLink_LIBRARY} ${CUDA_nvfatbin_LIBRARY} ${CMAKE_THREAD_LIBS_INIT}")
foreach(library IN LISTS CMAKE_DL_LIBS)
  string(APPEND PTXRT_PC_DEPENDENCIES " -l${library}")
endforeach()
if(BUILD_SHARED_LIBS)
  set(PTXRT_PC_LIBS "")
  set(PTXRT_PC_LIBS_PRIVATE "${PTXRT_PC_DEPENDENCIES}")
else()
  set(PTXRT_PC_LIBS "${PTXRT_PC_DEPENDENCIES}")
  set(PTXRT_PC_LIBS_PRIVATE "")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/ptxrt.pc.in ${PROJECT_BINARY_DIR}/ptxrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ptxrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
