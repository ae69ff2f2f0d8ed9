#!/usr/bin/env python3
"""scripts/fit_sgemm_heuristic.py --cross-validate on two recorded H200 menu benches: one line per
bench, each the share of the best measured that a fit to the other bench reaches there (between 0
and 1), beside the share the script's own constants reach, which must equal what the script
prints for that bench alone; a shape two benches timed judged with the later bench's rows; a
refusal without --search or with one bench, and of a bench of a device with other than 132 SMs;
--help; a split --few-blocks-slice-depth rates where the model's depth does not.
Exits non-zero on the first failed expectation.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from script_checks import SOURCE, expect, import_script

SCRIPT = os.path.join(SOURCE, "scripts", "fit_sgemm_heuristic.py")
BENCHES = [os.path.join(SOURCE, "docs", "perf-data", f"sgemm-menu-{seed}-h200.json.xz")
           for seed in (11, 12)]
# Nine of its shapes are seed 11's and 12's, timed again with the configs the menu gained since.
LATER = os.path.join(SOURCE, "docs", "perf-data", "sgemm-menu-narrow-h200.json.xz")
read_text = import_script("sgemm_heldout").read_text
LINE = re.compile(r"(\S+): the picks reach ([\d.]+) of the best measured, fitted to the others "
                  r"\(([\d.]+) with the constants given\)")


def run(*arguments):
    return subprocess.run([sys.executable, SCRIPT, *arguments, "--dram-gb-per-s", "4800"],
                          capture_output=True, text=True)


def given_share(bench, *later, options=()):
    """The mean of measured/best over the bench's shapes with the script's constants, each shape
    with the rows of the last of `bench` and `later` that timed it; `options` go to the script."""
    output = run(bench, *later, *options).stdout
    shapes = {(record["m"], record["n"], record["k"])
              for record in json.loads(read_text(bench))["shapes"]}
    shares = []
    for line in output.splitlines():
        found = re.search(r"(\d+)x(\d+)x(\d+): .*measured +([\d.na]+) best +([\d.]+) TFLOP/s",
                          line)
        if found and tuple(int(size) for size in found.group(1, 2, 3)) in shapes:
            got = float(found.group(4))
            shares.append(0.0 if got != got else got / float(found.group(5)))
    expect(len(shares) == len(shapes), "per-shape lines for " + bench, output)
    return sum(shares) / len(shares)


def main():
    result = run(*BENCHES, "--search", "30", "--seed", "2", "--cross-validate")
    output = result.stdout
    expect(result.returncode == 0, f"exit code {result.returncode}: {result.stderr}", output)
    lines = [LINE.fullmatch(line) for line in output.splitlines()]
    expect(len(lines) == 2 and all(lines), "one line per bench", output)
    for match, bench in zip(lines, BENCHES):
        expect(match.group(1) == bench, "the benches in the order given", output)
        fitted, given = float(match.group(2)), float(match.group(3))
        expect(0.0 < fitted <= 1.0 and 0.0 < given <= 1.0, "shares between 0 and 1", output)
        # Rates print with two decimals, so the recomputed share moves in the third.
        expect(abs(given - given_share(bench)) < 0.005, "the given constants' share, as the "
               "script prints it for the bench alone", output)
    # A shape two benches timed is judged with the later bench's rows, which time configs the
    # earlier one did not: seed 11's share moves. The FFMA menu alone, which both benches timed
    # whole, so that the tensor cores' entries (neither bench timed the later ones) leave the
    # shares alone.
    ffma = ("--ffma-only",)
    output = run(BENCHES[0], LATER, "--search", "30", "--seed", "2", "--cross-validate",
                 *ffma).stdout
    lines = [LINE.fullmatch(line) for line in output.splitlines()]
    expect(len(lines) == 2 and all(lines), "one line per bench", output)
    given = float(lines[0].group(3))
    expect(abs(given - given_share(BENCHES[0], LATER, options=ffma)) < 0.005,
           "the given constants' share on seed 11 with the later bench's rows", output)
    expect(abs(given - given_share(BENCHES[0], options=ffma)) > 0.01,
           "a share other than with seed 11's own rows", output)
    for arguments in ([*BENCHES, "--cross-validate"], [BENCHES[0], "--search", "5",
                                                       "--cross-validate"]):
        refused = run(*arguments)
        expect(refused.returncode == 2 and "--cross-validate needs --search N and two benches"
               in refused.stderr, "a refusal naming what cross-validation needs", refused.stderr)
    # The model counts an H100's 132 SMs: a bench of another device is refused, naming it.
    with tempfile.TemporaryDirectory() as folder:
        other = os.path.join(folder, "other-device.json")
        report = json.loads(read_text(BENCHES[0]))
        report["sm_count"] = 114
        json.dump(report, open(other, "w"))
        refused = run(other)
        expect(refused.returncode != 0 and f"{other}: a device of 114 SMs" in refused.stderr,
               "a refusal of a bench of 114 SMs, naming it", refused.stderr)
    # --help documents every switch (its text holds a percentage, which argparse formats).
    shown = run("--help")
    expect(shown.returncode == 0 and all(switch in shown.stdout for switch in (
        "--cross-validate", "--keep-best-at", "--min-slice-depth", "--few-blocks-slice-depth")),
           "--help listing the switches", shown.stdout + shown.stderr)
    # 32x128 tiles cover 32x3310 in 26 blocks: at K = 291, slices of 73 (split 4) fall under the
    # model's 128 but pass --few-blocks-slice-depth 64, the split's 104 blocks one round of 132 SMs.
    picks = [run("--pick", "32x3310x291", *switch).stdout for switch in
             ([], ["--few-blocks-slice-depth", "64"])]
    plain_split = int(re.search(r"SPLIT_K=(\d+)", picks[0]).group(1))
    split = re.search(r"WARPS_M=1 WARPS_N=4 .*SPLIT_K=4 TF32X3=[01]$", picks[1].strip())
    expect(-(-291 // plain_split) >= 128 and split,
           "slices 128 deep or more, then a split of 73-deep slices with the switch",
           "".join(picks))
    print("fit_sgemm_heuristic.py --cross-validate: every expectation held")


if __name__ == "__main__":
    main()
