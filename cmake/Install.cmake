# `cmake --install build --prefix P`: each component's library, its public headers under
# P/include/ptxrt (ptxrt/<component>.hpp and ptxrt/<component>/), the CLI when it is built, the
# CMake package (find_package(ptxrt COMPONENTS ...) -> ptxrt::core, ptxrt::tune, ptxrt::blas,
# ptxrt::mpi, and ptxrt::ptxrt for core, tune and blas together) and one pkg-config file per
# component. The kernels a component needs are inside it, so nothing else is needed at run time.
include(CMakePackageConfigHelpers)

set(PTXRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ptxrt)
set(PTXRT_COMPONENTS core tune blas)
if(TARGET ptxrt_mpi)
  list(APPEND PTXRT_COMPONENTS mpi)
endif()

# One export set per component (ptxrtCoreTargets.cmake, ...), which ptxrtConfig.cmake loads for
# the components asked for; ptxrt::ptxrt in ptxrtTargets.cmake.
foreach(component IN LISTS PTXRT_COMPONENTS)
  string(SUBSTRING ${component} 0 1 first)
  string(TOUPPER ${first} first)
  string(SUBSTRING ${component} 1 -1 rest)
  install(TARGETS ptxrt_${component} EXPORT ptxrt${first}${rest}Targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT ptxrt${first}${rest}Targets NAMESPACE ptxrt:: DESTINATION ${PTXRT_CMAKE_DIR})
  if(component STREQUAL "mpi")
    install(FILES ${PROJECT_SOURCE_DIR}/include/ptxrt/mpi.hpp
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxrt)
  else()
    install(FILES ${PROJECT_SOURCE_DIR}/include/ptxrt/${component}.hpp
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxrt)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ptxrt/${component}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxrt)
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/include/ptxrt/export.hpp ${PROJECT_SOURCE_DIR}/include/ptxrt/ptxrt.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxrt)
install(TARGETS ptxrt EXPORT ptxrtTargets)
install(EXPORT ptxrtTargets NAMESPACE ptxrt:: DESTINATION ${PTXRT_CMAKE_DIR})
if(TARGET ptxrt_cli)
  install(TARGETS ptxrt_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ptxrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ptxrtConfig.cmake INSTALL_DESTINATION ${PTXRT_CMAKE_DIR})
# A 0.x release may change its API with each minor version.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ptxrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ptxrtConfig.cmake ${PROJECT_BINARY_DIR}/ptxrtConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/ptxrtCudaTargets.cmake
        DESTINATION ${PTXRT_CMAKE_DIR})

# pkg-config: ptxrt-core.pc, ptxrt-tune.pc (Requires: ptxrt-core), ptxrt-blas.pc (Requires:
# ptxrt-tune) and ptxrt.pc for all three. The prefix is written when installing, so that
# `--prefix` then is honoured and the flags are plain paths; a tree moved later is found with
# `pkg-config --define-prefix`. The toolkit's folders are variables (cudaincludedir, cudalibdir)
# that `pkg-config --define-variable` can point elsewhere. A static library lists what it needs
# on Libs, a shared one on Libs.private.
set(PTXRT_PC_CUDA_LIBRARY_DIR ${CUDAToolkit_LIBRARY_DIR})
set(PTXRT_PC_CORE_DEPENDENCIES "-L\${cudalibdir}")
foreach(library IN ITEMS ${CUDA_nvrtc_LIBRARY} ${CUDA_nvJitLink_LIBRARY} ${CUDA_nvfatbin_LIBRARY})
  get_filename_component(name ${library} NAME_WE)
  string(REGEX REPLACE "^lib" "" name ${name})
  string(APPEND PTXRT_PC_CORE_DEPENDENCIES " -l${name}")
endforeach()
string(APPEND PTXRT_PC_CORE_DEPENDENCIES " -pthread")
foreach(library IN LISTS CMAKE_DL_LIBS)
  string(APPEND PTXRT_PC_CORE_DEPENDENCIES " -l${library}")
endforeach()

function(ptxrt_write_pc name description requires libs dependencies)
  if(BUILD_SHARED_LIBS)
    set(PTXRT_PC_LIBS "${libs}")
    set(PTXRT_PC_LIBS_PRIVATE "${dependencies}")
  else()
    set(PTXRT_PC_LIBS "${libs} ${dependencies}")
    set(PTXRT_PC_LIBS_PRIVATE "")
  endif()
  set(PTXRT_PC_NAME ${name})
  set(PTXRT_PC_DESCRIPTION ${description})
  set(PTXRT_PC_REQUIRES "${requires}")
  set(configured ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc.in)
  set(installed ${PROJECT_BINARY_DIR}/pkgconfig/installed/${name}.pc)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/ptxrt.pc.in ${configured} @ONLY)
  install(CODE "
    file(READ \"${configured}\" text)
    string(REPLACE \"%PTXRT_INSTALL_PREFIX%\" \"\${CMAKE_INSTALL_PREFIX}\" text \"\${text}\")
    file(WRITE \"${installed}\" \"\${text}\")")
  install(FILES ${installed} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

ptxrt_write_pc(ptxrt-core "ptxrt::core: ${PROJECT_DESCRIPTION}" ""
               "-L\${libdir} -lptxrt_core" "${PTXRT_PC_CORE_DEPENDENCIES}")
ptxrt_write_pc(ptxrt-tune "ptxrt::tune: tuning spaces, the tuner and its database" "ptxrt-core"
               "-L\${libdir} -lptxrt_tune" "")
ptxrt_write_pc(ptxrt-blas "ptxrt::blas: SGEMM" "ptxrt-tune" "-L\${libdir} -lptxrt_blas" "")
ptxrt_write_pc(ptxrt "${PROJECT_DESCRIPTION}: core, tune and blas" "ptxrt-blas" "" "")
