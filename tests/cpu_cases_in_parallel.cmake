# Included by CTest after the CPU test cases are discovered (TEST_INCLUDE_FILES of tests/): the
# cases that run processes, threads or compiles at once ask CTest for two processors, so that
# ctest -j does not run another case beside them on a 2-core machine.
set(cases_in_parallel
    "processes storing and loading one key at once"
    "processes missing one entry at once"
    "Jits of several processes wanting one kernel at once"
    "cache warms started at once"
    "8 threads asking for 3 specializations at once"
    "two processes recording into one database at once"
    "a stand-in measurer drives a compiled problem through the tuner")
list(JOIN cases_in_parallel "|" cases_in_parallel)
foreach(test IN LISTS ptxrt_cpu_tests_TESTS)
  if(test MATCHES "^cpu: ?(${cases_in_parallel})")
    set_tests_properties("${test}" PROPERTIES PROCESSORS 2)
  endif()
endforeach()
