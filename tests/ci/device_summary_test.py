#!/usr/bin/env python3
"""ci/device_summary.py, the summary ci/device_check.sh ends with, on canned inputs (no device needed).

usage: device_summary_test.py DEVICE_SUMMARY_PY WORK_DIR

Each kind of input is read and stated (a failed step, the device tests' counts with a failure and a skip, a
campaign's cases/s, its unexpected groups by name and the LibTorch release that judged it, impl-cpu as a judge, the
throughput's goal, the benchmark's goals of both kinds), and a missing or malformed input is named as such while
the rest of the summary still prints.
"""
import json
import os
import shutil
import subprocess
import sys

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"device_summary: FAIL: {message}", file=sys.stderr)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run_json(oracle, groups, cases=3000):
    return json.dumps({"cases": cases, "cases_per_second": 8123.4, "device": "cuda", "jobs": 16, "oracle": oracle,
                       "libtorch_version": "2.11.0", "groups": groups})


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    script, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    write(f"{work}/summary.txt", "== configure: cmake ...\n   exit 0 after 20 s\n== device_tests: x\n"
                                 "   exit 1 after 30 s\n== throughput: y\n   exit 0 after 45 s\n")
    write(f"{work}/tests.xml", '<?xml version="1.0"?>\n<testsuites tests="5" failures="1" disabled="0" errors="0">'
                               '<testsuite name="A" tests="5"><testcase name="a"/><testcase name="b"/>'
                               '<testcase name="c"><failure message="m"/></testcase>'
                               '<testcase name="d"><skipped message="no device"/></testcase><testcase name="e"/>'
                               '</testsuite></testsuites>\n')
    write(f"{work}/cuda/run.json", run_json("libtorch", [
        {"signature": "pow:values", "expected": False}, {"signature": "clamp_:error_message", "expected": True}]))
    write(f"{work}/impl-cpu/run.json", run_json("impl-cpu", []))
    write(f"{work}/broken/run.json", json.dumps({"cases": "many", "cases_per_second": 1, "groups": []}))
    write(f"{work}/throughput.json", json.dumps({
        "cores": 16, "seconds_per_mode": 10,
        "modes": {"cpu_16": {"cases_per_second": 52000.0}, "cuda_16": {"cases_per_second": 8123.4}},
        "ratios": {"cuda cases/s per worker": {"value": 507.7, "goal": 500, "met": True},
                   "cuda_16 / cpu_16": {"value": 0.156}}}))
    write(f"{work}/kernels-cuda.json", json.dumps({
        "goals_met": 1, "goals_total": 2, "releases": [{"libtorch_version": "2.11.0"}],
        "rows": [{"scenario": "clone_1gib", "title": "clone, 1 GiB float", "goal": 0.8, "goal_kind": "ceiling_fraction",
                  "pass": True, "releases": {"2.11.0": {"ratio": 0.9, "impl_fraction": 0.85}}},
                 {"scenario": "sum_256m", "title": "sum of 256M floats", "goal": 0.5, "goal_kind": "ratio",
                  "pass": False, "releases": {"2.11.0": {"ratio": 0.2, "impl_fraction": 0.19}}}]}))
    p = subprocess.run([sys.executable, script, "--steps", f"{work}/summary.txt", "--tests", f"{work}/tests.xml",
                        "--campaign", f"cuda={work}/cuda", "--campaign", f"cuda-impl-cpu={work}/impl-cpu",
                        "--campaign", f"gone={work}/gone", "--campaign", f"broken={work}/broken",
                        "--throughput", f"{work}/throughput.json", "--kernels", f"{work}/kernels-cuda.json"],
                       capture_output=True, text=True, timeout=60)
    out = p.stdout
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check("steps: 2 of 3 passed in 95 s; failed: device_tests (exit 1)" in out, f"steps line:\n{out}")
    check("device tests: 3 passed, 1 failed, 1 skipped (of 5)" in out, f"tests line:\n{out}")
    check("cuda: 3000 cases on cuda, 8123.4 cases/s with 16 workers, judged by LibTorch 2.11.0: 1 unexpected "
          "group(s) of 2" in out and "unexpected: pow:values" in out and "clamp_:error_message" not in out,
          f"cuda campaign:\n{out}")
    check("cuda-impl-cpu: 3000 cases on cuda, 8123.4 cases/s with 16 workers, judged by impl on the CPU: 0 "
          "unexpected" in out, f"impl-cpu campaign:\n{out}")
    check(f"gone: no {work}/gone/run.json (its step failed or did not run)" in out, f"missing campaign:\n{out}")
    check(f"broken: {work}/broken/run.json: cases is not a number" in out, f"malformed campaign:\n{out}")
    check("cuda_16 8123.4/s" in out and "cuda cases/s per worker: 508 (goal >= 500: met)" in out,
          f"throughput:\n{out}")
    check("1 of 2 goals met" in out and "impl at 85% of the ceiling (goal impl >= 80% of the ceiling: PASS)" in out
          and "sum of 256M floats: ratio 0.2x, impl at 19% of the ceiling (goal >= 0.5x: FAIL)" in out,
          f"benchmark:\n{out}")
    # Nothing but missing inputs: each named, still exit 0.
    p = subprocess.run([sys.executable, script, "--tests", f"{work}/none.xml", "--kernels", f"{work}/none.json",
                        "--throughput", f"{work}/none.json"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "device tests: no" in p.stdout and "device benchmark: no" in p.stdout
          and "throughput: no" in p.stdout, f"all missing: exit {p.returncode}:\n{p.stdout}{p.stderr}")
    p = subprocess.run([sys.executable, script, "--campaign", "nofolder"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "NAME=FOLDER" in p.stderr, f"bad --campaign: exit {p.returncode}, {p.stderr!r}")
    if failures:
        print(f"device_summary: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("device_summary: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
