#!/usr/bin/env bash
# The tests: set up, build with warnings as errors, and run every test with CTest. GPU tests
# report "skipped" where no GPU is present. The builtin-kernel sweep compiles each constant value
# and each architecture; pass --exhaustive for its full product instead and the spill check of
# every listed sgemm config (CTest label `exhaustive`, minutes of NVRTC), and for ptxrt built as a
# shared subproject, whose configure step alone runs otherwise (label `subproject-build`, the
# library compiled a second time); CI runs both. Pass
# --sanitizers to also build and run the CPU tests under AddressSanitizer +
# UndefinedBehaviorSanitizer and under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=false
skipped_labels=(--label-exclude 'exhaustive|subproject-build')
for argument in "$@"; do
  case "$argument" in
    --sanitizers) sanitizers=true ;;
    --exhaustive) skipped_labels=(--label-exclude sampled) ;;  # the full product holds the sample
    *) echo "usage: scripts/test.sh [--sanitizers] [--exhaustive]" >&2; exit 2 ;;
  esac
done

scripts/setup.sh
jobs=$(nproc)

run_main_suite() {
  scripts/configure.sh  # as scripts/demo.sh configures it: this builds only what the demo did not
  cmake --build build -j "$jobs"
  # One case more than cores: many cases wait on a child process, a timeout or a lock with their
  # core idle (on two cores the suite took two thirds of its -j2 time at -j3, in as many CPU
  # seconds).
  (cd build && ctest -j "$((jobs + 1))" --timeout 600 --output-on-failure "${skipped_labels[@]}")
}

if ! $sanitizers; then
  run_main_suite
  exit 0
fi

# Only what the CPU tests need, in build folders of their own (a sanitizer instruments the whole
# build). halt_on_error: a report fails the test that caused it.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
# ignore_noninstrumented_modules: what libstdc++ (not instrumented) frees is not taken for a write;
# docs/threading.md says why (one exception shared by a single flight's waiters).
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1

# AddressSanitizer + UBSan, in the clang build that scripts/fuzz.sh builds its fuzz targets in
# (their components are built once, for both): the CPU test program and the CLI it runs, no MPI,
# benchmarks, GPU tests or examples. Every CPU test but the sweeps of the builtin kernels (labels
# `sampled` and `exhaustive`) and the other cases labelled `nvrtc`, which are NVRTC's time (not
# instrumented), the device-object mutation loops (`mutants`) and the strategy cases that replay
# dozens of tunes (`replays`, tests/cpu_case_properties.cmake); all of them run in the whole suite
# below. One case more than cores, as in the whole suite.
scripts/setup.sh --fuzz
scripts/configure.sh --asan
cmake --build build-asan -j "$jobs" --target ptxrt_cpu_tests
(cd build-asan && ctest -j "$((jobs + 1))" --timeout 600 --output-on-failure -R '^cpu:' \
  --label-exclude 'sampled|exhaustive|nvrtc|mutants|replays')

# ThreadSanitizer: the caches and their single flight, and the tuner's compile pool and measurers,
# where the threads are.
concurrency_tests='^cpu:(32 threads asking|factories for different keys|a throwing factory'
concurrency_tests+='|find (returns|does not wait)|values lists|a factory may return|clear forgets'
concurrency_tests+='|threads sharing one DiskCache|processes storing and loading'
concurrency_tests+='|threads of one process asking load_or_compile|processes missing one entry'
concurrency_tests+='|8 threads asking|threads of a second Jit|Jit::library'
concurrency_tests+='|several measurers|two measurers|a tune on two measurers|with two measurers'
concurrency_tests+='|a measurer.s throw|a config handed over after|parallel compilation hands)'
# The test program and what it needs, no more, at -O1 with line tables (as build-asan).
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DPTXRT_WERROR=ON -DPTXRT_SANITIZE=thread \
  -DPTXRT_MPI=OFF -DPTXRT_CONCURRENCY_TESTS_ONLY=ON >/dev/null
cmake --build build-tsan -j "$jobs" --target ptxrt_cpu_tests
# That build holds the source files of these tests alone (tests/CMakeLists.txt): one named here
# but kept elsewhere would not run at all.
case_names() { (cd "$1" && ctest -N -R "$concurrency_tests" | sed -n 's/^ *Test *#[0-9]*: //p' | sort); }
missing=$(comm -23 <(case_names build-asan) <(case_names build-tsan))
[ -z "$missing" ] || { printf 'not in the ThreadSanitizer build (PTXRT_CONCURRENCY_TESTS_ONLY):\n%s\n' \
  "$missing" >&2; exit 1; }
(cd build-tsan && ctest -j "$jobs" --timeout 600 --output-on-failure -R "$concurrency_tests")

# The whole suite last, so that its CTest summary closes the log.
run_main_suite
