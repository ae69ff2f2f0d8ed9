#!/usr/bin/env python3
"""ptxrt against Kernel Tuner on the kernels of tests/kernel_tuner, on one GPU.

For each problem: Kernel Tuner's brute force (kt_<name>.py, CuPy backend, a cold CuPy cache),
`ptxrt tune --strategy exhaustive` and `ptxrt tune --budget 30` (the default strategy), each from
a cold compile cache and timed on the wall clock; then every tool's winner timed again by one
timer, `ptxrt run` of the same kernel file with the winner's defines (same data, same L2 flush,
median of --repeat runs, verified where the problem verifies). Prints a table and writes
side-by-side.json to the output folder, with every tool's log and report beside it.

    scripts/kernel-tuner-side-by-side.py [--build build] [--out DIR] [problem ...]

Kernel Tuner must be importable (scripts/kernel-tuner-side-by-side.sh installs it from .whl/).
A problem's ptxrt file is <name>.json, the problem as Kernel Tuner's script states it; a dry run
first says why, when this ptxrt refuses it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "tests" / "kernel_tuner"

# name: the kernel file it tunes (the problem files and the Kernel Tuner script are named after it)
PROBLEMS = {
    "vector_add": "vector_add.cu",
    "convolution_2d": "convolution_2d.cu",
    "diffusion": "diffusion.cu",
    "matmul": "matmul.cu",
    "transpose": "transpose.cu",
    "reduction": "reduction.cu",
    "spmv": "spmv.cu",
    "spmv_irregular": "spmv.cu",
    "histogram": "histogram.cu",
    "squared_distance": "squared_distance.cu",
}

TOOL_TIMEOUT_S = 240


def run_timed(command, log_path, env=None, cwd=None, timeout=TOOL_TIMEOUT_S):
    """(exit code, wall seconds, stdout) of a command, its stderr in log_path; 124 on timeout."""
    start = time.perf_counter()
    with open(log_path, "w") as log:
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=log, text=True, env=env,
                                  cwd=cwd, timeout=timeout)
            code, stdout = done.returncode, done.stdout
        except subprocess.TimeoutExpired as expired:
            code, stdout = 124, expired.stdout.decode() if expired.stdout else ""
    return code, time.perf_counter() - start, stdout


def last_line(path):
    lines = [line for line in Path(path).read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def with_env(**variables):
    env = dict(os.environ)
    env.update({name: str(value) for name, value in variables.items()})
    return env


def problem_file(ptxrt, name, kernel, arch, out):
    """<name>.json when this ptxrt plans it (a dry run), else nothing and why not."""
    candidate = SET / f"{name}.json"
    log = out / f"{name}-probe.log"
    code, _, _ = run_timed([ptxrt, "tune", str(SET / kernel), "--problem", str(candidate),
                            "--dry-run", "--arch", arch, "--time", "1"], log,
                           env=with_env(PTXRT_CACHE_DIR=out / "ptxrt-cache-probe"), timeout=120)
    if code == 0:
        return candidate, []
    return None, [f"{candidate.name}: {last_line(log)}"]


def read_kernel_tuner_cache(path):
    """Kernel Tuner's cache file; one cut short while a tune ran lacks its closing braces."""
    if not path.exists():
        return None
    text = path.read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(text.rstrip().rstrip(",") + "}}")


def kernel_tuner_side(name, out):
    cache_path = out / f"kt_{name}.json"
    cache_path.unlink(missing_ok=True)
    log = out / f"kt_{name}.log"
    code, wall, _ = run_timed([sys.executable, str(SET / f"kt_{name}.py"), str(cache_path)], log,
                              env=with_env(CUPY_CACHE_DIR=out / "cupy-cache" / name), cwd=out)
    side = {"exit_code": code, "wall_s": wall, "log": log.name, "configs": 0, "winner": None,
            "winner_ms": None, "failures": {}, "wrong": []}
    if code != 0:
        side["error"] = last_line(log)
        wrong = re.search(r"verification failed for: (.*)", log.read_text(errors="replace"))
        if wrong:
            side["wrong"].append(wrong.group(1).strip())
    cache = read_kernel_tuner_cache(cache_path)
    if not cache:
        return side
    keys = cache["tune_params_keys"]
    entries = list(cache["cache"].values())
    side["configs"] = len(entries)
    timed = [entry for entry in entries if isinstance(entry.get("time"), (int, float))]
    for entry in entries:
        if not isinstance(entry.get("time"), (int, float)):
            kind = str(entry.get("time"))
            side["failures"][kind] = side["failures"].get(kind, 0) + 1
    if timed:
        best = min(timed, key=lambda entry: entry["time"])
        side["winner"] = {key: best[key] for key in keys}
        side["winner_ms"] = best["time"]
    return side


def ptxrt_side(ptxrt, name, kernel, problem, options, label, out):
    report_path = out / f"ptxrt_{name}_{label}.json"
    log = out / f"ptxrt_{name}_{label}.log"
    command = [ptxrt, "tune", str(SET / kernel), "--problem", str(problem), "--json",
               "--db", str(out / f"tuning-{label}.json")] + options
    code, wall, stdout = run_timed(command, log,
                                   env=with_env(PTXRT_CACHE_DIR=out / f"ptxrt-cache-{label}" / name))
    report_path.write_text(stdout)
    side = {"exit_code": code, "wall_s": wall, "log": log.name, "report": report_path.name,
            "configs": 0, "winner": None, "winner_ms": None, "wrong": []}
    if code != 0:
        side["error"] = last_line(log)
    try:
        reports = json.loads(stdout)
    except json.JSONDecodeError:
        return side
    report = reports[0] if isinstance(reports, list) and reports else reports
    if not isinstance(report, dict):
        return side
    side["configs"] = report["counts"]["space"] - report["counts"]["pruned_by_constraints"]
    side["timed"] = report["counts"]["timed"]
    side["counts"] = report["counts"]
    side["phases"] = report.get("phases")
    side["wrong"] = [describe(result["config"]) for result in report["results"]
                     if result["status"] == "wrong"]
    if report.get("winner"):
        side["winner"] = report["winner"]["config"]
        side["winner_ms"] = report["winner"]["median_ms"]
    return side


def describe(config):
    return " ".join(f"{name}={value}" for name, value in config.items())


def retime(ptxrt, name, kernel, problem, config, repeat, out, index):
    """The config's median through `ptxrt run`, the one timer of every tool's winner."""
    tunables = json.loads(problem.read_text())["tune"]
    command = [ptxrt, "run", str(SET / kernel), "--problem", str(problem), "--json",
               "--repeat", str(repeat)]
    if "verify" in json.loads(problem.read_text()):
        command.append("--verify")
    for key, value in config.items():
        if key in tunables:
            command += ["-D", f"{key}={value}"]
    code, _, stdout = run_timed(command, out / f"run_{name}_{index}.log",
                                env=with_env(PTXRT_CACHE_DIR=out / "ptxrt-cache-exhaustive" / name),
                                timeout=120)
    if code != 0:
        return {"config": config, "error": last_line(out / f"run_{name}_{index}.log")}
    run = json.loads(stdout)
    if isinstance(run, list):  # `ptxrt run --json` prints one object per size
        run = run[0]
    return {"config": config, "median_ms": run["median_ms"], "passed": run.get("passed")}


def compare(ptxrt, name, arch, repeat, out):
    kernel = PROBLEMS[name]
    problem, refusals = problem_file(ptxrt, name, kernel, arch, out)
    row = {"problem": name, "kernel": kernel, "problem_file": problem.name if problem else None,
           "refused_files": refusals}
    row["kernel_tuner"] = kernel_tuner_side(name, out)
    if problem is None:
        return row
    row["ptxrt_exhaustive"] = ptxrt_side(ptxrt, name, kernel, problem,
                                         ["--strategy", "exhaustive"], "exhaustive", out)
    row["ptxrt_budget30"] = ptxrt_side(ptxrt, name, kernel, problem, ["--budget", "30"],
                                       "budget30", out)
    retimed = {}
    for tool in ("kernel_tuner", "ptxrt_exhaustive", "ptxrt_budget30"):
        winner = row[tool]["winner"]
        if winner is None:
            continue
        same = next((t for t, r in retimed.items()
                     if {k: str(v) for k, v in r["config"].items() if k in winner} ==
                     {k: str(v) for k, v in winner.items() if k in r["config"]}), None)
        retimed[tool] = retimed[same] if same else retime(ptxrt, name, kernel, problem, winner,
                                                          repeat, out, len(retimed))
    times = [r["median_ms"] for r in retimed.values() if "median_ms" in r]
    for result in retimed.values():
        if "median_ms" in result and times:
            result["ratio_to_fastest"] = result["median_ms"] / min(times)
    row["retimed"] = retimed
    return row


def seconds(side):
    if not side:
        return "-"
    text = f"{side['wall_s']:.1f}"
    return text if side["exit_code"] == 0 else f"{text} (exit {side['exit_code']})"


def winner_cell(row, tool):
    result = row.get("retimed", {}).get(tool)
    if not result:
        return "-"
    if "median_ms" not in result:
        return "run failed"
    mark = "" if result.get("passed") in (True, None) else " WRONG"
    return f"{result['median_ms']:.4f} ({result['ratio_to_fastest']:.2f}x){mark}"


def wrong_cell(row):
    parts = []
    for tool, label in (("kernel_tuner", "KT"), ("ptxrt_exhaustive", "exh"),
                        ("ptxrt_budget30", "b30")):
        side = row.get(tool)
        if side and side["wrong"]:
            parts.append(f"{label}: " + "; ".join(side["wrong"][:3]) +
                         (f" (+{len(side['wrong']) - 3})" if len(side["wrong"]) > 3 else ""))
    return ", ".join(parts) or "none"


def print_table(rows):
    print("| problem | file | configs KT / ptxrt | KT brute force s | ptxrt exhaustive s | "
          "ptxrt budget 30 s | KT winner ms | ptxrt exh winner ms | ptxrt b30 winner ms | wrong |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        exhaustive = row.get("ptxrt_exhaustive")
        print(f"| {row['problem']} | {row['problem_file'] or 'none accepted'} | "
              f"{row['kernel_tuner']['configs']} / {exhaustive['configs'] if exhaustive else '-'} | "
              f"{seconds(row['kernel_tuner'])} | {seconds(exhaustive)} | "
              f"{seconds(row.get('ptxrt_budget30'))} | {winner_cell(row, 'kernel_tuner')} | "
              f"{winner_cell(row, 'ptxrt_exhaustive')} | {winner_cell(row, 'ptxrt_budget30')} | "
              f"{wrong_cell(row)} |")
    print("\nWinners' times: `ptxrt run` of each winner (median ms, ratio to the fastest of the "
          "three). Configs: Kernel Tuner's cache entries / ptxrt's space after constraints.")
    for row in rows:
        for tool in ("kernel_tuner", "ptxrt_exhaustive", "ptxrt_budget30"):
            side = row.get(tool)
            if side and side.get("error"):
                print(f"- {row['problem']}, {tool}: {side['error']}")
            if side and side.get("failures"):
                print(f"- {row['problem']}, {tool}: skipped configs {side['failures']}")
        for refusal in row["refused_files"]:
            print(f"- {row['problem']}: ptxrt refused {refusal}")
    print("\nWhere ptxrt's exhaustive tunes spent their time (s per timed config; `phases` of the "
          "report): compile (on all threads) | worker start waited | verification | timing | "
          "other measuring | idle")
    for row in rows:
        side = row.get("ptxrt_exhaustive")
        if side and side.get("phases") and side.get("timed"):
            phases, timed = side["phases"], side["timed"]
            print(f"- {row['problem']}: " + " | ".join(
                f"{phases[key] / timed:.3f}" for key in (
                    "compile_seconds", "worker_start_wait_seconds", "verification_seconds",
                    "timing_seconds", "other_measuring_seconds", "idle_seconds")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*", metavar="problem",
                        help=f"a subset of {', '.join(PROBLEMS)} (default: all)")
    parser.add_argument("--build", default="build", help="the build folder holding ptxrt")
    parser.add_argument("--out", default=None, help="where logs and reports go")
    parser.add_argument("--arch", default="sm_90", help="the GPU's architecture, for the probe")
    parser.add_argument("--repeat", type=int, default=30, help="timed runs of each winner")
    parser.add_argument("--stop-after", type=float, default=480,
                        help="start no problem after this many seconds (the rest are listed)")
    args = parser.parse_args()
    unknown = [name for name in args.problems if name not in PROBLEMS]
    if unknown:
        parser.error(f"unknown problem(s) {', '.join(unknown)}; the set: {', '.join(PROBLEMS)}")
    ptxrt = str((ROOT / args.build / "ptxrt").resolve())
    out = Path(args.out or ROOT / args.build / "kernel-tuner-side-by-side").resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("cupy-cache", "ptxrt-cache-exhaustive", "ptxrt-cache-budget30"):
        shutil.rmtree(out / stale, ignore_errors=True)
    for label in ("exhaustive", "budget30"):
        (out / f"tuning-{label}.json").unlink(missing_ok=True)

    rows = []
    start = time.perf_counter()
    skipped = []
    for name in args.problems or list(PROBLEMS):
        if time.perf_counter() - start > args.stop_after:
            skipped.append(name)
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows.append(compare(ptxrt, name, args.arch, args.repeat, out))
        (out / "side-by-side.json").write_text(json.dumps(rows, indent=2) + "\n")
    print_table(rows)
    if skipped:
        print(f"\nnot started after {args.stop_after:.0f} s: {', '.join(skipped)}")
    print(f"\nwhole set: {time.perf_counter() - start:.0f} s; reports in {out}")


if __name__ == "__main__":
    main()
