#!/usr/bin/env python3
"""scripts/sanitize_gpu_tests.py against a stand-in compute-sanitizer, over the GPU tests this
build's CTest lists: every tool runs with its defaults (API errors reported) plus --error-exitcode,
every tool's errors are counted (several process summaries summed, racecheck's own wording), a
test that hangs is stopped and named, the tests see PTXRT_UNDER_COMPUTE_SANITIZER, --skip-passed
runs only what was not clean, --tools picks the tools, by default exactly the tests that fail on
purpose (named "fault" or "the driver refuses") are left out, and a regex that matches no test is
an error that names it. Exits non-zero on the first failed expectation.

    sanitize_gpu_tests_test.py BUILD_DIR
"""
import json
import os
import stat
import subprocess
import sys
import tempfile

from script_checks import SOURCE, expect

RUNNER = os.path.join(SOURCE, "scripts", "sanitize_gpu_tests.py")

# Stands in for compute-sanitizer: --tool T --error-exitcode 99 COMMAND... It records each call
# (its options, then the command) and answers by tool and test name instead of running the test;
# with STAND_IN_CLEAN set every answer is clean.
STAND_IN = r'''#!/usr/bin/env python3
import os, sys, time
tool, options, command = sys.argv[2], " ".join(sys.argv[1:5]), " ".join(sys.argv[5:])
with open(os.environ["STAND_IN_CALLS"], "a") as calls:
    calls.write(tool + "\t" + options + "\t" + command + "\n")
if os.environ.get("PTXRT_UNDER_COMPUTE_SANITIZER") != "1":
    print("the test would run at full size"); sys.exit(3)
clean = "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" if tool == "racecheck" \
    else "ERROR SUMMARY: 0 errors"
if not os.environ.get("STAND_IN_CLEAN"):
    if tool == "racecheck" and "vecadd" in command:
        print("========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warnings)"); sys.exit(99)
    if tool == "memcheck" and "transpose" in command:  # the test and a CLI it started
        print("========= ERROR SUMMARY: 1 error\n========= ERROR SUMMARY: 2 errors\n"
              "========= ERROR SUMMARY: 1 errors were not printed. Use --print-limit option to adjust "
              "the number of printed errors"); sys.exit(99)
    if tool == "synccheck" and "reduce" in command:
        time.sleep(60)
print("========= " + clean)
'''


def run(build, work, *extra, clean=False, regex="^gpu:sanitize: "):
    environment = dict(os.environ, PATH=work + os.pathsep + os.environ["PATH"],
                       STAND_IN_CALLS=os.path.join(work, "calls.txt"))
    environment.pop("PTXRT_UNDER_COMPUTE_SANITIZER", None)
    if clean:
        environment["STAND_IN_CLEAN"] = "1"
    open(environment["STAND_IN_CALLS"], "w").close()
    result = subprocess.run([sys.executable, RUNNER, build, os.path.join(work, "logs"), "--regex",
                             regex, "--jobs", "8", "--timeout", "3", *extra],
                            env=environment, capture_output=True, text=True)
    with open(environment["STAND_IN_CALLS"]) as calls:
        return result, [line.split("\t") for line in calls.read().splitlines()]


def listed(build, regex):
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1", "-R", regex],
                             check=True, capture_output=True, text=True).stdout
    return [test["name"] for test in json.loads(listing)["tests"]]


def check_default_exclusion(build, work):
    """With no --exclude, the bad-input tests run but for those that fault or that the driver
    refuses on purpose; --tools memcheck runs that tool alone."""
    every = listed(build, "^gpu:bad inputs: ")
    on_purpose = [name for name in every if "fault" in name or "the driver refuses" in name]
    expect(any("fault" in name for name in on_purpose) and
           any("the driver refuses" in name for name in on_purpose),
           f"the bad-input tests include both kinds that fail on purpose: {every}")
    result, calls = run(build, work, "--tools", "memcheck", clean=True, regex="^gpu:bad inputs: ")
    output = result.stdout + result.stderr
    expect(result.returncode == 0, f"a clean run exits 0, got {result.returncode}", output)
    with open(os.path.join(work, "logs", "sanitizer", "results.json")) as saved:
        ran = {r["name"] for r in json.load(saved)}
    expect(ran == set(every) - set(on_purpose),
           f"run: {sorted(ran)}; expected all but {sorted(on_purpose)}", output)
    expect(sorted(tool for tool, _, _ in calls) == ["memcheck"] * len(ran),
           f"each under memcheck alone, once: {calls}", output)


def main():
    build = os.path.abspath(sys.argv[1])
    tests = listed(build, "^gpu:sanitize: ")
    if not tests:  # a build of the CPU tests alone (scripts/test.sh --sanitizers)
        print("sanitize_gpu_tests: skipped, this build has not built ptxrt_gpu_tests")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as work:
        stand_in = os.path.join(work, "compute-sanitizer")
        with open(stand_in, "w") as out:
            out.write(STAND_IN)
        os.chmod(stand_in, os.stat(stand_in).st_mode | stat.S_IXUSR)

        result, calls = run(build, work)
        output = result.stdout + result.stderr
        expect(result.returncode == 1, f"a run with errors exits 1, got {result.returncode}", output)
        expect(len(calls) == 4 * len(tests), f"each test under each tool once, got {len(calls)} calls", output)
        expect(all(options == f"--tool {tool} --error-exitcode 99" for tool, options, _ in calls),
               f"the tools run with their defaults, API errors reported: {sorted({c[1] for c in calls})}",
               output)
        expect("racecheck: " in output and "3 errors" in output, "racecheck's errors and warnings are counted", output)
        failed = [line for line in output.splitlines() if line.strip().startswith("FAILED")]
        expect(len(failed) == 3, "three (tool, test) pairs fail", output)
        expect(any("racecheck rc 99 errors 3" in line and "vecadd" in line for line in failed),
               "the racecheck failure names its test and counts 3", output)
        expect(any("memcheck rc 99 errors 3 summaries 2" in line and "transpose" in line for line in failed),
               "two process summaries are summed, and the print limit's line is not one", output)
        expect(any("synccheck rc timeout after 3 s" in line and "reduce" in line for line in failed),
               "a hung test is stopped and named", output)
        with open(os.path.join(work, "logs", "sanitizer", "results.json")) as saved:
            results = json.load(saved)
        expect(len(results) == 4 * len(tests), "results.json holds every pair", output)

        again, calls = run(build, work, "--skip-passed", os.path.join(work, "logs", "sanitizer", "results.json"),
                           clean=True)
        output = again.stdout + again.stderr
        expect(again.returncode == 0, f"the resumed run is clean, got {again.returncode}", output)
        rerun = sorted(tool for tool, _, _ in calls)
        expect(rerun == ["memcheck", "racecheck", "synccheck"], f"only the three failed pairs rerun, got {rerun}", output)
        expect(f"{4 * len(tests) - 3} clean in" in output, "the summary counts the earlier clean pairs", output)

        check_default_exclusion(build, work)

        # CTest names the GPU tests "gpu:NAME": a regex with "gpu: " matches none of them.
        nothing, calls = run(build, work, clean=True, regex="^gpu: sanitize: ")
        output = nothing.stdout + nothing.stderr
        expect(nothing.returncode == 2 and not calls,
               f"a regex that matches no test exits 2 and runs nothing, got {nothing.returncode}",
               output)
        expect("no test in" in output and "'^gpu: sanitize: '" in output,
               "the message names the regex that matched nothing", output)
    print("sanitize_gpu_tests: all expectations hold")


if __name__ == "__main__":
    main()
