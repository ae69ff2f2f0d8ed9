#!/usr/bin/env bash
# The tuner's GPU check, on a built tree (scripts/gpu-check.sh or cmake + ninja first): its GPU
# tests, then the tunes the issue asks for, each from a cold compile cache so that wall times
# include compilation; matmul 4096³ once more with compilation on one thread for comparison.
# JSON reports and logs go to $OUT (when set: a GPU machine that collects that folder) or
# build/tune-logs.
#   scripts/tune-check.sh [build folder]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${OUT:-$build/tune-logs}
mkdir -p "$out"
ptxrt="$build/ptxrt"
db="$out/tuning.json"
status=0

source scripts/tune_step.sh

"$build/tests/ptxrt_gpu_tests" -tc='*tun*,*planted*' >"$out/gpu-tests.log" 2>&1
echo "gpu tests: exit $? (log: $out/gpu-tests.log)"; tail -3 "$out/gpu-tests.log"
step matmul-4096 "$ptxrt" tune matmul --size 4096 --db "$db" --json
step matmul-4096-serial "$ptxrt" tune matmul --size 4096 --db "$out/tuning-serial.json" \
  --no-parallel-compile --json
step matmul-1024 "$ptxrt" tune matmul --size 1024 --db "$db" --json
step sgemm-4096 "$ptxrt" tune sgemm --size 4096 --db "$db" --json
step closest-pair-1m "$ptxrt" tune closest-pair --size 1000000 --db "$db" --json
"$ptxrt" tune show --db "$db" | tee "$out/show.txt"
# The tuned launch: the exact size's winner (verified: the CPU reference of 1024³ takes seconds,
# of 4096³ many minutes), then a size that was not tuned, which takes the nearest one's.
"$ptxrt" run matmul --m 1024 --n 1024 --k 1024 --tuned --db "$db" --verify | tee "$out/run-tuned.txt"
"$ptxrt" run matmul --m 3000 --n 3000 --k 3000 --tuned --db "$db" --json | tee -a "$out/run-tuned.txt"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
for name in ["matmul-4096", "matmul-4096-serial", "matmul-1024", "sgemm-4096", "closest-pair-1m"]:
    try:
        report = json.load(open(os.path.join(out, name + ".json")))[0]
    except Exception as error:
        print(f"{name}: no report ({error})"); continue
    c, w, p = report["counts"], report["winner"], report["peer"]
    line = (f'{name}: space {c["space"]}, pruned {c["pruned_by_constraints"]}+{c["pruned_by_resources"]}, '
            f'compiled {c["compiled"]}, timed {c["timed"]} (ok {c["ok"]}, cut {c["cut"]}, failed '
            f'{c["wrong"] + c["failed"] + c["crashed"]}), wall {report["wall_seconds"]:.1f} s')
    if w: line += f', winner {w["config"]} {w["median_ms"]:.3f} ms {w["rate"]:.0f} {w["rate_unit"]}'
    if w and p: line += f', {100 * p["median_ms"] / w["median_ms"]:.1f}% of cuBLAS'
    print(line)
PY
exit $status
