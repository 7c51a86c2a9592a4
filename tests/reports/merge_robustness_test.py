#!/usr/bin/env python3
"""`parity merge` on shard sets that are partial, of another budget, or malformed, run as a user would.

usage: merge_robustness_test.py PARITY_BINARY WORK_DIR

Two real shards of a planted campaign (so that findings.jsonl has lines) are merged whole, then copies of them are
spoiled one way each: an interrupted shard, a shard short of its case budget, a shard of a smaller budget, a
findings line that is no finding, a line lost, a run.json with a hostile or inconsistent shard total or index, a
shard folder without run.json. Each must be refused with exit status 2 and one error line naming the file (and the
line), quickly; the partial ones must merge with --allow-partial, which says so on stderr and lists every problem
in the merged run.json ("partial"), leaving out the lines that are no findings.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

failures = []
# Enough cases, and planted faults in enough common ops, that every shard records findings whatever programs
# the op table makes the seed generate.
CASES = 120
SEED = 4
# Every merge is quick: one that runs away (a hostile shard total) fails here instead of stalling the suite.
MERGE_LIMIT_S = 30


def fail(message):
    failures.append(message)
    print(f"merge_robustness: FAIL: {message}", file=sys.stderr)


def env_for(shard=None, total=2):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX")}
    env["PARITY_PLANT"] = "mul=values,add=values,clone=values"  # so that findings.jsonl has lines to spoil
    if shard is not None:
        env["GTEST_TOTAL_SHARDS"], env["GTEST_SHARD_INDEX"] = str(total), str(shard)
    return env


def fuzz_shard(parity, out, shard, cases=CASES):
    cmd = [parity, "fuzz", "--cases", str(cases), "--seed", str(SEED), "--jobs", "1", "--shrink-share", "0",
           "--out", str(out)]
    p = subprocess.run(cmd, env=env_for(shard), capture_output=True, text=True, timeout=300)
    if p.returncode not in (0, 1) or not (out / "run.json").exists():
        sys.exit(f"merge_robustness: cannot set up: {' '.join(cmd)} (shard {shard}) exited {p.returncode}:\n"
                 f"{p.stderr[-2000:]}")


def merge(parity, dirs, out, *extra):
    cmd = [parity, "merge", *map(str, dirs), "-o", str(out), *extra]
    try:
        p = subprocess.run(cmd, env=env_for(), capture_output=True, text=True, timeout=MERGE_LIMIT_S)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return f"still running after {MERGE_LIMIT_S} s", "", ""


def spoiled_copy(work, name, source, edit_run=None, edit_lines=None):
    """A copy of shard folder `source` with its run.json and/or findings.jsonl lines edited."""
    d = work / name
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(source, d)
    if edit_run:
        run = json.loads((d / "run.json").read_text())
        edit_run(run)
        (d / "run.json").write_text(json.dumps(run))
    if edit_lines:
        lines = (d / "findings.jsonl").read_text().splitlines()
        (d / "findings.jsonl").write_text("".join(line + "\n" for line in edit_lines(lines)))
    return d


def expect_refused(parity, work, label, dirs, fragments):
    out = work / f"out-{label.replace(' ', '-')}"
    code, stdout, stderr = merge(parity, dirs, out)
    lines = stderr.strip().splitlines()
    if code != 2:
        fail(f"{label}: exit {code}, expected 2 (refused); stderr:\n{stderr[-1500:]}")
        return
    if len(lines) != 1 or not lines[0].startswith("parity: error: "):
        fail(f"{label}: expected one \"parity: error:\" line, got:\n{stderr[-1500:]}")
    for fragment in fragments:
        if fragment not in stderr:
            fail(f"{label}: the error does not say \"{fragment}\":\n{stderr[-1500:]}")
    if (out / "run.json").exists():
        fail(f"{label}: a refused merge wrote {out / 'run.json'}")


def expect_partial_merge(parity, work, label, dirs, fragments, findings_left_out=0, whole_findings=None):
    out = work / f"partial-{label.replace(' ', '-')}"
    code, stdout, stderr = merge(parity, dirs, out, "--allow-partial")
    if code != 0:
        fail(f"{label} with --allow-partial: exit {code}, expected 0; stderr:\n{stderr[-1500:]}")
        return
    run = json.loads((out / "run.json").read_text())
    if not run.get("partial"):
        fail(f"{label} with --allow-partial: merged run.json has no \"partial\" entries: {run.get('partial')}")
    for fragment in fragments:
        if not any(fragment in p for p in run.get("partial", [])):
            fail(f"{label} with --allow-partial: run.json partial does not say \"{fragment}\": {run.get('partial')}")
        if fragment not in stderr:
            fail(f"{label} with --allow-partial: stderr does not say \"{fragment}\":\n{stderr[-1500:]}")
    if "the merged run is partial" not in stderr:
        fail(f"{label} with --allow-partial: stderr does not say the run is partial:\n{stderr[-1500:]}")
    if whole_findings is not None:
        path = out / "findings.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) != whole_findings - findings_left_out or any(json.loads(l).get("kind") != "finding" for l in lines):
            fail(f"{label} with --allow-partial: merged findings.jsonl has {len(lines)} lines, expected "
                 f"{whole_findings - findings_left_out} findings")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    parity = os.path.abspath(argv[1])
    work = pathlib.Path(argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    s0, s1 = work / "shard0", work / "shard1"
    fuzz_shard(parity, s0, 0)
    fuzz_shard(parity, s1, 1)
    lines0 = (s0 / "findings.jsonl").read_text().splitlines()
    lines1 = (s1 / "findings.jsonl").read_text().splitlines()
    if not lines0:
        sys.exit("merge_robustness: cannot set up: the planted shard 0 recorded no finding")
    whole_findings = len(lines0) + len(lines1)

    # The two shards as written: merged whole.
    code, stdout, stderr = merge(parity, [s0, s1], work / "whole")
    if code != 0:
        fail(f"the two shards as written: exit {code}; stderr:\n{stderr[-1500:]}")
    else:
        run = json.loads((work / "whole" / "run.json").read_text())
        if run["cases"] != CASES or run.get("partial") != [] or run.get("budget") != {"cases": CASES, "seconds": None}:
            fail(f"the whole merge's run.json: cases {run['cases']}, partial {run.get('partial')}, "
                 f"budget {run.get('budget')}")

    # A shard stopped by a signal.
    def interrupt(run):
        run["interrupted"] = True
        run["cases"] //= 2
    interrupted = spoiled_copy(work, "interrupted", s1, edit_run=interrupt)
    what = f"{interrupted / 'run.json'}: shard 1 of 2 was interrupted"
    expect_refused(parity, work, "an interrupted shard", [s0, interrupted], [what, "--allow-partial"])
    expect_partial_merge(parity, work, "an interrupted shard", [s0, interrupted], [what])

    # A shard whose run.json counts fewer cases than its share of --cases, without being interrupted.
    short = spoiled_copy(work, "short", s1, edit_run=lambda r: r.update(cases=r["cases"] - 3))
    expect_refused(parity, work, "a short shard", [s0, short],
                   [f"{short / 'run.json'}: shard 1 of 2 ran {CASES // 2 - 3} of its {CASES // 2} cases"])

    # A shard of a smaller campaign: its budget says so.
    smaller = work / "smaller"
    fuzz_shard(parity, smaller, 1, cases=CASES // 2)
    expect_refused(parity, work, "a shard of a smaller budget", [s0, smaller],
                   [f"{smaller / 'run.json'} is from another campaign", f"its budget is --cases {CASES // 2}, "
                    f"the other's is --cases {CASES}"])

    # A findings line that is no finding (the issue's `42`), and one lost.
    junk = spoiled_copy(work, "junk", s0, edit_lines=lambda ls: ls[:1] + ["42"] + ls[1:])
    what = f"{junk / 'findings.jsonl'}:2: not a finding"
    expect_refused(parity, work, "a line that is no finding", [junk, s1], [what])
    expect_partial_merge(parity, work, "a line that is no finding", [junk, s1], [what], 0, whole_findings)
    lost = spoiled_copy(work, "lost", s0, edit_lines=lambda ls: ls[1:])
    what = f"{lost / 'findings.jsonl'} holds {len(lines0) - 1} of the {len(lines0)} findings its run.json recorded"
    expect_refused(parity, work, "a finding lost", [lost, s1], [what])
    expect_partial_merge(parity, work, "a finding lost", [lost, s1], [what], 1, whole_findings)

    # Hostile or inconsistent shard numbers, in a shard merged on its own: refused when read, at once (a total of
    # 2000000000 made merge list every missing index; one of -3 merged as complete).
    for label, shard, fragment in (
            ("a shard total of 2000000000", {"index": 1, "total": 2000000000}, "shard.total 2000000000 must be"),
            ("a shard total of -3", {"index": 0, "total": -3}, "shard.total -3 must be"),
            ("a shard index past the total", {"index": 2, "total": 2}, "shard.index 2 must be below shard.total")):
        bad = spoiled_copy(work, label.replace(" ", "-"), s1, edit_run=lambda r, s=shard: r.update(shard=s))
        expect_refused(parity, work, label, [bad], [str(bad / "run.json"), fragment])

    # A total far above the shards given: many shards missing, named in a short line.
    def thousand(run):
        run["shard"]["total"] = 1000
        run["budget"] = {"cases": None, "seconds": None}  # the budget would give shards of 1000 one case at most
    many = [spoiled_copy(work, f"of-1000-{i}", d, edit_run=thousand) for i, d in enumerate((s0, s1))]
    what = "shards missing: 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 988 more (of 1000)"
    expect_refused(parity, work, "998 shards missing", many, [what])
    expect_partial_merge(parity, work, "998 shards missing", many, [what])

    # Counts no campaign writes: more findings than its groups hold, more cases than its budget gives the shard.
    for label, edit, fragment in (
            ("findings past its groups", lambda r: r.update(findings=r["findings"] + 5), "findings is"),
            ("cases past its budget", lambda r: r.update(cases=10 ** 12), "cases is 1000000000000, more than")):
        bad = spoiled_copy(work, label.replace(" ", "-"), s1, edit_run=edit)
        expect_refused(parity, work, label, [s0, bad], [str(bad / "run.json"), "counts are no campaign's", fragment])

    # A shard folder whose run.json was never written (the shard was killed).
    killed = spoiled_copy(work, "killed", s1)
    (killed / "run.json").unlink()
    expect_refused(parity, work, "a shard without run.json", [s0, killed],
                   [f"{killed / 'run.json'}: missing: the shard did not finish"])

    if failures:
        print(f"merge_robustness: {len(failures)} failure(s); outputs kept in {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("merge_robustness: ok: whole shards merged; partial, smaller-budget and malformed ones refused, partial "
          "ones merged with --allow-partial")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
