#!/usr/bin/env python3
"""scripts/fit_sgemm_heuristic.py --refit tf32x3, --entry and --ffma-only: a search of the tensor
cores' rates moves their rates and no constant or FFMA rate (with --entry, one tile's rates alone;
with --entry by constants, those entries' alone and no constant), an --entry that names no entry
or is malformed is refused, --ffma-only picks the FFMAs where the full menu picks the tensor cores,
and the two together are refused. Exits non-zero on the first failed expectation.
"""
import ast
import os
import re

from script_checks import SOURCE, expect, import_script, run_script

SCRIPT = os.path.join(SOURCE, "scripts", "fit_sgemm_heuristic.py")
BENCH = os.path.join(SOURCE, "docs", "perf-data", "sgemm-menu-tf32-aligned-h200.json.xz")
# A product where the full menu picks the tensor cores (docs/perf-notes.md: 1.25x cuBLAS there).
ALIGNED = "5000x800x2000"


def run(*arguments):
    return run_script(SCRIPT, *arguments)


def printed(output, label):
    found = re.search(rf"^{label}: (.*)$", output, re.MULTILINE)
    expect(found is not None, f"a '{label}:' line", output)
    return ast.literal_eval(found.group(1))


def main():
    fit = import_script("fit_sgemm_heuristic")
    searched = run(BENCH, "--dram-gb-per-s", "4800", "--search", "40", "--seed", "1",
                   "--refit", "tf32x3")
    expect(searched.returncode == 0, f"exit code {searched.returncode}: {searched.stderr}")
    given = {name: float(f"{value:.4g}") for name, value in fit.CONSTANTS.items()}
    expect(printed(searched.stdout, "constants") == given, "the constants as given",
           searched.stdout)
    rates = printed(searched.stdout, "menu rates")
    start = [(round(entry[1], 2), round(entry[2], 2)) for entry in fit.MENU]
    tensor_cores = fit.fitted("tf32x3")
    expect(len(tensor_cores) > 0 and all(rates[i] == start[i] for i in fit.fitted("ffma")),
           "every FFMA rate as given", searched.stdout)
    expect(any(rates[i] != start[i] for i in tensor_cores), "a tensor-core rate moved",
           searched.stdout)
    # --entry: the search moves the rates of that tile's tensor-core entry and no other.
    one = run(BENCH, "--dram-gb-per-s", "4800", "--search", "40", "--seed", "1", "--refit",
              "tf32x3", "--entry", "32x128")
    expect(one.returncode == 0, f"--entry 32x128: exit code {one.returncode}: {one.stderr}")
    moved = [i for i, rate in enumerate(printed(one.stdout, "menu rates")) if rate != start[i]]
    entry = [i for i in tensor_cores if fit.tile(fit.MENU[i][0])[:2] == (32, 128)]
    expect(len(entry) == 1 and moved == entry, "only the 32x128 entry's rates moved", one.stdout)
    unknown = run(BENCH, "--search", "1", "--refit", "tf32x3", "--entry", "48x48")
    expect(unknown.returncode == 2 and "--entry 48x48: no tf32x3 entry" in unknown.stderr,
           "an --entry no entry has refused, naming it", unknown.stderr)
    # --entry by sgemm.cu's constants, repeated: the two short-K FFMA entries' rates move, no
    # other rate and no constant (an --entry's fit keeps the rest of the model as it is).
    short_k = ["WARPS_M=4,WARPS_N=1,BK=8,STAGES=4,MIN_BLOCKS=3",
               "WARPS_M=2,WARPS_N=2,LANES_M=4,TM=8,TN=8,BK=16,MIN_BLOCKS=4"]
    two = run(BENCH, "--dram-gb-per-s", "4800", "--search", "40", "--seed", "1",
              "--entry", short_k[0], "--entry", short_k[1])
    expect(two.returncode == 0, f"--entry {short_k}: exit code {two.returncode}: {two.stderr}")
    expect(printed(two.stdout, "constants") == given, "the constants as given", two.stdout)
    moved = [i for i, rate in enumerate(printed(two.stdout, "menu rates")) if rate != start[i]]
    entries = [i for i in fit.fitted("ffma") if fit.MENU[i][0][:8] in
               ((4, 1, 4, 8, 8, 8, 4, 3), (2, 2, 4, 8, 8, 16, 3, 4))]
    expect(len(entries) == 2 and moved and set(moved) <= set(entries),
           "only the two short-K entries' rates moved", two.stdout)
    for text, message in (("BK=7", "--entry BK=7: no ffma entry of the menu has that config"),
                          ("TILE=8", "MxN, or NAME=VALUE,... with each of"),
                          ("BK=8,BK=16", "MxN, or NAME=VALUE,... with each of")):
        refused = run(BENCH, "--search", "1", "--entry", text)
        expect(refused.returncode == 2 and message in refused.stderr,
               f"--entry {text} refused, naming it", refused.stderr)
    full = run("--pick", ALIGNED)
    expect(full.returncode == 0 and "TF32X3=1" in full.stdout,
           f"the full menu's pick at {ALIGNED} on the tensor cores", full.stdout + full.stderr)
    ffma = run("--pick", ALIGNED, "--ffma-only")
    expect(ffma.returncode == 0 and "TF32X3=0" in ffma.stdout,
           f"--ffma-only's pick at {ALIGNED} on the FFMAs", ffma.stdout + ffma.stderr)
    refused = run(BENCH, "--search", "1", "--refit", "tf32x3", "--ffma-only")
    expect(refused.returncode == 2 and "--refit tf32x3 fits the tensor cores, which --ffma-only "
           "leaves out" in refused.stderr, "--refit tf32x3 with --ffma-only refused, saying why",
           refused.stderr)
    print("fit_sgemm_heuristic.py --refit and --ffma-only: every expectation held")


if __name__ == "__main__":
    main()
