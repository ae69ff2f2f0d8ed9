# ptxrt_json: nlohmann-json for the library's inside (the tuning database) and the CLI. An
# installed nlohmann_json 3.10+ when there is one, else the copy in third_party/, so that the
# library needs nothing installed but the CUDA toolkit. No public header uses it, and the library
# links it only inside the build tree: neither an installed ptxrt nor its users need it.
find_package(nlohmann_json 3.10 CONFIG QUIET)
add_library(ptxrt_json INTERFACE)
if(nlohmann_json_FOUND)
  target_link_libraries(ptxrt_json INTERFACE nlohmann_json::nlohmann_json)
else()
  message(STATUS "ptxrt: no installed nlohmann_json; using third_party/nlohmann_json (3.11.2)")
  target_include_directories(ptxrt_json SYSTEM INTERFACE
    ${PROJECT_SOURCE_DIR}/third_party/nlohmann_json/include)
endif()
