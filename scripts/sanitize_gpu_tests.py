#!/usr/bin/env python3
"""Runs CTest's GPU tests under compute-sanitizer's memcheck, racecheck, synccheck and initcheck.

Each (tool, test) pair is its own process and several run at once on the one GPU: the tools are
slow, a run on a GPU machine may be short, and a case that hangs under a tool then shows by name
instead of hiding the rest. The commands come from CTest itself (--show-only=json-v1), so every
registered GPU test is covered, whichever executable it runs. The tools run with their defaults
(plus --error-exitcode), so every failed CUDA API call is reported, as it is in an application's
own sanitizer run: ptxrt makes no call that fails by design. The tests that fail on purpose are
left out by --exclude, by name: those whose kernels fault ("fault": the tools would report the
planted fault) and those that make the driver refuse a call ("the driver refuses": an unknown
name, too much memory, no visible device). The tests see PTXRT_UNDER_COMPUTE_SANITIZER and shrink
their largest inputs (tests/gpu/gpu_fixture.hpp).

    scripts/sanitize_gpu_tests.py BUILD_DIR LOG_DIR [--regex R] [--exclude E] [--tools T,...]
                                  [--jobs N] [--timeout S] [--deadline S]
                                  [--skip-passed RESULTS_JSON]

Prints a line per tool and each case that failed; exits 1 if any did.
"""
import argparse
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import time

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
# The names of the GPU tests that fail on purpose (a faulting kernel, a call the driver refuses).
FAIL_ON_PURPOSE = "fault|driver refuses"
# memcheck, synccheck, initcheck: "ERROR SUMMARY: 0 errors"; racecheck:
# "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)". A test that starts the CLI gets
# one summary per process (compute-sanitizer follows children), so they are summed. Past the print
# limit a second line follows, "ERROR SUMMARY: N errors were not printed": not a summary.
ERRORS = re.compile(r"ERROR SUMMARY: (\d+) errors?$|RACECHECK SUMMARY: \d+ hazards displayed \((\d+) errors, (\d+) warnings\)", re.MULTILINE)


def ctest_gpu_tests(build, regex, exclude):
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1", "-R", regex, "-E", exclude],
                             check=True, capture_output=True, text=True).stdout
    tests = []
    for test in json.loads(listing)["tests"]:
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        environment = dict(os.environ, PTXRT_UNDER_COMPUTE_SANITIZER="1")
        for assignment in properties.get("ENVIRONMENT", []):
            key, _, value = assignment.partition("=")
            environment[key] = value
        tests.append({"name": test["name"], "command": test["command"],
                      "cwd": properties.get("WORKING_DIRECTORY", build),
                      "skip": properties.get("SKIP_RETURN_CODE"), "env": environment})
    return tests


def sanitize(tool, index, test, log_dir, timeout, deadline):
    log_path = os.path.join(log_dir, f"{tool}-{index:03d}.log")
    timeout = min(timeout, deadline - time.monotonic())
    if timeout <= 0:
        return {"tool": tool, "name": test["name"], "rc": "not run (deadline)", "seconds": 0,
                "summaries": 0, "errors": 0, "skipped": False, "log": None}
    command = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", *test["command"]]
    started = time.monotonic()
    with open(log_path, "w") as log:
        log.write(f"# {test['name']}\n# {' '.join(command)}\n")
        log.flush()
        # A session of its own, so that a timeout stops the test and the processes it started too.
        process = subprocess.Popen(command, cwd=test["cwd"], env=test["env"], stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            rc = f"timeout after {timeout:.0f} s"
    with open(log_path, errors="replace") as log:
        text = log.read()
    summaries = ERRORS.findall(text)
    errors = sum(int(a or 0) + int(b or 0) + int(c or 0) for a, b, c in summaries)
    return {"tool": tool, "name": test["name"], "rc": rc, "seconds": time.monotonic() - started,
            "summaries": len(summaries), "errors": errors, "skipped": rc == test["skip"],
            "log": os.path.basename(log_path)}


def is_clean(result):
    return result["rc"] == 0 and result["errors"] == 0 and result["summaries"] > 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("logs")
    parser.add_argument("--regex", default="^gpu:", help="CTest -R: the tests to run")
    parser.add_argument("--exclude", default=FAIL_ON_PURPOSE, help="CTest -E: the tests left out")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help="the tools to run, comma-separated (default: all four)")
    parser.add_argument("--jobs", type=int, default=12, help="sanitizer processes at once")
    parser.add_argument("--timeout", type=float, default=420, help="seconds per (tool, test)")
    parser.add_argument("--deadline", type=float, default=float("inf"),
                        help="seconds after which nothing more starts and what runs is stopped")
    parser.add_argument("--skip-passed", metavar="RESULTS_JSON",
                        help="an earlier run's results.json: the (tool, test) pairs clean there are not run again")
    args = parser.parse_args()
    tools = [tool for tool in TOOLS if tool in args.tools.split(",")]
    if not tools or len(tools) != len(args.tools.split(",")):
        parser.error(f"--tools takes some of {','.join(TOOLS)}, got {args.tools}")

    tests = ctest_gpu_tests(args.build, args.regex, args.exclude)
    if not tests:
        print(f"compute-sanitizer: no test in {args.build} matches --regex {args.regex!r} "
              f"(--exclude {args.exclude!r}); `ctest --test-dir {args.build} -N` lists them")
        return 2
    earlier = []
    if args.skip_passed:
        with open(args.skip_passed) as previous:
            earlier = [r for r in json.load(previous) if is_clean(r)]
    done = {(r["tool"], r["name"]) for r in earlier}
    log_dir = os.path.join(args.logs, "sanitizer")
    os.makedirs(log_dir, exist_ok=True)
    started = time.monotonic()
    deadline = started + args.deadline
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(sanitize, tool, index, test, log_dir, args.timeout, deadline)
                   for index, test in enumerate(tests) for tool in tools
                   if (tool, test["name"]) not in done]
        results = [future.result() for future in futures]
    names = {test["name"] for test in tests}
    results += [dict(r, earlier=True) for r in earlier if r["name"] in names]

    with open(os.path.join(log_dir, "results.json"), "w") as out:
        json.dump(results, out, indent=1)
    failed = [r for r in results if not is_clean(r)]
    print(f"compute-sanitizer: {len(tests)} GPU tests x {len(tools)} tools, {args.jobs} at once, "
          f"{time.monotonic() - started:.0f} s" + (f", {len(earlier)} clean in {args.skip_passed}" if earlier else ""))
    for tool in tools:
        mine = [r for r in results if r["tool"] == tool]
        passed = sum(r["rc"] == 0 for r in mine)
        skipped = sum(r["skipped"] for r in mine)
        slowest = max(mine, key=lambda r: r["seconds"])
        print(f"  {tool}: {passed}/{len(mine)} passed ({sum('earlier' in r for r in mine)} earlier), {skipped} skipped, "
              f"{sum(r['errors'] for r in mine)} errors in {sum(r['summaries'] for r in mine)} process summaries; "
              f"slowest {slowest['seconds']:.0f} s ({slowest['name']})")
    for r in failed:
        print(f"  FAILED {r['tool']} rc {r['rc']} errors {r['errors']} summaries {r['summaries']}: "
              f"{r['name']} ({r['log']})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
