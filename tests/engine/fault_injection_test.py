#!/usr/bin/env python3
"""Kills parity with SIGKILL at random moments and checks that nothing it found is lost or recorded twice.

usage: fault_injection_test.py --parity PARITY --work DIR [--kills N] [--merge-kills N] [--cases C] [--seed S]

Campaign: a planted campaign (PARITY_PLANT) is run once whole, as the reference. Then the same campaign is
started, killed, resumed (`parity fuzz --resume`), killed again, and so on until it completes, N kills in all
(a fresh campaign starts whenever one completes). Kills come at a random moment, or the moment the journal says
a divergence is being confirmed and shrunk, or the moment a finding reaches findings.jsonl (before the journal
says it is recorded); most kill the whole process group, some only the campaign's own process. After every kill,
findings.jsonl holds only whole findings of the reference (a torn last line aside), none twice, and the journal
is there to resume from; every completed campaign has exactly the reference's findings and counts.

Merge: three shards are merged once as the reference; then `parity merge` is killed at random moments N times.
The shards must be unchanged, and the output folder must be absent, or empty of records, or the whole merge; a
merge run again afterwards must give the reference.
"""
import argparse
import hashlib
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import time

PLANT = "mul=values,neg=error"
failures = []


def fail(message):
    failures.append(message)
    print(f"fault_injection: FAIL: {message}", file=sys.stderr)


def environment(extra=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX")}
    env["PARITY_PLANT"] = PLANT
    env.update(extra or {})
    return env


def start(args, log, env=None):
    """Starts parity in a process group of its own; its output goes to `log` (a pipe nobody reads could fill)."""
    with open(log, "w") as out:
        return subprocess.Popen(args, env=env or environment(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def read_findings(path):
    """(case_index, signature) of each whole line of a findings.jsonl; a torn last line is left out."""
    if not path.exists():
        return []
    text = path.read_text()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        lines.pop()  # no newline at the end: a torn last line, which the next writer cuts off
    out = []
    for number, line in enumerate(lines, 1):
        try:
            f = json.loads(line)
            out.append((f["case_index"], f["signature"]))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            fail(f"{path}:{number}: not a whole finding ({e}): {line[:80]}")
    return out


def counts(run_json):
    s = json.loads(run_json.read_text())
    groups = {g["signature"]: g["count"] for g in s["groups"]}
    return {k: s[k] for k in ("cases", "findings", "unexpected_findings", "expected_findings", "recorded_findings",
                              "crashes", "timeouts", "out_of_memory", "interrupted")} | {"groups": groups}


def wait_for(predicate, process, deadline):
    """Polls until predicate() or the process ended or the deadline passed; True if predicate() held."""
    while time.monotonic() < deadline and process.poll() is None:
        if predicate():
            return True
        time.sleep(0.002)
    return False


def journal_pending(out):
    try:
        return json.loads((out / "journal.json").read_text()).get("pending") is not None
    except (OSError, json.JSONDecodeError):
        return False


def kill(process, whole_group):
    try:
        if whole_group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except ProcessLookupError:
        pass
    process.wait()
    if not whole_group:
        # Its workers notice their parent is gone and leave; give them the moment they need before a resume.
        time.sleep(0.2)


def check_complete(out, expected, expected_counts):
    got = sorted(read_findings(out / "findings.jsonl"))
    if got != expected:
        fail(f"a campaign killed and resumed recorded {got}, the whole one {expected}")
    got_counts = counts(out / "run.json")
    if got_counts != expected_counts:
        fail(f"a campaign killed and resumed counted {got_counts}, the whole one {expected_counts}")
    if (out / "journal.json").exists():
        fail("a completed campaign left its journal")


def campaign_phase(parity, work, kills, cases, seed, rng):
    base = [parity, "fuzz", "--cases", str(cases), "--seed", str(seed), "--jobs", "2"]
    reference = work / "reference"
    began = time.monotonic()
    p = subprocess.run(base + ["--out", str(reference), "--overwrite"], env=environment(), capture_output=True,
                       text=True, timeout=900)
    whole_seconds = time.monotonic() - began
    if p.returncode != 1:
        fail(f"the reference campaign exited {p.returncode}, not 1 (planted findings): {p.stderr[-2000:]}")
        return
    expected = sorted(read_findings(reference / "findings.jsonl"))
    expected_counts = counts(reference / "run.json")
    if len(expected) < 3:
        fail(f"the reference campaign recorded {len(expected)} findings: too few to test recording under kills")
        return
    print(f"fault_injection: reference campaign: {cases} cases, {len(expected)} findings, {whole_seconds:.1f} s")

    out = work / "killed"
    stats = {"random": 0, "while shrinking": 0, "just written": 0, "only the main process": 0,
             "landed while a finding was pending": 0, "killed as it exited": 0, "killed while overwriting": 0,
             "completed campaigns": 0, "resumes": 0}
    fresh = True
    done_kills = 0
    deadline = time.monotonic() + max(600, 60 * whole_seconds)
    while done_kills < kills and time.monotonic() < deadline:
        args = base + ["--out", str(out), "--overwrite"] if fresh else [parity, "fuzz", "--resume", str(out)]
        stats["resumes"] += 0 if fresh else 1
        before = len(read_findings(out / "findings.jsonl")) if not fresh else 0
        # What a fresh start overwrites: the last campaign's findings, if it completed.
        overwritten = sorted(read_findings(out / "findings.jsonl")) if fresh else []
        process = start(args, work / "campaign.log")
        mode = rng.choice(["random", "random", "while shrinking", "just written"])
        limit = time.monotonic() + 4 * whole_seconds + 10
        if mode == "random":
            time.sleep(rng.uniform(0, whole_seconds))
            hit = process.poll() is None
        elif mode == "while shrinking":
            hit = wait_for(lambda: journal_pending(out), process, limit)
        else:
            hit = wait_for(lambda: len(read_findings(out / "findings.jsonl")) > before, process, limit)
        if hit and process.poll() is None:
            whole_group = rng.random() < 0.8
            kill(process, whole_group)
            done_kills += 1
            stats[mode] += 1
            stats["only the main process"] += 0 if whole_group else 1
            stats["landed while a finding was pending"] += journal_pending(out)
            found = read_findings(out / "findings.jsonl")
            if len(set(found)) != len(found):
                fail(f"kill {done_kills} ({mode}): findings.jsonl records a finding twice: {found}")
            if not set(found) <= set(expected):
                fail(f"kill {done_kills} ({mode}): findings.jsonl has findings the campaign never makes: "
                     f"{sorted(set(found) - set(expected))}")
            was_fresh, fresh = fresh, False
            if not (out / "journal.json").exists():
                if (out / "run.json").exists() and not json.loads((out / "run.json").read_text())["interrupted"]:
                    stats["killed as it exited"] += 1
                    check_complete(out, expected, expected_counts)
                    stats["completed campaigns"] += 1
                    fresh = True
                elif found and was_fresh and sorted(found) == overwritten:
                    # --overwrite removes run.json, then findings.jsonl, then writes the new journal: killed in
                    # between, the folder holds the old campaign's findings untouched, and the new one found
                    # nothing yet (it writes its journal before judging a case). Nothing of it is lost.
                    stats["killed while overwriting"] += 1
                    fresh = True
                elif found:
                    fail(f"kill {done_kills} ({mode}): findings were written but there is no journal to resume")
                else:
                    fresh = True  # killed before the journal was first written: nothing was found yet
            if failures:
                return
            continue
        # It completed before the kill came.
        try:
            process.wait(timeout=900)
        except subprocess.TimeoutExpired:
            kill(process, True)
            fail(f"{' '.join(args)} did not finish")
            return
        if process.returncode != 1:
            fail(f"{' '.join(args)} exited {process.returncode}, not 1: {(work / 'campaign.log').read_text()[-2000:]}")
            return
        check_complete(out, expected, expected_counts)
        if failures:
            return
        stats["completed campaigns"] += 1
        fresh = True
    if done_kills < kills:
        fail(f"only {done_kills} of {kills} kills were made before the time limit")
    if stats["completed campaigns"] == 0:
        fail("no killed and resumed campaign was completed and compared with the reference")
    print("fault_injection: campaign: " + ", ".join(f"{k} {v}" for k, v in stats.items()))


def digest(folder):
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def merge_phase(parity, work, kills, cases, seed, rng):
    shards = []
    for index in range(3):
        shard = work / f"shard-{index}"
        env = environment({"GTEST_TOTAL_SHARDS": "3", "GTEST_SHARD_INDEX": str(index)})
        p = subprocess.run([parity, "fuzz", "--cases", str(cases), "--seed", str(seed), "--jobs", "2", "--out",
                            str(shard), "--overwrite"], env=env, capture_output=True, text=True, timeout=900)
        if p.returncode not in (0, 1):
            fail(f"shard {index} exited {p.returncode}: {p.stderr[-2000:]}")
            return
        shards.append(shard)
    shard_digest = [digest(s) for s in shards]
    merge = [parity, "merge"] + [str(s) for s in shards]
    reference = work / "merged-reference"
    shutil.rmtree(reference, ignore_errors=True)
    began = time.monotonic()
    p = subprocess.run(merge + ["-o", str(reference)], env=environment(), capture_output=True, text=True, timeout=300)
    merge_seconds = time.monotonic() - began
    if p.returncode != 0:
        fail(f"the reference merge exited {p.returncode}: {p.stderr[-2000:]}")
        return
    expected_run = counts(reference / "run.json")
    expected_findings = read_findings(reference / "findings.jsonl")

    out = work / "merged"
    outcomes = {"nothing written": 0, "whole merge": 0, "finished before the kill": 0}
    for k in range(kills):
        shutil.rmtree(out, ignore_errors=True)
        process = start(merge + ["-o", str(out)], work / "merge.log")
        time.sleep(rng.uniform(0, 1.5 * merge_seconds))
        finished = process.poll() is not None
        kill(process, True)
        records = [name for name in ("run.json", "findings.jsonl") if (out / name).exists()]
        if (out / "run.json").exists():
            try:
                if counts(out / "run.json") != expected_run or read_findings(out / "findings.jsonl") != \
                        expected_findings:
                    fail(f"merge kill {k}: the output differs from the whole merge")
            except (json.JSONDecodeError, KeyError) as e:
                fail(f"merge kill {k}: a partial run.json was left: {e}")
            outcomes["finished before the kill" if finished else "whole merge"] += 1
        elif records:
            fail(f"merge kill {k}: {records} left without run.json: a partial merge")
        else:
            outcomes["nothing written"] += 1
        if [digest(s) for s in shards] != shard_digest:
            fail(f"merge kill {k}: the shards changed")
        if failures:
            return
        # Merging again after the kill gives the whole merge (into a folder the kill left nothing in).
        if not records:
            again = subprocess.run(merge + ["-o", str(out)], env=environment(), capture_output=True, text=True,
                                   timeout=300)
            if again.returncode != 0 or counts(out / "run.json") != expected_run:
                fail(f"merge kill {k}: merging again failed ({again.returncode}): {again.stderr[-1000:]}")
                return
    print(f"fault_injection: merge ({merge_seconds:.2f} s whole): " +
          ", ".join(f"{k} {v}" for k, v in outcomes.items()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parity", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--merge-kills", type=int, default=100)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rng-seed", type=int, default=None, help="the kills' timing (default: random, printed)")
    a = parser.parse_args()
    rng_seed = a.rng_seed if a.rng_seed is not None else random.randrange(1 << 32)
    print(f"fault_injection: kill timing seed {rng_seed} (--rng-seed to repeat)")
    rng = random.Random(rng_seed)
    work = pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    campaign_phase(a.parity, work, a.kills, a.cases, a.seed, rng)
    if not failures:
        merge_phase(a.parity, work, a.merge_kills, a.cases, a.seed, rng)
    if failures:
        print(f"fault_injection: {len(failures)} failures", file=sys.stderr)
        return 1
    print("fault_injection: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
