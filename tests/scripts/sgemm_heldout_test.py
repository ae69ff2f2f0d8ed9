#!/usr/bin/env python3
"""scripts/sgemm_heldout.py on a bench report made up here, whose figures are known: the default's
median, 10th percentile, worst and count at the goal, overall, per drawn class, per class by
size (a log-uniform draw that is ragged) and by whether N is a multiple of 4; the same for the
best timed config; the shapes where the choice misses (a timed config at least 0.05 above the
default, and no others); the worst five in order; the tuning database's winners where three
shapes have one (their distribution, the count at 1.0x, the one under it), and no such section
where none has; and a refusal naming a shape without a default. The same report printed as the
bench's tables, with a last shape the run did not finish, gives the same figures, and so does
each xz-compressed; reports that are neither, or cannot be read (a compressed one cut short
among them), are refused by name. Exits non-zero on the first failed expectation.
"""
import json
import lzma
import os
import subprocess
import sys
import tempfile

from script_checks import SOURCE, expect

SCRIPT = os.path.join(SOURCE, "scripts", "sgemm_heldout.py")


def row(roles, ratio, describe):
    return {"roles": roles, "ratio": ratio, "tflops": 10.0 * ratio, "describe": describe}


def shape(index, drawn, default, best, tuned=None):
    rows = [row(["default", "listed"], default, f"default config {index}")]
    if best is not None:
        rows.append(row(["listed"], best, f"listed config {index}"))
    if tuned is not None:
        rows.append(row(["tuned"], tuned, f"tuned config {index}"))
    # The last four have N % 4 != 0: B's rows are not 16-byte aligned.
    return {"m": 100 + index, "n": 200 if index < 6 else 201, "k": 300, "class": drawn,
            "drawn": drawn,
            "cublas_tflops": 10.0, "rows": rows}


def tables(report):
    """The report as the bench prints it, one table per shape, then a shape's header whose table
    a stopped run never printed."""
    lines = [f"sgemm bench on {report['device']}: 1 rounds x 4 timed samples (after a warm-up) "
             "per config", ""]
    for record in report["shapes"]:
        lines += [f"== {record['m']}x{record['n']}x{record['k']} ({record['class']}), 8 launch(es) "
                  "per timed sample",
                  "  cuBLAS SGEMM vs fp64 at 64 elements: error 1e-07 (ok)",
                  "  TFLOP/s rounds          IQR/med x cuBLAS [rounds]    error    config",
                  f"    {record['cublas_tflops']:5.2f} [1.00, 2.00]       0.5% 1"
                  "                    -        cuBLAS SGEMM (no TF32)"]
        best = max(row["ratio"] for row in record["rows"])
        for row in record["rows"]:
            mark = "*" if row["ratio"] == best else " "
            lines.append(f"{mark}   {row['tflops']:5.2f} [1.00, 2.00]       0.3% "
                         f"{row['ratio']:.3f} [0.100, 2.000] 1e-07    {row['describe']} "
                         f"({', '.join(row['roles'])})"
                         + ("  <- best" if mark == "*" else ""))
        lines.append("")
    lines += ["== 999x999x999 (small-square), 1 launch(es) per timed sample",
              "  cuBLAS SGEMM vs fp64 at 64 elements: error 1e-07 (ok)"]
    return "\n".join(lines) + "\n"


def run(report, compress=False, cut_to=None):
    """The script on `report` (a JSON-able report or the text of tables), written to a file,
    xz-compressed with `compress` and then cut to its first `cut_to` bytes where given."""
    text = report if isinstance(report, str) else json.dumps(report)
    data = lzma.compress(text.encode()) if compress else text.encode()
    with tempfile.NamedTemporaryFile("wb", suffix=".json.xz" if compress else ".json",
                                     delete=False) as file:
        file.write(data[:cut_to])
    try:
        return subprocess.run([sys.executable, SCRIPT, file.name], capture_output=True, text=True)
    finally:
        os.unlink(file.name)


def main():
    # Ten shapes: defaults 0.50 .. 1.40 by 0.10; shapes 0 and 3 have a config 0.20 and 0.06 above
    # the default (choice misses), shape 5 one 0.04 above (noise, not a miss).
    defaults = [0.50 + 0.10 * index for index in range(10)]
    better = {0: 0.70, 3: 0.86, 5: 1.04}
    # Winners of a tune at the last three, each slower than the default there, so that they
    # change neither the best timed nor the choice's misses.
    tuned = {7: 0.95, 8: 1.10, 9: 1.30}
    shapes = [shape(index, "deep" if index < 4 else "log-uniform", default, better.get(index),
                    tuned.get(index))
              for index, default in enumerate(defaults)]
    # The last log-uniform draw's sizes make it a ragged product.
    shapes[9]["class"] = "ragged"
    report = {"device": "a made-up GPU", "random": {"count": 10, "seed": 7}, "shapes": shapes}
    result = run(report)
    output = result.stdout
    expect(result.returncode == 0, f"exit code {result.returncode}: {result.stderr}", output)
    # Sorted defaults 0.5 .. 1.4: median (of ten) 0.95, 10th percentile the second, 0.60; 6 of
    # 10 reach 0.90.
    expect("| all | 10 | 0.95 | 0.60 | 0.50 | 6 of 10 |" in output, "the overall row", output)
    expect("| deep | 4 | 0.65 | 0.50 | 0.50 | 0 of 4 |" in output, "the deep class's row", output)
    expect("| log-uniform | 6 | 1.15 | 0.90 | 0.90 | 6 of 6 |" in output, "the other class",
           output)
    # By size: the deep four again, the log-uniform draws but the last, and that one as ragged.
    expect("| deep by size | 4 | 0.65 | 0.50 | 0.50 | 0 of 4 |" in output, "deep by size", output)
    expect("| log-uniform by size | 5 | 1.10 | 0.90 | 0.90 | 5 of 5 |" in output,
           "the log-uniform draws by size", output)
    expect("| ragged by size | 1 | 1.40 | 1.40 | 1.40 | 1 of 1 |" in output,
           "the log-uniform draw that is ragged by size", output)
    # By B's alignment: 0.50 .. 1.00 with N % 4 = 0, 1.10 .. 1.40 without.
    expect("| N % 4 = 0 | 6 | 0.75 | 0.50 | 0.50 | 2 of 6 |" in output, "the aligned row", output)
    expect("| N % 4 != 0 | 4 | 1.25 | 1.10 | 1.10 | 4 of 4 |" in output, "the ragged-N row",
           output)
    # Best timed: 0.70, 0.60, 0.70, 0.86, 0.90, 1.04, 1.10, ...: sorted 0.60, 0.70, 0.70, 0.86,
    # 0.90, 1.04, 1.10, 1.20, 1.30, 1.40; median 0.97, 6 of 10 at 0.90.
    expect("| best timed, all | 10 | 0.97 | 0.70 | 0.60 | 6 of 10 |" in output,
           "the best-timed row", output)
    expect("The choice misses on 2 of 10 shapes" in output, "the count of choice misses", output)
    misses = next(line for line in output.splitlines() if "against" in line)
    expect(misses == "100x200x300 0.50x against 0.70x, 103x200x300 0.80x against 0.86x",
           "the choice misses, largest first, and not shape 5's noise", output)
    expect("Tuned (the database's winner timed beside cuBLAS) at 3 of 10 shapes:" in output,
           "the count of tuned shapes", output)
    expect("| tuned | 3 | 1.10 | 0.95 | 0.95 | 2 of 3 |" in output, "the tuned row", output)
    expect("Tuned under 1.00x: 107x201x300 0.95x (default 1.20x, tuned config 7)" in output,
           "the tuned shape under the tuned goal, and only it", output)
    worst = [line.split(" | ")[0] for line in output.splitlines() if line.startswith("| 10")]
    expect(worst == ["| 100x200x300", "| 101x200x300", "| 102x200x300", "| 103x200x300",
                     "| 104x200x300"], "the worst five in order", output)

    printed = run(tables(report))
    expect(printed.returncode == 0, f"exit code {printed.returncode}: {printed.stderr}",
           printed.stdout)
    # The tables name only the class by size: no second set of class rows.
    expect("by size" not in printed.stdout, "no rows by size from the tables", printed.stdout)
    title = printed.stdout.splitlines()[0]
    expect(title.endswith(": a made-up GPU, 10 shapes (1 more started, not finished)"),
           "the tables' device, shapes and the unfinished one", printed.stdout)
    for line in ("| all | 10 | 0.95 | 0.60 | 0.50 | 6 of 10 |",
                 "| best timed, all | 10 | 0.97 | 0.70 | 0.60 | 6 of 10 |",
                 "| deep | 4 | 0.65 | 0.50 | 0.50 | 0 of 4 |",
                 "| N % 4 != 0 | 4 | 1.25 | 1.10 | 1.10 | 4 of 4 |", misses,
                 "| tuned | 3 | 1.10 | 0.95 | 0.95 | 2 of 3 |",
                 "| shape | class | cuBLAS TFLOP/s | default | best timed | default config |"):
        expect(line in printed.stdout, "from the tables: " + line, printed.stdout)

    for compressed in (run(report, compress=True), run(tables(report), compress=True)):
        expect(compressed.returncode == 0 and
               "| all | 10 | 0.95 | 0.60 | 0.50 | 6 of 10 |" in compressed.stdout and misses in
               compressed.stdout, "an xz-compressed report judged as the plain one",
               compressed.stdout + compressed.stderr)
    untuned = dict(report, shapes=[dict(record, rows=[row for row in record["rows"]
                                                      if "tuned" not in row["roles"]])
                                   for record in shapes])
    plain = run(untuned)
    expect(plain.returncode == 0 and "Tuned" not in plain.stdout
           and "| all | 10 | 0.95 | 0.60 | 0.50 | 6 of 10 |" in plain.stdout,
           "no tuned section where no shape has a winner", plain.stdout + plain.stderr)
    one_class = run(dict(report, random={"count": 10, "seed": 7, "class": "ragged"}))
    expect(one_class.returncode == 0 and one_class.stdout.splitlines()[0].endswith(
               ": a made-up GPU, 10 shapes, seed 7, every one drawn ragged"),
           "a one-class draw named in the title", one_class.stdout + one_class.stderr)
    cut = run(report, compress=True, cut_to=200)
    expect(cut.returncode == 1 and "cannot be read" in cut.stderr and "Traceback" not in cut.stderr,
           "a refusal of a compressed report cut short", cut.stderr)

    no_default = dict(report, shapes=[dict(shapes[0], rows=[shapes[0]["rows"][1]])])
    refused = run(no_default)
    expect(refused.returncode != 0 and "100x200x300 has no default row" in refused.stderr,
           "a shape without a default row is refused by name", refused.stderr)
    # Reports that are not the bench's: refused by name, never a traceback.
    for hostile, what in (([1, 2], "no list of shapes"),
                          ({"shapes": [{"m": 1}]}, "shape 0 has no integer n"),
                          (dict(report, random=5), "random is not {count, seed}"),
                          (dict(report, random={"count": 10, "seed": 7, "class": 3}),
                           "random's class is not a name"),
                          (dict(report, shapes=[dict(shapes[0], rows="none")]),
                           "shape 0's rows are not objects with roles, describe and a ratio"),
                          ("neither JSON nor tables\n",
                           "no shapes (neither a bench's JSON nor its tables)")):
        refused = run(hostile)
        expect(refused.returncode == 1 and what in refused.stderr
               and "Traceback" not in refused.stderr, "a refusal: " + what, refused.stderr)
    missing = subprocess.run([sys.executable, SCRIPT, os.path.join(SOURCE, "no-such-report.json")],
                             capture_output=True, text=True)
    expect(missing.returncode == 1 and "no-such-report.json: cannot be read" in missing.stderr,
           "a refusal of a report that cannot be read", missing.stderr)
    print("sgemm_heldout.py: every expectation held")


if __name__ == "__main__":
    main()
