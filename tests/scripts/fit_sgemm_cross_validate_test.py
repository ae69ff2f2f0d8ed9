#!/usr/bin/env python3
"""scripts/fit_sgemm_heuristic.py --cross-validate on two recorded H200 menu benches: one line per
bench, each the share of the best measured that a fit to the other bench reaches there (between 0
and 1), beside the share the script's own constants reach, which must equal what the script
prints for that bench alone; and a refusal without --search or with one bench. Exits non-zero on
the first failed expectation.
"""
import os
import re
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(SOURCE, "scripts", "fit_sgemm_heuristic.py")
BENCHES = [os.path.join(SOURCE, "docs", "perf-data", f"sgemm-menu-{seed}-h200.json")
           for seed in (11, 12)]
LINE = re.compile(r"(\S+): the picks reach ([\d.]+) of the best measured, fitted to the others "
                  r"\(([\d.]+) with the constants given\)")


def run(*arguments):
    return subprocess.run([sys.executable, SCRIPT, *arguments, "--dram-gb-per-s", "4800"],
                          capture_output=True, text=True)


def expect(condition, what, output):
    if not condition:
        sys.exit(f"FAILED: {what}\n--- output:\n{output}")


def given_share(bench):
    """The mean of measured/best over the bench's shapes with the script's constants."""
    output = run(bench).stdout
    shares = []
    for line in output.splitlines():
        found = re.search(r"measured +([\d.na]+) best +([\d.]+) TFLOP/s", line)
        if found:
            got = float(found.group(1))
            shares.append(0.0 if got != got else got / float(found.group(2)))
    expect(shares, "per-shape lines for " + bench, output)
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
    for arguments in ([*BENCHES, "--cross-validate"], [BENCHES[0], "--search", "5",
                                                       "--cross-validate"]):
        refused = run(*arguments)
        expect(refused.returncode == 2 and "--cross-validate needs --search N and two benches"
               in refused.stderr, "a refusal naming what cross-validation needs", refused.stderr)
    print("fit_sgemm_heuristic.py --cross-validate: every expectation held")


if __name__ == "__main__":
    main()
