#!/usr/bin/env python3
"""scripts/fit_sgemm_heuristic.py --constant: a constant set on the command line moves the model's
picks the way its meaning says (a split's fixed cost near zero splits a small square, a tenth of
a second of it splits nothing), reaches the judgement of a bench (the same judgement of the bench
xz-compressed), and a setting that names no
constant or gives no positive number is refused, naming it. Exits non-zero on the first failed
expectation.
"""
import lzma
import os
import re
import tempfile

from script_checks import SOURCE, expect, run_script

SCRIPT = os.path.join(SOURCE, "scripts", "fit_sgemm_heuristic.py")
BENCH = os.path.join(SOURCE, "docs", "perf-data", "sgemm-heldout-2424-h200.json.xz")
# 300³ fills 132 SMs with small tiles for a round or so: whether it splits rests on the split's
# fixed cost. 64x64x65536 cannot fill them without splitting K.
SMALL_SQUARE = "300x300x300"
DEEP = "64x64x65536"


def run(*arguments):
    return run_script(SCRIPT, *arguments)


def split_of(output, shape):
    found = re.search(rf"^{shape} .*SPLIT_K=(\d+)", output, re.MULTILINE)
    expect(found is not None, f"a pick at {shape}", output)
    return int(found.group(1))


def main():
    free = run("--pick", SMALL_SQUARE, "--pick", DEEP, "--constant", "reduce_launch_ms=1e-9")
    expect(free.returncode == 0, f"exit code {free.returncode}: {free.stderr}", free.stdout)
    expect(split_of(free.stdout, SMALL_SQUARE) > 1, "a split of a small square when splits cost "
           "no launch", free.stdout)
    dear = run("--pick", SMALL_SQUARE, "--pick", DEEP, "--constant", "reduce_launch_ms=100")
    expect(dear.returncode == 0, f"exit code {dear.returncode}: {dear.stderr}", dear.stdout)
    expect(split_of(dear.stdout, SMALL_SQUARE) == 1 and split_of(dear.stdout, DEEP) == 1,
           "no split anywhere when a split costs 100 ms", dear.stdout)
    # The same bench judged with two settings of one constant: the picks differ somewhere.
    judged = [run(BENCH, "--constant", f"reduce_launch_ms={value}") for value in ("1e-9", "100")]
    for result in judged:
        expect(result.returncode == 0, f"exit code {result.returncode}: {result.stderr}",
               result.stdout)
        expect("measured picks against cuBLAS" in result.stdout, "a judgement of the bench",
               result.stdout)
    expect(judged[0].stdout != judged[1].stdout, "picks that move with the constant",
           judged[0].stdout)
    with open(BENCH, "rb") as compressed, tempfile.TemporaryDirectory() as folder:
        plain = os.path.join(folder, "bench.json")
        with open(plain, "wb") as file:
            file.write(lzma.decompress(compressed.read()))
        unpacked = run(plain, "--constant", "reduce_launch_ms=1e-9")
    same = unpacked.stdout == judged[0].stdout.replace(BENCH, plain)
    expect(unpacked.returncode == 0 and same, "the compressed bench judged as the plain one",
           unpacked.stdout + unpacked.stderr)
    for setting, message in (("nope=1", "'nope' is none of the model's constants"),
                             ("reduce_launch_ms=abc", "reduce_launch_ms takes a positive number"),
                             ("reduce_launch_ms=-1", "reduce_launch_ms takes a positive number"),
                             ("reduce_launch_ms=nan", "reduce_launch_ms takes a positive number"),
                             ("reduce_launch_ms", "reduce_launch_ms takes a positive number")):
        refused = run("--pick", SMALL_SQUARE, "--constant", setting)
        expect(refused.returncode == 2 and message in refused.stderr,
               f"a refusal of --constant {setting}, naming it", refused.stderr)
    print("fit_sgemm_heuristic.py --constant: every expectation held")


if __name__ == "__main__":
    main()
