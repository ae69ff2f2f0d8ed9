#!/usr/bin/env bash
# Builds Release and runs every GPU test and benchmark in one go, on a machine with a GPU and no
# package registry (CLI11, doctest and nlohmann-json must already be installed there). Prints a
# short summary last. Logs go to $OUT (when set: a GPU machine that collects that folder) or
# build-gpu/logs. The parts can be left out or added, to fit a run into a 10-minute slot:
#   scripts/gpu-check.sh [--no-tests|--gpu-tests-only] [--sanitize|--sanitize-all] [--no-bench] [--tune]
#                      [--mpi|--mpi-checks|--mpi-bench]
#                      [--bench-args "..."] [--sanitize-args "..."]
#   scripts/gpu-check.sh --asan [--asan-tests REGEX]
# --tune runs scripts/tune-check.sh on the same build afterwards; --mpi (--mpi-checks, --mpi-bench:
# one half) scripts/mpi-check.sh, which needs mpirun (MPIRUN) and a build with ptxrt::mpi.
# --asan runs the host side of the GPU paths under AddressSanitizer + UBSan instead (see below).
set -uo pipefail
cd "$(dirname "$0")/.."

sanitize_tests='^gpu:sanitize: ' ctest_filter=() tests=1 sanitize=0 bench=1 tune=0 bench_args="" sanitize_args=""
asan=0 asan_tests='^gpu:'
mpi_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=1 ;;
    --sanitize-all) sanitize=1 sanitize_tests='^gpu:' ;;
    --asan) asan=1 ;;
    --asan-tests) asan_tests="$2"; shift ;;  # a CTest regex: the longest cases alone get the whole call
    --no-tests) tests=0 ;;
    --gpu-tests-only) ctest_filter=(-R '^gpu:') ;;  # the CPU ones ran in CI
    --no-bench) bench=0 ;;
    --tune) tune=1 ;;
    --mpi) mpi_args=(all) ;;
    --mpi-checks) mpi_args=(--checks) ;;
    --mpi-bench) mpi_args=(--bench) ;;
    --bench-args) bench_args="$2"; shift ;;
    --sanitize-args) sanitize_args="$2"; shift ;;  # e.g. "--jobs 16 --deadline 480"
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

build=build-gpu
logs="${OUT:-$build/logs}"
mkdir -p "$logs"
summary=()
started=$(date +%s)

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4 \
  | sed 's/^/gpu: /' | tee "$logs/gpu.txt"

# --asan: the host side of the GPU paths under AddressSanitizer + UBSan, instead of the rest, in a
# build of its own with only what it runs, so that build and run fit one 10-minute call: every
# GPU test (CTest, several at once), the CLI's tune on every device, and where the build has
# ptxrt::mpi and mpirun is there, an MPI tune as scripts/mpi-check.sh runs one (sgemm, 2 ranks
# sharing GPU 0; at 1024³ and 40 configs, the default model strategy). The build's time varies
# with the machine (3.5 minutes on an H200 machine whose Release build took 1.5), so every step
# after it runs against one deadline, PTXRT_GPU_CHECK_SECONDS after the start (default 570): the
# tests stop two minutes before it, the tunes at it, and the summary says which step it cut.
# protect_shadow_gap=0 lets ASan's shadow memory coexist with the driver's mappings;
# allocator_may_return_null=1 keeps a refused huge allocation the bad_alloc the tests expect;
# leaks inside the driver, the toolkit and MPI are suppressed (scripts/lsan.supp). A process that
# reports writes its report to $logs/asan/report.PID, where the summary counts them: a tune
# worker's report shows there even though its tune goes on.
if [ "$asan" = 1 ]; then
  if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "SUMMARY: asan not run: nvidia-smi lists no GPU (on a machine without one, the CPU tests"
    echo "  run under the sanitizers with scripts/test.sh --sanitizers)"
    exit 1
  fi
  build=build-gpu-asan reports="$logs/asan"
  rm -rf "$reports" && mkdir -p "$reports"
  # Set for the build too: it lists the test cases by running the instrumented test binary.
  export ASAN_OPTIONS="protect_shadow_gap=0:allocator_may_return_null=1:detect_leaks=0:log_path=$reports/report"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/report"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
  if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DPTXRT_SANITIZE=address,undefined >"$logs/asan-configure.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" --target ptxrt_gpu_tests ptxrt_cli \
       ptxrt_launch_features_bench ptxrt_sgemm_bench >"$logs/asan-build.log" 2>&1; then
    built=$(( $(date +%s) - started ))
  else
    tail -n 40 "$logs/asan-configure.log" "$logs/asan-build.log"
    echo "SUMMARY: asan build FAILED"
    exit 1
  fi
  # LeakSanitizer stops the process to scan it (ptrace), which some containers forbid: there the
  # run goes on without the leak check, and the summary says so.
  leaks="leak check on"
  if ASAN_OPTIONS="${ASAN_OPTIONS%%:log_path=*}:detect_leaks=1" "$build/ptxrt" --help 2>&1 >/dev/null |
       grep -q 'LeakSanitizer has encountered a fatal error'; then
    leaks="leak check off: LeakSanitizer cannot run here"
  else
    ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=0/detect_leaks=1}
  fi
  deadline=$((started + ${PTXRT_GPU_CHECK_SECONDS:-570}))
  seconds_left() { local left=$((deadline - $(date +%s) - ${1:-0})); echo $((left > 1 ? left : 1)); }
  cut_note() { [ "$1" = 124 ] && echo " (stopped at the deadline)"; }
  tests_stop=$((deadline - 120))
  (cd "$build" && ctest -j 8 --timeout 300 --stop-time "$(date -d "@$tests_stop" +%H:%M:%S)" \
     --output-on-failure -R "$asan_tests") >"$logs/asan-ctest.log" 2>&1
  asan_rc=$?
  # CTest reports the tests still running at --stop-time as timed out, before their own 300 s:
  # those were cut, not failed.
  cut=0
  [ "$(date +%s)" -ge "$tests_stop" ] &&
    cut=$(sed -n 's/.*\*\*\*Timeout *\([0-9.]*\) sec.*/\1/p' "$logs/asan-ctest.log" |
          awk '$1 < 300 { n++ } END { print n + 0 }')
  grep -E "tests passed|\*\*\*Failed|Timeout|Exception" "$logs/asan-ctest.log" | tail -30
  total=$(sed -n 's/.* out of \([0-9]*\)$/\1/p' "$logs/asan-ctest.log" | tail -1)
  failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests* failed.*/\1/p' "$logs/asan-ctest.log" | tail -1)
  # CTest says "100% tests passed out of N" when none failed.
  grep -q '100% tests passed' "$logs/asan-ctest.log" && failed=${failed:-0}
  skipped=$(grep -c "(Skipped)" "$logs/asan-ctest.log")
  line="asan (build $built s, $leaks): gpu tests $(( ${total:-0} - ${failed:-0} - skipped )) passed,"
  failed_not_cut="?"
  [ -n "${failed:-}" ] && failed_not_cut=$((failed - cut))
  line+=" $failed_not_cut failed, $cut cut at the deadline, $skipped skipped of ${total:-?}"

  PTXRT_CACHE_DIR="$build/tune-cache" timeout "$(seconds_left 60)" "$build/ptxrt" tune matmul \
    --size 256 --devices all --db "$logs/asan-tune-db.json" --json \
    >"$logs/asan-tune.json" 2>"$logs/asan-tune.log"
  tune_rc=$?
  line+="; tune --devices all rc $tune_rc$(cut_note "$tune_rc")"
  [ "$tune_rc" = 0 ] || asan_rc=1

  mpirun_command=${MPIRUN:-mpirun}
  if grep -q '^PTXRT_MPI:BOOL=ON' "$build/CMakeCache.txt" && command -v "$mpirun_command" >/dev/null; then
    # Open MPI unloads its plugins in MPI_Finalize, and what they keep is then reported from
    # "<unknown module>" frames that no suppression can name: the ranks run without the leak
    # check (ASan's and UBSan's other checks stay on).
    ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} \
      OMPI_MCA_btl_vader_single_copy_mechanism=none PTXRT_CACHE_DIR="$build/tune-cache" \
      timeout "$(seconds_left)" "$mpirun_command" --allow-run-as-root --oversubscribe --bind-to none \
      -x ASAN_OPTIONS -x UBSAN_OPTIONS -x LSAN_OPTIONS -x PTXRT_CACHE_DIR -n 2 \
      "$build/ptxrt" tune sgemm --size 1024 --budget 40 --mpi \
      --db "$logs/asan-mpi-tune-db.json" --json >"$logs/asan-mpi-tune.json" 2>"$logs/asan-mpi-tune.log"
    mpi_rc=$?
    line+="; mpi tune rc $mpi_rc$(cut_note "$mpi_rc") (leak check off in the ranks)"
    [ "$mpi_rc" = 0 ] || asan_rc=1
  else
    line+="; mpi tune not run (no ptxrt::mpi in the build or no $mpirun_command)"
  fi

  report_count=$(cat "$reports"/report.* 2>/dev/null |
    grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:')
  shown=0
  for report in "$reports"/report.*; do
    [ -e "$report" ] && [ "$shown" -lt 5 ] || break
    echo "--- $report"; head -n 30 "$report"
    shown=$((shown + 1))
  done
  line+="; sanitizer reports $report_count (in $(ls "$reports" | wc -l) process logs, $reports)"
  [ "$report_count" = 0 ] || asan_rc=1
  echo
  echo "SUMMARY ($(( $(date +%s) - started )) s)"
  echo "  $line"
  exit "$asan_rc"
fi

# ptxrt_sort_bench is not part of `all` (its CUB half takes minutes to compile on a small machine),
# nor is ptxrt_launch_overhead_bench (no CTest case runs it).
if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$logs/configure.log" 2>&1 &&
   cmake --build "$build" -j "$(nproc)" --target all ptxrt_sort_bench ptxrt_launch_overhead_bench \
     >"$logs/build.log" 2>&1; then
  summary+=("build: ok ($(( $(date +%s) - started )) s)")
else
  tail -n 40 "$logs/configure.log" "$logs/build.log"
  echo "SUMMARY: build FAILED"
  exit 1
fi

ctest_rc=0
if [ "$tests" = 1 ]; then
  (cd "$build" && ctest -j 4 --timeout 300 --output-on-failure "${ctest_filter[@]}") >"$logs/ctest.log" 2>&1
  ctest_rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|Timeout|Skipped" "$logs/ctest.log" | grep -v "^\s*$" | tail -30
  summary+=("ctest: $(grep -E 'tests passed' "$logs/ctest.log" | tail -1) (rc $ctest_rc)")
  skipped=$(grep -c "(Skipped)" "$logs/ctest.log" || true)
  summary+=("ctest skipped: $skipped")
fi

# The examples (examples/), installed and built as a user would, must print their "ok" here.
if [ "$tests" = 1 ]; then
  PTXRT_REQUIRE_GPU=1 tests/package/check_package.sh install "$build" . "$build/package-gpu" \
    >"$logs/examples.log" 2>&1
  examples_rc=$?
  grep -E "_example: exit|check_package" "$logs/examples.log"
  summary+=("examples: rc $examples_rc, $(grep -c ': exit 0: .*: ok$' "$logs/examples.log") printed ok")
fi

# The sanitizer subset: tests/gpu/sanitize_tests.cpp runs every kernel family at small sizes, in
# minutes. --sanitize-all runs every GPU test but those that fail on purpose: a kernel that faults
# (their names say "fault"; a planted faulting tune config among them) or a call the driver
# refuses ("the driver refuses"), the runner's default exclusion. API errors are reported.
sanitize_rc=0
if [ "$sanitize" = 1 ]; then
  scripts/sanitize_gpu_tests.py "$build" "$logs" --regex "$sanitize_tests" $sanitize_args \
    | tee "$logs/sanitizer.txt"
  sanitize_rc=${PIPESTATUS[0]}
  while read -r line; do summary+=("$line"); done < "$logs/sanitizer.txt"
fi

# Each benchmark prints ratios against a peer measured in the same run.
run_bench() {  # name, command...
  local name=$1
  shift
  "$@" >"$logs/bench-$name.txt" 2>&1
  summary+=("bench $name: rc $?")
  cat "$logs/bench-$name.txt"
}
if [ "$bench" = 1 ]; then
  run_bench kernels "$build/ptxrt" bench $bench_args
  run_bench jit-cache "$build/tests/ptxrt_jit_cache_bench"
  run_bench compile "$build/tests/ptxrt_compile_bench"
  run_bench launch "$build/tests/ptxrt_launch_overhead_bench"
  run_bench launch-features "$build/tests/ptxrt_launch_features_bench"
  run_bench sgemm "$build/tests/ptxrt_sgemm_bench"
  run_bench sgemm-shapes "$build/ptxrt" bench sgemm
  run_bench sort "$build/tests/ptxrt_sort_bench"
  run_bench closest-pair "$build/ptxrt" closest-pair --bench
  run_bench closest-pair-pinned "$build/ptxrt" closest-pair --n 10000000 --from pinned --repeat 3
  # Against the same work on one GPU: 1.00x where only one is visible. The pageable synchronous
  # runs are the transfers before pinned staging, for the upload rate and end-to-end time.
  run_bench multi-gpu-matmul "$build/ptxrt" multi-gpu matmul --n 8192
  run_bench multi-gpu-matmul-pageable "$build/ptxrt" multi-gpu matmul --n 8192 \
    --host-memory pageable --transfers synchronous
  run_bench multi-gpu-closest-pair "$build/ptxrt" multi-gpu closest-pair --n 1048576
  run_bench multi-gpu-closest-pair-pageable "$build/ptxrt" multi-gpu closest-pair --n 1048576 \
    --host-memory pageable --transfers synchronous
fi

tune_rc=0
if [ "$tune" = 1 ]; then
  OUT="$logs/tune" scripts/tune-check.sh "$build" | tee "$logs/tune-check.txt"
  tune_rc=${PIPESTATUS[0]}
  summary+=("tune-check: rc $tune_rc")
  while read -r line; do summary+=("  $line"); done < <(grep -E "^(matmul|sgemm|closest)" "$logs/tune-check.txt" | grep -v "exit")
fi

mpi_rc=0
if [ ${#mpi_args[@]} -gt 0 ]; then
  [ "${mpi_args[0]}" = all ] && mpi_args=()
  OUT="$logs/mpi" scripts/mpi-check.sh "${mpi_args[@]}" "$build" | tee "$logs/mpi-check.txt"
  mpi_rc=${PIPESTATUS[0]}
  summary+=("mpi-check: rc $mpi_rc")
  while read -r line; do summary+=("  $line"); done < <(grep -E "^(closest|sgemm|  MPI)" "$logs/mpi-check.txt")
fi

echo
echo "SUMMARY ($(( $(date +%s) - started )) s)"
printf '  %s\n' "${summary[@]}"
[ "$ctest_rc" = 0 ] && [ "${examples_rc:-0}" = 0 ] && [ "$sanitize_rc" = 0 ] && [ "$tune_rc" = 0 ] &&
  [ "$mpi_rc" = 0 ]
