#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan, fuzz-instrumented runtime,
# in build-asan/, which scripts/test.sh --sanitizers shares) and runs each for a bounded time from
# a scratch copy of its committed seed corpus, so that the corpus in git only changes by hand; as
# many targets at once as there are cores. Prints the executions per target and a summary; exits
# non-zero when any target crashed (its reproducer is left in the log folder: fix the reader, and
# keep the input as a CPU test case beside the reader's tests).
#   scripts/fuzz.sh [--time SECONDS] [TARGET...]     (default 30 s each, every target)
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=30
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) seconds="$2"; shift ;;
    fuzz_*) targets+=("$1") ;;
    *) echo "usage: scripts/fuzz.sh [--time SECONDS] [fuzz_TARGET...]" >&2; exit 2 ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_defines fuzz_disk_cache_entry fuzz_point_file
                                     fuzz_cubin_resources fuzz_ptxas_log fuzz_tuning_database
                                     fuzz_parameter_layout
                                     fuzz_device_object fuzz_kernel_problem fuzz_expression)

scripts/setup.sh --fuzz || exit 1
build=build-asan
scripts/configure.sh --asan || exit 1
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" || exit 1

binaries="$PWD/$build/tests/fuzz"
work="$build/fuzz-runs"
rm -rf "$work"
mkdir -p "$work"
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

fuzz() {  # target: its run, its log and its exit status in $work/target/
  local corpus="$work/$1/corpus"
  mkdir -p "$corpus"
  cp tests/fuzz/corpus/"$1"/* "$corpus"/ 2>/dev/null
  # -rss_limit_mb and -malloc_limit_mb: an input that makes a reader allocate gigabytes is a bug.
  (cd "$work/$1" && "$binaries/$1" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 corpus) >"$work/$1/fuzz.log" 2>&1
  echo $? >"$work/$1/status"
}

# A libFuzzer process keeps one core busy: as many targets at once as there are cores.
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz "$target" &
  running=$((running + 1))
done
wait

summary=()
failed=0
for target in "${targets[@]}"; do
  log="$work/$target/fuzz.log"
  rc=$(cat "$work/$target/status")
  executions=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
  coverage=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  if [ "$rc" = 0 ]; then
    summary+=("$target: ok, ${executions:-?} executions, ${coverage:-cov: ?}")
  else
    failed=1
    summary+=("$target: CRASHED (rc $rc); reproducer and log in $work/$target")
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5
  fi
done

echo "FUZZ SUMMARY (${seconds} s per target)"
printf '  %s\n' "${summary[@]}"
exit "$failed"
