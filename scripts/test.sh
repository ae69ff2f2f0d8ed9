#!/usr/bin/env bash
# The tests: set up, build with warnings as errors, and run every test with CTest. GPU tests
# report "skipped" where no GPU is present. The builtin-kernel sweep compiles each constant value
# and each architecture; pass --exhaustive for its full product too (CTest label `exhaustive`,
# minutes of NVRTC; CI runs it). Pass --sanitizers to also build and run the CPU tests under
# AddressSanitizer + UndefinedBehaviorSanitizer and under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=false
skipped_labels=(--label-exclude exhaustive)
for argument in "$@"; do
  case "$argument" in
    --sanitizers) sanitizers=true ;;
    --exhaustive) skipped_labels=() ;;
    *) echo "usage: scripts/test.sh [--sanitizers] [--exhaustive]" >&2; exit 2 ;;
  esac
done

scripts/setup.sh
jobs=$(nproc)

run_main_suite() {
  scripts/configure.sh  # as scripts/demo.sh configures it: this builds only what the demo did not
  cmake --build build -j "$jobs"
  (cd build && ctest -j "$jobs" --timeout 600 --output-on-failure "${skipped_labels[@]}")
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
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

sanitized_build() {  # folder, sanitizers, then the targets that its tests run
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTXRT_WERROR=ON \
    -DPTXRT_SANITIZE="$2" >/dev/null
  cmake --build "$1" -j "$jobs" --target "${@:3}"
}

# AddressSanitizer + UBSan: every CPU test but the sweeps compiling every kernel for every arch,
# which are NVRTC's time (not instrumented) and run in the whole suite below.
sanitized_build build-asan address,undefined ptxrt_cpu_tests ptxrt_jit_cache_bench \
  ptxrt_compile_bench ptxrt_strategy_replay
(cd build-asan && ctest -j "$jobs" --timeout 600 --output-on-failure -R '^cpu:' \
  -E 'every builtin kernel compiles for every constant value')

# ThreadSanitizer: the caches and their single flight, where the threads are.
concurrency_tests='^cpu:(32 threads asking|factories for different keys|a throwing factory'
concurrency_tests+='|find (returns|does not wait)|values lists|a factory may return|clear forgets'
concurrency_tests+='|threads sharing one DiskCache|processes storing and loading'
concurrency_tests+='|threads of one process asking load_or_compile|processes missing one entry'
concurrency_tests+='|8 threads asking|threads of a second Jit|Jit::library)'
sanitized_build build-tsan thread ptxrt_cpu_tests
(cd build-tsan && ctest -j "$jobs" --timeout 600 --output-on-failure -R "$concurrency_tests")

# The whole suite last, so that its CTest summary closes the log.
run_main_suite
