#!/usr/bin/env bash
# The MPI paths on a GPU machine, on a tree built with ptxrt::mpi (PTXRT_MPI=ON; scripts/
# gpu-check.sh builds one where CMake finds an MPI). --checks and --bench put every rank on GPU 0,
# which they share (node-local rank modulo one GPU); --scaling gives each rank its own GPU where
# the machine has two.
#   --checks  the distributed closest pair on each GPU method and distribution with 1 and 2 ranks
#             against one process (the same pair and distance; on uniform points --verify too), a
#             binary file read by byte range likewise, and a whole distributed sgemm tune at 4096x4096x256 (332
#             configs; at 2048^3 the pair of tunes outran 5 minutes) with 2 ranks against a
#             one-process tune (the same configs verified and failed, the 2-rank winner within
#             10 % of the one-process winner's time there)
#   --bench   the MPI path's cost against one process, with 1 and 2 ranks: the closest pair of 10M
#             points (grid) and a tune of 200 sgemm configs at 1024 (random, seed 1), each the best of 2
#   --scaling the closest pair of 10^8 uniform and of 10^8 clustered points (grid) by one process
#             and by 1 and 2 ranks (--devices 0,1 with two GPUs), best of 3: every phase of the
#             slowest rank, 2 ranks against 1 (goals: 1.8x uniform, 1.6x clustered), 1 rank against
#             one process (goal: within 1.2x, set-up included), the same pair and distance as one
#             process; then scripts/closest_pair_model.py's model of 8, 64 and 512 GPUs from them.
#             About 2 minutes on an H100 machine of 16 cores.
# None: all three. MPIRUN names mpirun (default: mpirun on PATH; for an Open MPI carried in a
# folder, source its environment first). JSON and logs go to $OUT or BUILD/mpi-logs.
#   scripts/mpi-check.sh [--checks|--bench|--scaling] [build folder, default build-gpu]
set -uo pipefail
cd "$(dirname "$0")/.."
checks=1 bench=1 scaling=1
case "${1:-}" in
  --checks) bench=0 scaling=0; shift ;;
  --bench) checks=0 scaling=0; shift ;;
  --scaling) checks=0 bench=0; shift ;;
esac
build=${1:-build-gpu}
out=${OUT:-$build/mpi-logs}
mkdir -p "$out"
ptxrt="$build/ptxrt"
# Root in a container must say so; more ranks than GPUs share them; --bind-to none: Open MPI
# binds each of up to 2 ranks to one core, where its compile threads would all run.
mpirun=("${MPIRUN:-mpirun}" --allow-run-as-root --oversubscribe --bind-to none)
# Containers forbid the cross-memory attach of Open MPI's shared-memory transport.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export PTXRT_CACHE_DIR="$out/cache"
status=0

run() {  # run NAME COMMAND...: stdout to NAME.json, stderr to NAME.log; a failure fails the script
  local name=$1
  shift
  "$@" >"$out/$name.json" 2>"$out/$name.log" || { echo "$name: exit $? (see $out/$name.log)"; status=1; }
}

if [ "$checks" = 1 ]; then
  for method_n in grid:10000000 dc:10000000 brute:1048576; do
    method=${method_n%%:*} n=${method_n##*:}
    for dist in uniform normal clustered; do
      run "cp-$method-$dist-one" "$ptxrt" closest-pair --n "$n" --dist "$dist" --method "$method" \
        --json
      # cpu-dc on the whole set takes seconds at 10^7: once per method.
      verify=()
      [ "$dist" = uniform ] && verify=(--verify)
      for ranks in 1 2; do
        run "cp-$method-$dist-mpi$ranks" "${mpirun[@]}" -n "$ranks" "$ptxrt" closest-pair --mpi \
          --n "$n" --dist "$dist" --method "$method" --devices 0 "${verify[@]}" --json
      done
    done
  done
  # A binary file of 10^6 points, read by byte range by each rank and exchanged.
  python3 - "$out/points.bin" <<'PY'
import array, random, sys
random.seed(7)
array.array("f", (random.random() for _ in range(2_000_000))).tofile(open(sys.argv[1], "wb"))
PY
  run "cp-grid-file-one" "$ptxrt" closest-pair --input "$out/points.bin" --method grid --json
  for ranks in 1 2; do
    run "cp-grid-file-mpi$ranks" "${mpirun[@]}" -n "$ranks" "$ptxrt" closest-pair --mpi \
      --input "$out/points.bin" --method grid --devices 0 --verify --json
  done
  python3 - "$out" <<'PY' || status=1
import json, os, sys
out, failed = sys.argv[1], False
cases = [(m, d) for m in ["grid", "dc", "brute"] for d in ["uniform", "normal", "clustered"]]
for method, dist in cases + [("grid", "file")]:
    one = json.load(open(os.path.join(out, f"cp-{method}-{dist}-one.json")))
    for ranks in [1, 2]:
        mpi = json.load(open(os.path.join(out, f"cp-{method}-{dist}-mpi{ranks}.json")))
        same = (mpi["i"], mpi["j"], mpi["distance"]) == (one["i"], one["j"], one["distance"])
        ok = same and mpi.get("verify", {"agrees": True})["agrees"] \
            and mpi["devices"] == [0] * ranks and mpi["method"] == method
        failed |= not ok
        print(f"closest pair {method} {dist} n={one['n']} ranks={ranks}: pair ({mpi['i']}, {mpi['j']}) "
              f"at {mpi['distance']:.9g}, {'the' if same else 'NOT the'} one-process answer, "
              f"devices {mpi['devices']}, border points received {[r['border_points_received'] for r in mpi['ranks']]}: "
              f"{'ok' if ok else 'FAILED'}")
sys.exit(1 if failed else 0)
PY

  tune_space=(--size 4096x4096x256)
  run tune-one "$ptxrt" tune sgemm "${tune_space[@]}" --db "$out/tune-one-db.json" --json
  run tune-mpi2 "${mpirun[@]}" -n 2 "$ptxrt" tune sgemm "${tune_space[@]}" --mpi --devices 0 \
    --db "$out/tune-mpi2-db.json" --json
  python3 - "$out" <<'PY' || status=1
import json, os, sys
out = sys.argv[1]
one = json.load(open(os.path.join(out, "tune-one.json")))[0]
two = json.load(open(os.path.join(out, "tune-mpi2.json")))[0]
def by_status(report, statuses):
    return {json.dumps(r["config"], sort_keys=True) for r in report["results"] if r["status"] in statuses}
counts = ["space", "pruned_by_constraints", "pruned_by_resources", "compile_failures", "compiled", "timed"]
same_counts = all(one["counts"][c] == two["counts"][c] for c in counts)
same_verified = by_status(one, {"ok", "cut"}) == by_status(two, {"ok", "cut"})
same_failed = by_status(one, {"wrong", "failed", "crashed"}) == by_status(two, {"wrong", "failed", "crashed"})
times = {json.dumps(r["config"], sort_keys=True): r["median_ms"] for r in one["results"] if r["status"] == "ok"}
winner = json.dumps(two["winner"]["config"], sort_keys=True)
ratio = times.get(winner, float("inf")) / one["winner"]["median_ms"]
ok = same_counts and same_verified and same_failed and ratio <= 1.10 and two["devices"] == [0, 0]
listed = ", ".join(f"{c} {two['counts'][c]}" for c in counts)
print(f"sgemm 4096x4096x256 tune, 2 ranks on GPU 0 against one process: counts {'same' if same_counts else 'DIFFERENT'} "
      f"({listed}), verified configs "
      f"{'same' if same_verified else 'DIFFERENT'}, failures {'same' if same_failed else 'DIFFERENT'}, "
      f"2-rank winner {two['winner']['config']} at {ratio:.3f}x the one-process winner's time, "
      f"devices {two['devices']}, workers {two['workers_started']}: {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
PY
fi

if [ "$bench" = 1 ]; then
  # Best of 2 rounds; each part prints its line as soon as it ends.
  best_of() {  # prefix, python expression of j (one run's JSON)
    python3 - "$out" "$1" "$2" <<'PY'
import json, os, sys
out, prefix, expression = sys.argv[1:]
print(min(eval(expression, {}, {"j": json.load(open(os.path.join(out, f"{prefix}-{r}.json")))})
          for r in [1, 2]))
PY
  }
  ratios() {  # what, unit, one, mpi1, mpi2
    python3 -c "import sys; w,u,one,m1,m2=sys.argv[1],sys.argv[2],*map(float,sys.argv[3:]);
print(f'{w}, {u} (best of 2): one process {one:.1f}, MPI 1 rank {m1:.1f} ({m1/one:.2f}x), MPI 2 ranks on one GPU {m2:.1f} ({m2/one:.2f}x)')" "$@"
  }
  # Warm: the kernels compiled and in the disk cache, so that every run times the same work.
  run cp-warm "$ptxrt" closest-pair --n 10000000 --method grid --json
  for round in 1 2; do
    run "bench-cp-one-$round" "$ptxrt" closest-pair --n 10000000 --method grid --json
    for ranks in 1 2; do
      run "bench-cp-mpi$ranks-$round" "${mpirun[@]}" -n "$ranks" "$ptxrt" closest-pair --mpi \
        --n 10000000 --method grid --devices 0 --json
    done
  done
  total='j["times"]["total_ms"]'
  ratios "closest pair 10M grid" "total ms" "$(best_of bench-cp-one "$total")" \
    "$(best_of bench-cp-mpi1 "$total")" "$(best_of bench-cp-mpi2 "$total")" || status=1
  for ranks in 1 2; do
    python3 - "$out/bench-cp-mpi$ranks-1.json" "$ranks" <<'PY' || status=1
import json, sys
times = json.load(open(sys.argv[1]))["times"]
print(f"  MPI {sys.argv[2]} rank(s), slowest rank's phases: " + ", ".join(
    f"{phase[:-3]} {times[phase]:.1f} ms" for phase in
    ["setup_ms", "input_ms", "split_ms", "solve_ms", "border_ms", "reduce_ms", "total_ms"]))
PY
  done
  # 1024^3 keeps each timing short, so that the tune's cost is mostly the tuner's own.
  tune=(tune sgemm --size 1024 --strategy random --budget 200 --seed 1 --json)
  run tune-warm "$ptxrt" "${tune[@]}" --db "$out/bench-warm-db.json"
  for round in 1 2; do
    run "bench-tune-one-$round" "$ptxrt" "${tune[@]}" --db "$out/bench-one-$round-db.json"
    for ranks in 1 2; do
      run "bench-tune-mpi$ranks-$round" "${mpirun[@]}" -n "$ranks" "$ptxrt" "${tune[@]}" --mpi \
        --devices 0 --db "$out/bench-mpi$ranks-$round-db.json"
    done
  done
  wall='j[0]["wall_seconds"]'
  ratios "sgemm 1024 tune of 200 configs" "wall s" "$(best_of bench-tune-one "$wall")" \
    "$(best_of bench-tune-mpi1 "$wall")" "$(best_of bench-tune-mpi2 "$wall")" || status=1
fi

if [ "$scaling" = 1 ]; then
  gpus=$("$ptxrt" devices --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["driver"]["device_count"])')
  devices=0
  [ "$gpus" -ge 2 ] && devices=0,1
  # Warm: every kernel compiled and in the disk cache, so that each run times the same work.
  run scale-warm-one "$ptxrt" closest-pair --n 1000000 --method grid --json
  run scale-warm-mpi "${mpirun[@]}" -n 2 "$ptxrt" closest-pair --mpi --n 1000000 --method grid \
    --devices "$devices" --json
  for dist in uniform clustered; do
    for round in 1 2; do
      run "scale-$dist-one-$round" "$ptxrt" closest-pair --n 100000000 --dist "$dist" \
        --method grid --json
    done
    for round in 1 2 3; do
      for ranks in 1 2; do
        run "scale-$dist-mpi$ranks-$round" "${mpirun[@]}" -n "$ranks" "$ptxrt" closest-pair --mpi \
          --n 100000000 --dist "$dist" --method grid --devices "$devices" --json
      done
    done
  done
  python3 - "$out" <<'PY' || status=1
import json, os, sys
out, failed = sys.argv[1], False
phases = ["setup_ms", "input_ms", "split_ms", "solve_ms", "border_ms", "reduce_ms", "total_ms"]
def best(prefix, rounds, key):
    runs = [json.load(open(os.path.join(out, f"{prefix}-{r}.json"))) for r in rounds]
    return min(runs, key=key)
for dist, goal in [("uniform", 1.8), ("clustered", 1.6)]:
    # One process in all: the GPU generator's set-up (context, kernels), the input, the call.
    in_all = lambda j: j["input_setup_ms"] + j["input_ms"] + j["times"]["total_ms"]
    one = best(f"scale-{dist}-one", [1, 2], in_all)
    mpi = {ranks: best(f"scale-{dist}-mpi{ranks}", [1, 2, 3], lambda j: j["times"]["total_ms"])
           for ranks in [1, 2]}
    one_all = in_all(one)
    speedup = mpi[1]["times"]["total_ms"] / mpi[2]["times"]["total_ms"]
    rank_all = mpi[1]["times"]["setup_ms"] + mpi[1]["times"]["total_ms"]
    same = all((m["i"], m["j"], m["distance"]) == (one["i"], one["j"], one["distance"])
               for m in mpi.values())
    failed |= not same
    print(f"closest pair 10^8 {dist} (grid), best of 3: 2 ranks (devices {mpi[2]['devices']}) "
          f"{speedup:.2f}x 1 rank (goal {goal}x: {'met' if speedup >= goal else 'MISSED'}); "
          f"1 rank in all {rank_all:.1f} ms (set-up {mpi[1]['times']['setup_ms']:.1f}) against one "
          f"process {one_all:.1f} ms (from {one['from']}: set-up {one['input_setup_ms']:.1f}, input "
          f"{one['input_ms']:.1f}, call {one['times']['total_ms']:.1f}): "
          f"{rank_all / one_all:.2f}x (goal 1.2x: {'met' if rank_all <= 1.2 * one_all else 'MISSED'}); "
          f"pair ({one['i']}, {one['j']}) at {one['distance']:.9g}: "
          f"{'the one-process answer' if same else 'NOT the one-process answer: FAILED'}")
    print("  slowest rank, ms   " + "".join(f"{p[:-3]:>9}" for p in phases))
    for ranks in [1, 2]:
        print(f"  {ranks} rank{'s' if ranks > 1 else ' '}           " +
              "".join(f"{mpi[ranks]['times'][p]:9.2f}" for p in phases))
    for rank, each in enumerate(mpi[2]["ranks"]):
        print(f"    2 ranks, rank {rank}  " + "".join(f"{each[p]:9.2f}" for p in phases)
              + f"  slab {each['slab_points']}, border points sent {each['border_points_sent']}")
    for ranks in [1, 2]:
        json.dump(mpi[ranks], open(os.path.join(out, f"scale-{dist}-best-mpi{ranks}.json"), "w"))
sys.exit(1 if failed else 0)
PY
  python3 scripts/closest_pair_model.py "$out/scale-uniform-best-mpi1.json" \
    "$out/scale-uniform-best-mpi2.json" || status=1
fi
exit $status
