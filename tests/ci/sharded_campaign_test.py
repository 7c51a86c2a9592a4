#!/usr/bin/env python3
"""Runs ci/sharded_campaign.sh as a user would and checks what it leaves.

usage: sharded_campaign_test.py PARITY_BINARY SOURCE_DIR WORK_DIR

A clean 2-shard campaign must exit 0 and merge into one run.json covering every case once, with the HTML page; a
planted one (PARITY_PLANT=mul=values) must exit 1, with the shards' findings merged.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

failures = []


def fail(message):
    failures.append(message)
    print(f"sharded_campaign: FAIL: {message}", file=sys.stderr)


def run(script, parity, work, cases, plant=None):
    env = {k: v for k, v in os.environ.items() if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "PARITY_PLANT")}
    env["PARITY"] = parity
    if plant:
        env["PARITY_PLANT"] = plant
    p = subprocess.run([str(script), "2", str(cases), "20261121", str(work)], env=env, capture_output=True, text=True,
                       timeout=600)
    return p.returncode, p.stdout + p.stderr


def check_merged(work, cases, expect_findings):
    merged = work / "merged"
    try:
        summary = json.loads((merged / "run.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{merged / 'run.json'}: {e}")
        return None
    if summary["cases"] != cases:
        fail(f"merged run.json has {summary['cases']} cases, the shards were given {cases}")
    if summary["shard"] != {"index": 0, "total": 1}:
        fail(f"merged run.json says shard {summary['shard']}")
    for i in range(2):
        shard = json.loads((work / f"shard-{i}" / "run.json").read_text())
        if shard["shard"] != {"index": i, "total": 2}:
            fail(f"shard-{i}/run.json says shard {shard['shard']}")
    if not (merged / "report.html").exists() or (merged / "report.html").stat().st_size == 0:
        fail(f"{merged / 'report.html'} was not written")
    lines = (merged / "findings.jsonl").read_text().splitlines() if (merged / "findings.jsonl").exists() else []
    if expect_findings and not lines:
        fail("the planted campaign's merged findings.jsonl is empty")
    return summary


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    parity = os.path.abspath(argv[1])
    script = pathlib.Path(argv[2]).resolve() / "ci" / "sharded_campaign.sh"
    work = pathlib.Path(argv[3]).resolve()
    shutil.rmtree(work, ignore_errors=True)

    rc, out = run(script, parity, work / "clean", 120)
    if rc != 0:
        fail(f"a clean sharded campaign exited {rc}:\n{out[-2000:]}")
    else:
        check_merged(work / "clean", 120, expect_findings=False)

    rc, out = run(script, parity, work / "planted", 400, plant="mul=values")
    if rc != 1:
        fail(f"a planted sharded campaign should exit 1 (unexpected findings), it exited {rc}:\n{out[-2000:]}")
    else:
        summary = check_merged(work / "planted", 400, expect_findings=True)
        if summary and not any(g["signature"] == "mul:values" for g in summary["groups"]):
            fail("the merged planted run has no mul:values group")

    if failures:
        print(f"sharded_campaign: {len(failures)} failure(s); outputs kept in {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("sharded_campaign: ok: clean (exit 0) and planted (exit 1) 2-shard campaigns merged with their pages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
