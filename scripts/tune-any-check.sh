#!/usr/bin/env bash
# The GPU check of tuning kernel files (docs/tuning.md, "Tuning your own kernel"), on a built tree:
# the GPU tests of kernel-file problems, then for each Kernel Tuner-style problem of
# tests/data/kernels (the constant-memory convolution, the Gaussian sum with its algorithm
# switches) an exhaustive tune, the model, occupancy and random strategies with a budget of about
# a tenth of the space, `run --tuned --verify`, and the strategy tables: measured
# (scripts/strategy_table.py) and replayed from the exhaustive recordings (ptxrt_strategy_replay,
# with sgemm's when scripts/tune-check.sh wrote $out/sgemm-4096.json first). Each tune starts
# from a cold compile cache, so wall times include compiling. JSON reports and logs go to $OUT
# (when set: a GPU machine that collects that folder) or build/tune-logs. About 6 minutes on an H100.
#   scripts/tune-any-check.sh [build folder]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${OUT:-$build/tune-logs}
mkdir -p "$out"
ptxrt="$build/ptxrt"
kernels=tests/data/kernels
status=0

source scripts/tune_step.sh

"$build/tests/ptxrt_gpu_tests" -tc='*convolution*,*Gaussian*,*planted wrong config and a planted fault*,*reference that fails*,*built in C++*,*callback*,*--tuned use the winners*' \
  >"$out/gpu-tests-tune-any.log" 2>&1
echo "gpu tests: exit $? (log: $out/gpu-tests-tune-any.log)"; tail -3 "$out/gpu-tests-tune-any.log"
for problem in convolution gaussian_sum; do
  files=("$kernels/$problem.cu" --problem "$kernels/$problem.json")
  step "$problem-exhaustive" "$ptxrt" tune "${files[@]}" --strategy exhaustive \
    --db "$out/tuning.json" --json
  for strategy in model occupancy random; do
    step "$problem-$strategy" "$ptxrt" tune "${files[@]}" --strategy "$strategy" --budget 30 \
      --db "$out/tuning-$strategy.json" --json
  done
  "$ptxrt" run "${files[@]}" --tuned --db "$out/tuning.json" --verify | tee "$out/$problem-run-tuned.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
python3 scripts/strategy_table.py "$out"/convolution-*.json "$out"/gaussian_sum-*.json \
  | tee "$out/strategy-measured.md"
recordings=("$out/convolution-exhaustive.json" "$out/gaussian_sum-exhaustive.json")
[ -s "$out/sgemm-4096.json" ] && recordings+=("$out/sgemm-4096.json")
"$build/tests/ptxrt_strategy_replay" --markdown "${recordings[@]}" | tee "$out/strategy-replayed.md"
exit $status
