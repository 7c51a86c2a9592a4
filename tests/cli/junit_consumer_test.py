#!/usr/bin/env python3
"""Reads the JUnit XML of `parity fuzz --junit` and `parity replay --all --junit` with junitparser, a JUnit
consumer from PyPI, as a CI dashboard would, and checks what it finds there.

1. A planted campaign (PARITY_PLANT) with --junit: one test case for the campaign and one per group, the planted
   groups failed with their signature and first difference.
2. `replay --all` of a folder holding three findings: one whose fault is gone (it agrees now: passed), one whose
   fault is still planted (it still diverges: failed), and one that a ledger given with --known expects (skipped,
   naming the entry). The exit status is 1, for the one that still diverges.

usage: junit_consumer_test.py --parity BIN --work DIR      exit status: 0 passed, 1 failed
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

try:
    from junitparser import Error, Failure, JUnitXml, Skipped
except ImportError as e:
    sys.exit(f"junit_consumer: cannot import junitparser ({e}); ci/setup.sh installs it "
             f"(python3 -m pip install 'junitparser>=3.1')")

# Three planted faults, one per verdict the replay gives: mul's is gone at replay, neg's still planted, sub's
# expected by the test's own ledger.
CAMPAIGN_PLANT = "mul=values,neg=error,sub=values"
REPLAY_PLANT = "neg=error,sub=values"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(cmd, env_plant=None):
    env = {k: v for k, v in os.environ.items() if k != "PARITY_PLANT"}
    if env_plant:
        env["PARITY_PLANT"] = env_plant
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def cases(path):
    """Every test case of the file, with its suite, as the consumer reads them."""
    xml = JUnitXml.fromfile(path)
    suites = [xml] if xml._tag == "testsuite" else list(xml)
    return [case for suite in suites for case in suite]


def outcome(case):
    kinds = {type(r) for r in case.result}
    return "failed" if kinds & {Failure, Error} else "skipped" if Skipped in kinds else "passed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parity", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    out, fuzz_xml = os.path.join(args.work, "campaign"), os.path.join(args.work, "fuzz.xml")
    res = run([args.parity, "fuzz", "--cases", "400", "--seed", "5", "--out", out, "--junit", fuzz_xml],
              CAMPAIGN_PLANT)
    if res.returncode != 1 or not os.path.exists(fuzz_xml):
        sys.exit(f"FAIL: the planted campaign exited {res.returncode} (expected 1) or wrote no {fuzz_xml}:\n"
                 f"{res.stdout[-2000:]}{res.stderr[-2000:]}")
    groups = json.load(open(os.path.join(out, "run.json")))["groups"]
    read = cases(fuzz_xml)
    check(len(read) == len(groups) + 1, f"fuzz.xml: {len(read)} test cases for {len(groups)} groups and the campaign")
    by_name = {c.name: c for c in read}
    for sig in ("mul:values", "neg:status:argument", "sub:values"):
        c = by_name.get(sig)
        check(c is not None and outcome(c) == "failed", f"fuzz.xml: {sig} should be a failed test case")
        if c is not None and c.result:
            text = c.result[0].text or ""
            check("first difference" in text and f"({sig.split(':')[0]})" in text and '"steps"' in text,
                  f"fuzz.xml: {sig}'s failure text should hold its first difference and program: {text[:500]}")

    # The regression folder: the first finding of each planted group.
    first = {}
    for line in open(os.path.join(out, "findings.jsonl")):
        f = json.loads(line)
        first.setdefault(f["signature"], f)
    folder = os.path.join(args.work, "regressions")
    os.makedirs(folder)
    names = {"mul:values": "fixed.json", "neg:status:argument": "diverging.json", "sub:values": "ledgered.json"}
    for sig, name in names.items():
        if sig not in first:
            sys.exit(f"FAIL: the planted campaign recorded no {sig} finding ({sorted(first)})")
        json.dump(first[sig], open(os.path.join(folder, name), "w"))
    ledger = os.path.join(args.work, "ledger.json")
    json.dump({"schema_version": 1, "entries": [{"signature": "sub:values", "reason": "planted, expected by this test",
                                                  "expires": "2099-01-01"}]}, open(ledger, "w"))
    replay_xml = os.path.join(args.work, "replay.xml")
    res = run([args.parity, "replay", "--all", folder, "--known", ledger, "--junit", replay_xml], REPLAY_PLANT)
    check(res.returncode == 1, f"replay --all exited {res.returncode}, expected 1 (one still diverges):\n"
                               f"{res.stdout[-2000:]}{res.stderr[-2000:]}")
    # A replayed case is named by its signature, its class by the file it came from.
    read = {c.classname: c for c in cases(replay_xml)} if os.path.exists(replay_xml) else {}
    for name, want in (("fixed.json", "passed"), ("diverging.json", "failed"), ("ledgered.json", "skipped")):
        c = next((c for n, c in read.items() if n.endswith(name)), None)
        check(c is not None and outcome(c) == want,
              f"replay.xml: {name} should be {want}, is {outcome(c) if c else 'missing'} (cases: {sorted(read)})")
    skipped = next((c for n, c in read.items() if n.endswith("ledgered.json")), None)
    if skipped is not None and skipped.result:
        check("sub:values" in (skipped.result[0].message or ""), "replay.xml: the ledgered case names no entry")
    for f in failures:
        print(f"FAIL: {f}")
    print("junit_consumer: " + ("failed" if failures else "ok: both files read by junitparser as expected"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
