#!/usr/bin/env python3
"""The SGEMM family's default on shapes it was not fitted to: summarizes the JSON of `ptxrt bench
sgemm --random N --seed S --json` (cuBLAS measured in the same run) as the held-out table of
docs/perf-notes.md: the distribution of default/cuBLAS ratios (median, 10th percentile, worst
five shapes), the same per drawn class, per class by size (where a shape's sizes put it in
another class than it was drawn as) and by whether B's rows are 16-byte aligned (N a multiple of
4), and how many shapes reach a goal; then the same for the best config the bench timed at each
shape (what a perfect choice among them would reach), and the shapes where the choice, not the
family, misses: a timed config at least 0.05 above the default. Where the bench ran with a tuning
database (--db) that holds winners for some shapes, the same for those winners against cuBLAS
(the tuned goal, 1.0x by default) and the tuned shapes under it.

    build/ptxrt bench sgemm --random 40 --seed 101 --json > random-101.json   # on a GPU
    scripts/sgemm_heldout.py random-101.json [--goal 0.90] [--tuned-goal 1.0]

A report may also be the tables the bench prints (on stderr with --json, one per shape as it
ends), so that a run stopped at a time limit is judged on the shapes it finished. Either may be
xz-compressed (a name ending in .xz), as the larger benches in docs/perf-data are. The tables
name each shape's class as the shape's sizes classify it; only --json records the class it was
drawn as, so the per-class rows of the two can differ.
"""
import argparse
import json
import lzma
import re
import statistics
import sys


# How far above the default (in cuBLAS ratio) a timed config must run for the choice to count as
# the miss: run-to-run noise of the small products is a few points.
CHOICE_MISS = 0.05


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


# A bench table: "== MxNxK (class), ..." then per config "[*] TFLOP/s [range] IQR% ratio [range]
# error config (roles)", cuBLAS's row first with the ratio 1.
DEVICE = re.compile(r"sgemm bench on (.+?):")
HEADER = re.compile(r"== (\d+)x(\d+)x(\d+) \(([a-z-]+)\)")
CUBLAS_ROW = re.compile(r"[* ]\s+([\d.]+) \[[^\]]*\]\s+[\d.]+% 1\s+-\s+cuBLAS SGEMM")
CONFIG_ROW = re.compile(r"[* ]\s+([\d.]+) \[[^\]]*\]\s+[\d.]+% ([\d.]+) \[[^\]]*\]\s+\S+\s+"
                        r"(.+?) \(([a-z, ]+)\)(?:\s+<- best)?")


def report_of_tables(text):
    """The report of a bench's printed tables, with "unfinished": how many shapes a stopped run
    started and left without a table."""
    device = DEVICE.search(text)
    shapes = []
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            m, n, k, shape_class = header.groups()
            shapes.append({"m": int(m), "n": int(n), "k": int(k), "class": shape_class,
                           "cublas_tflops": None, "rows": []})
        elif shapes and (cublas := CUBLAS_ROW.match(line)):
            shapes[-1]["cublas_tflops"] = float(cublas.group(1))
        elif shapes and (config := CONFIG_ROW.match(line)):
            shapes[-1]["rows"].append({"tflops": float(config.group(1)),
                                       "ratio": float(config.group(2)),
                                       "describe": config.group(3),
                                       "roles": config.group(4).split(", ")})
    finished = [shape for shape in shapes if shape["cublas_tflops"] and shape["rows"]]
    return {"device": device.group(1) if device else "?", "shapes": finished,
            "unfinished": len(shapes) - len(finished)}


def read_text(path):
    """The text of a bench report, decompressed where its name ends in .xz."""
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        return file.read()


def read_report(path):
    try:
        text = read_text(path)
    except (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError) as error:
        sys.exit(f"{path}: cannot be read: {error}")
    try:
        report = json.loads(text)
    except json.JSONDecodeError:
        return report_of_tables(text)
    check_report(report, path)
    return report


def check_report(report, path):
    """Exits naming the first field of a JSON report that is not what the bench writes."""
    def refuse(what):
        sys.exit(f"{path}: not a report of `ptxrt bench sgemm --json`: {what}")

    if not isinstance(report, dict) or not isinstance(report.get("shapes"), list):
        refuse("no list of shapes")
    drawn = report.get("random", {})
    if not isinstance(drawn, dict) or (drawn and not isinstance(drawn.get("seed"), int)):
        refuse("random is not {count, seed}")
    if not isinstance(drawn.get("class", ""), str):
        refuse("random's class is not a name")
    for index, shape in enumerate(report["shapes"]):
        if not isinstance(shape, dict):
            refuse(f"shape {index} is not an object")
        for field in ("m", "n", "k"):
            if not isinstance(shape.get(field), int) or isinstance(shape.get(field), bool):
                refuse(f"shape {index} has no integer {field}")
        if not isinstance(shape.get("class"), str) or not isinstance(shape.get("drawn", ""), str):
            refuse(f"shape {index} has no class, or a drawn class that is not a name")
        if not isinstance(shape.get("cublas_tflops"), (int, float)):
            refuse(f"shape {index} has no cublas_tflops (was cuBLAS found?)")
        if not isinstance(shape.get("rows"), list) or not all(
                isinstance(row, dict) and isinstance(row.get("roles"), list)
                and isinstance(row.get("describe"), str)
                and (row.get("ratio") is None or isinstance(row["ratio"], (int, float)))
                for row in shape["rows"]):
            refuse(f"shape {index}'s rows are not objects with roles, describe and a ratio")


def rows_of(report, path):
    rows = []
    for shape in report.get("shapes", []):
        default = next((row for row in shape["rows"] if "default" in row["roles"]), None)
        if default is None or not default.get("ratio"):
            sys.exit(f"{path}: {shape['m']}x{shape['n']}x{shape['k']} has no default row with a "
                     "ratio to cuBLAS (was cuBLAS found?)")
        timed = [row for row in shape["rows"] if row.get("ratio")]
        best = max(timed, key=lambda row: row["ratio"])
        tuned = next((row for row in timed if "tuned" in row["roles"]), None)
        rows.append({"shape": f"{shape['m']}x{shape['n']}x{shape['k']}",
                     "drawn": shape.get("drawn", shape["class"]), "sized": shape["class"],
                     "aligned_n": shape["n"] % 4 == 0,
                     "cublas": shape["cublas_tflops"], "default": default["ratio"],
                     "best": best["ratio"], "config": default["describe"],
                     "tuned": tuned["ratio"] if tuned else None,
                     "tuned_config": tuned["describe"] if tuned else ""})
    return rows


def summary_line(label, ratios, goal):
    met = sum(ratio >= goal for ratio in ratios)
    return (f"| {label} | {len(ratios)} | {statistics.median(ratios):.2f} | "
            f"{percentile(ratios, 0.1):.2f} | {min(ratios):.2f} | {met} of {len(ratios)} |")


def print_summary_header(goal):
    print(f"| shapes | count | median | 10th percentile | worst | at least {goal:.2f}x |")
    print("|---|---|---|---|---|---|")


def print_tuned(rows, goal):
    """The tuning database's winners, where the bench timed one, against the tuned goal."""
    tuned = [row for row in rows if row["tuned"] is not None]
    if not tuned:
        return
    print(f"Tuned (the database's winner timed beside cuBLAS) at {len(tuned)} of {len(rows)} "
          "shapes:")
    print()
    print_summary_header(goal)
    print(summary_line("tuned", [row["tuned"] for row in tuned], goal))
    print()
    under = sorted((row for row in tuned if row["tuned"] < goal), key=lambda row: row["tuned"])
    if under:
        print(f"Tuned under {goal:.2f}x: " + ", ".join(
            f"{row['shape']} {row['tuned']:.2f}x (default {row['default']:.2f}x, "
            f"{row['tuned_config']})" for row in under))
        print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+",
                        help="JSON of `ptxrt bench sgemm --random ... --json`, or the tables "
                             "it printed")
    parser.add_argument("--goal", type=float, default=0.90,
                        help="the default/cuBLAS ratio to reach")
    parser.add_argument("--tuned-goal", type=float, default=1.0,
                        help="the tuned/cuBLAS ratio to reach, where the bench had a database")
    args = parser.parse_args()
    for path in args.reports:
        report = read_report(path)
        rows = rows_of(report, path)
        if not rows:
            sys.exit(f"{path}: no shapes (neither a bench's JSON nor its tables)")
        drawn = report.get("random", {})
        unfinished = report.get("unfinished", 0)
        print(f"## {path}: {report.get('device', '?')}, {len(rows)} shapes"
              + (f", seed {drawn['seed']}" if drawn else "")
              + (f", every one drawn {drawn['class']}" if "class" in drawn else "")
              + (f" ({unfinished} more started, not finished)" if unfinished else ""))
        print()
        print_summary_header(args.goal)
        print(summary_line("all", [row["default"] for row in rows], args.goal))
        for label in dict.fromkeys(row["drawn"] for row in rows):
            print(summary_line(label, [row["default"] for row in rows if row["drawn"] == label],
                               args.goal))
        # A log-uniform draw can be a ragged or deep product too: the goals of those classes
        # hold for every shape their sizes put in them, whatever it was drawn as.
        if any(row["sized"] != row["drawn"] for row in rows):
            for label in dict.fromkeys(row["sized"] for row in rows):
                print(summary_line(f"{label} by size", [row["default"] for row in rows
                                                        if row["sized"] == label], args.goal))
        for label, aligned in (("N % 4 = 0", True), ("N % 4 != 0", False)):
            ratios = [row["default"] for row in rows if row["aligned_n"] == aligned]
            if ratios:
                print(summary_line(label, ratios, args.goal))
        print(summary_line("best timed, all", [row["best"] for row in rows], args.goal))
        print()
        print_tuned(rows, args.tuned_goal)
        misses = [row for row in rows if row["best"] - row["default"] >= CHOICE_MISS]
        print(f"The choice misses on {len(misses)} of {len(rows)} shapes (a timed config at least "
              f"{CHOICE_MISS:.2f} above the default)" + (":" if misses else "."))
        if misses:
            print(", ".join(f"{row['shape']} {row['default']:.2f}x against {row['best']:.2f}x"
                            for row in sorted(misses, key=lambda row: row["default"] - row["best"])))
        print()
        print("Worst five (default/cuBLAS; the best config the bench timed there):")
        print()
        drawn_or_class = ("drawn" if all("drawn" in shape for shape in report["shapes"])
                          else "class")
        print(f"| shape | {drawn_or_class} | cuBLAS TFLOP/s | default | best timed | default "
              "config |")
        print("|---|---|---|---|---|---|")
        for row in sorted(rows, key=lambda row: row["default"])[:5]:
            print(f"| {row['shape']} | {row['drawn']} | {row['cublas']:.2f} | "
                  f"{row['default']:.2f}x | {row['best']:.2f}x | {row['config']} |")
        print()


if __name__ == "__main__":
    main()
