#!/usr/bin/env python3
"""One writer per output folder, run as a user would (issue 32, F6): two `parity fuzz --resume DIR` started at once
once wrote 5 findings twice, 6 findings of a signature capped at 3, and a run.json that disagreed with
findings.jsonl. Now one of the two is refused at once (exit 2, "in use") and the other finishes the campaign:
findings.jsonl holds each finding once, at most the cap per signature, as many as run.json recorded. Two fresh
campaigns into one folder: one runs. A merge killed before publishing leaves a hidden staging folder, which the
next merge into the same place removes.

usage: one_writer_test.py --parity BIN --work DIR
"""
import argparse
import collections
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

CAP = 3  # engine::kMaxRecordedPerSignature
# Enough that a resume outlasts the wait for a folder held a moment ago (files::kFolderLockWaitMs, 2 s).
CASES = 40000
failures = []


def fail(message):
    failures.append(message)
    print(f"one_writer: FAIL: {message}", file=sys.stderr)


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GTEST_", "TEST_"))}
    e["PARITY_PLANT"] = "mul=values,add=values"  # findings to write twice, were both resumes to run
    return e


def fuzz(parity, *args):
    settings = [] if "--resume" in args else ["--shrink-share", "0"]
    return subprocess.Popen([parity, "fuzz", "--jobs", "1", *settings, *args], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def interrupted_campaign(parity, out):
    """A campaign stopped by SIGINT once it has judged some cases, its journal left for --resume."""
    p = fuzz(parity, "--cases", str(CASES), "--seed", "9", "--out", str(out))
    deadline = time.time() + 60
    while time.time() < deadline and not (out / "journal.json").exists():
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=120)
    if not (out / "journal.json").exists():
        sys.exit("one_writer: cannot set up: the interrupted campaign left no journal")


def check_two_resumes(parity, work):
    out = work / "resumed"
    interrupted_campaign(parity, out)
    ps = [fuzz(parity, "--resume", str(out)) for _ in range(2)]
    results = [(p.wait(timeout=600), *p.communicate()) for p in ps]
    codes = sorted(rc for rc, _, _ in results)
    refused = [err for rc, _, err in results if rc == 2]
    if len(refused) != 1 or codes[0] not in (0, 1):
        fail(f"two resumes at once: exit statuses {codes}, stderr: {[err[-300:] for _, _, err in results]}")
        return
    if "in use" not in refused[0]:
        fail(f"the refused resume does not say the folder is in use: {refused[0][-300:]}")
    lines = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines() if line]
    keys = collections.Counter((f["case_index"], json.dumps(f["signature"])) for f in lines)
    twice = [k for k, n in keys.items() if n > 1]
    if twice:
        fail(f"findings written twice: {twice[:3]}")
    per_signature = collections.Counter(json.dumps(f["signature"]) for f in lines)
    over = {s: n for s, n in per_signature.items() if n > CAP}
    if over:
        fail(f"signatures past the cap of {CAP}: {over}")
    run = json.loads((out / "run.json").read_text())
    if run["recorded_findings"] != len(lines) or run["interrupted"] or run["cases"] != CASES:
        fail(f"run.json: recorded_findings {run['recorded_findings']} for {len(lines)} lines, cases "
             f"{run['cases']}, interrupted {run['interrupted']}")


def check_two_fresh_campaigns(parity, work):
    out = work / "fresh"
    ps = [fuzz(parity, "--cases", "1500", "--seed", "3", "--out", str(out)) for _ in range(2)]
    results = [(p.wait(timeout=600), *p.communicate()) for p in ps]
    ran = [rc for rc, _, _ in results if rc in (0, 1)]
    refused = [err for rc, _, err in results if rc == 2 and ("in use" in err or "already holds" in err)]
    if len(ran) != 1 or len(refused) != 1:
        fail(f"two fresh campaigns into one folder: {[(rc, err[-200:]) for rc, _, err in results]}")


def check_leftover_staging(parity, work):
    shard = work / "shard"
    p = fuzz(parity, "--cases", "50", "--seed", "2", "--out", str(shard))
    p.communicate(timeout=300)
    leftover = work / ".merged.parity-Ab12Cd"  # what a merge killed at its rename leaves
    leftover.mkdir()
    (leftover / "run.json").write_text("{}")
    m = subprocess.run([parity, "merge", str(shard), "-o", str(work / "merged")], env=env(), capture_output=True,
                       text=True, timeout=120)
    if m.returncode != 0 or not (work / "merged" / "run.json").exists():
        fail(f"merge: exit {m.returncode}: {m.stderr[-300:]}")
    if leftover.exists():
        fail("the merge left the staging folder a killed merge had left there")
    if any(x.name.endswith(".parity-lock") for x in work.iterdir()):
        fail("the merge left its lock file behind")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", required=True)
    ap.add_argument("--work", required=True, type=pathlib.Path)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    a.work.mkdir(parents=True)
    check_two_resumes(a.parity, a.work)
    check_two_fresh_campaigns(a.parity, a.work)
    check_leftover_staging(a.parity, a.work)
    if failures:
        print(f"one_writer: {len(failures)} failure(s); outputs kept in {a.work}", file=sys.stderr)
        return 1
    shutil.rmtree(a.work, ignore_errors=True)
    print("one_writer: ok: two resumes, two campaigns and a merge over a killed one each had one writer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
