# Included by CTest after the CPU test cases are discovered (TEST_INCLUDE_FILES of tests/).
# The cases that run processes, threads or compiles at once ask CTest for two processors, so that
# ctest -j does not run another case beside them on a 2-core machine.
set(cases_in_parallel
    "processes storing and loading one key at once"
    "processes missing one entry at once"
    "Jits of several processes wanting one kernel at once"
    "cache warms started at once"
    "8 threads asking for 3 specializations at once"
    "two processes recording into one database at once"
    "a stand-in measurer drives a compiled problem through the tuner"
    "ptxrt [a-z]+ (--lto )?--link ends cleanly on every mutant")
list(JOIN cases_in_parallel "|" cases_in_parallel)
# The cases whose time is NVRTC's, compiling many kernels through a path that other cases take
# too (label `nvrtc`): a sanitized build instruments none of that time, so it leaves them out.
set(nvrtc_bound_cases
    "the C standard headers kernel files include compile under NVRTC"
    "the C\\+\\+ standard headers kernel files include compile under NVRTC")
list(JOIN nvrtc_bound_cases "|" nvrtc_bound_cases)
# The mutation loops run the CLI on hundreds of damaged device objects (label `mutants`): under a
# sanitizer each run costs seconds, and the readers they drive are fuzzed under AddressSanitizer
# (fuzz_device_object) and tested case by case, so a sanitized build leaves them out too.
set(mutant_loop_cases "ptxrt [a-z]+ (--lto )?--link ends cleanly on every mutant")
# The strategy cases that replay dozens of whole tunes for their statistics (label `replays`):
# under AddressSanitizer each takes half a minute, and the cases that replay one tune run the same
# code there.
set(replay_statistics_cases
    "the model strategy comes within 3 % of the best after timing a tenth of a space"
    "the model strategy orders better than the enumeration and a random order"
    "on the Kernel Tuner set's H100 tunes, the model comes within 3 % in 30 configs")
list(JOIN replay_statistics_cases "|" replay_statistics_cases)
# Those take seconds each: they start first (COST, as tests/CMakeLists.txt says).
foreach(test IN LISTS ptxrt_cpu_tests_TESTS)
  if(test MATCHES "^cpu: ?(${cases_in_parallel})")
    set_tests_properties("${test}" PROPERTIES PROCESSORS 2 COST 10)
  endif()
  if(test MATCHES "^cpu: ?(${nvrtc_bound_cases})")
    set_tests_properties("${test}" PROPERTIES LABELS nvrtc COST 10)
  endif()
  if(test MATCHES "^cpu: ?(${mutant_loop_cases})")
    set_tests_properties("${test}" PROPERTIES LABELS mutants COST 10)
  endif()
  if(test MATCHES "^cpu: ?(${replay_statistics_cases})")
    set_tests_properties("${test}" PROPERTIES LABELS replays COST 10)
  endif()
endforeach()
