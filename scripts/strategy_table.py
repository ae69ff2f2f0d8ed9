#!/usr/bin/env python3
"""The measured side of docs/tuning.md's strategy table, from real tunes of one problem with
different strategies (`ptxrt tune ... --strategy S [--budget N] --json`, one file each): for each
tune, the configs it timed and the wall time it took to first time a config within 1 % and 3 % of
the exhaustive winner, and, for the exhaustive tune, the default config's time, the winner's
speed-up over it, and the whole tune's wall time against its time inside the measurers (what the
parallel compile did not hide).

    scripts/strategy_table.py exhaustive.json model.json occupancy.json random.json

The exhaustive winner is the fastest ok measurement among all the files of a problem, so a budget
run that found a faster config (timing noise) still scores 0 configs late, not never.
"""
import json
import sys
from collections import defaultdict


def reports_of(path):
    with open(path) as file:
        data = json.load(file)
    return data if isinstance(data, list) else [data]


def first_within(report, best_ms, distance):
    """(configs timed, seconds) when the first result within `distance` of best_ms landed."""
    for index, result in enumerate(report["results"]):
        if result["status"] in ("ok", "cut") and result["median_ms"] <= best_ms * (1 + distance):
            return index + 1, result.get("elapsed_seconds")
    return None, None


def cell(configs, seconds):
    if configs is None:
        return "not reached"
    return f"{configs}, {seconds:.1f} s" if seconds is not None else f"{configs}"


def main(paths):
    problems = defaultdict(list)
    for path in paths:
        for report in reports_of(path):
            key = report["key"]
            problems[(key["kernel"], "x".join(map(str, key["size"])))].append(report)
    print("| problem | strategy | timed | wall s | to 1 % (configs, wall) | to 3 % |")
    print("|---|---|---|---|---|---|")
    notes = []
    for (kernel, size), reports in problems.items():
        timed_ok = [r for report in reports for r in report["results"] if r["status"] == "ok"]
        if not timed_ok:
            continue
        best_ms = min(r["median_ms"] for r in timed_ok)
        for report in reports:
            within = [cell(*first_within(report, best_ms, d)) for d in (0.01, 0.03)]
            print(f"| {kernel} {size} | {report['strategy']} | {report['counts']['timed']} | "
                  f"{report['wall_seconds']:.1f} | {within[0]} | {within[1]} |")
            if report["strategy"] == "exhaustive":
                default = report.get("default") or {}
                speedup = default.get("speedup")
                notes.append(
                    f"{kernel} {size}: winner {report['winner']['config']} "
                    f"{report['winner']['median_ms']:.4f} ms"
                    + (f", {speedup:.2f}x the default {default['config']}" if speedup else "")
                    + f"; wall {report['wall_seconds']:.1f} s, of which measuring "
                    f"{report.get('measuring_seconds', 0.0):.1f} s")
    for note in notes:
        print(note)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
