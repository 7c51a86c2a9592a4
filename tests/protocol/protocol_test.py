#!/usr/bin/env python3
"""The backend protocol (docs/backend-protocol.md), run as a user would.

1. impl through the protocol (`parity serve --backend impl` as --impl-cmd) finds exactly what the in-process
   campaign finds with the same seed, planted bugs included: the same findings.jsonl and run.json, apart from
   times and the record of the sides; and every message of such a campaign matches the protocol's JSON Schema.
2. `parity drift --oracle-cmd`, this build's LibTorch on both sides of the protocol, finds no difference.
3. Each planted fault of a protocol backend (tests/protocol/fault_backend.py, a proxy in front of `parity serve`)
   gives the right finding or a clear refusal at start, and parity never hangs: crash, hang, garbage, a lying
   handshake, slow start, stdout noise, a command that does not exist.

usage: protocol_test.py --parity BIN --work DIR
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Times, and the records of the sides (checked apart).
SCRUBBED = {"seconds", "cases_per_second", "shrink_seconds", "parity_commit", "backends", "impl_command"}


def run(cmd, env=None, timeout=600):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                         env=env)
    return res.returncode, res.stdout


def campaign(parity, out, extra, env=None, cases=1500, expect=(0, 1)):
    cmd = [parity, "fuzz", "--seed", "11", "--cases", str(cases), "--out", out, "--overwrite"] + extra
    if "--jobs" not in extra:
        cmd += ["--jobs", "2"]
    code, text = run(cmd, env)
    if code not in expect:
        sys.exit(f"FAIL: {' '.join(map(shlex.quote, cmd))} exited {code}, expected {expect}:\n{text[-4000:]}")
    return code, text


def outputs(out):
    with open(os.path.join(out, "run.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "findings.jsonl")) as f:
        findings = [json.loads(line) for line in f if line.strip()]
    return summary, findings


def scrub(record):
    return {k: v for k, v in record.items() if k not in SCRUBBED}


def check_equal_to_in_process(parity, work):
    env = dict(os.environ, PARITY_PLANT="mul=values,neg=error")
    serve = f"{shlex.quote(parity)} serve --backend impl"
    campaign(parity, os.path.join(work, "in-process"), [], env)
    campaign(parity, os.path.join(work, "protocol"), ["--impl-cmd", serve], env)
    a_summary, a_findings = outputs(os.path.join(work, "in-process"))
    b_summary, b_findings = outputs(os.path.join(work, "protocol"))
    if not a_findings:
        sys.exit("FAIL: the planted in-process campaign found nothing: the comparison would prove nothing")
    differs = [k for k in set(a_summary) | set(b_summary)
               if k not in SCRUBBED and a_summary.get(k) != b_summary.get(k)]
    if differs:
        sys.exit(f"FAIL: run.json through the protocol differs from the in-process one in {sorted(differs)}")
    if [scrub(f) for f in a_findings] != [scrub(f) for f in b_findings]:
        sys.exit(f"FAIL: findings through the protocol ({len(b_findings)}) differ from the in-process ones "
                 f"({len(a_findings)})")
    if any(f["impl_command"] != serve for f in b_findings) or any(f["impl_command"] for f in a_findings):
        sys.exit("FAIL: the findings do not record the protocol backend they came from (impl_command)")
    sides = b_summary.get("backends")
    if not sides or sides["impl"]["command"] != serve or sides["impl"]["protocol"] != 1:
        sys.exit(f"FAIL: run.json does not name the protocol backend: {sides}")
    if "backends" in a_summary:
        sys.exit("FAIL: an in-process run.json names protocol backends")
    print(f"ok: through the protocol, the same {len(a_findings)} findings and run.json as in process")


def check_messages_against_schema(parity, work):
    """Every request parity sends and every answer `parity serve` gives in a short campaign is a message of
    reports/schema/protocol.schema.json (skipped, said so, where python3 lacks jsonschema)."""
    try:
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
    except ImportError as e:
        print(f"skipped: the messages' schema check needs jsonschema >= 4.18 ({e})")
        return
    schema_dir = os.path.join(os.path.dirname(os.path.dirname(HERE)), "reports", "schema")
    schemas = {}
    for name in os.listdir(schema_dir):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name)) as f:
                schemas[name] = json.load(f)
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    validator = Draft202012Validator(schemas["protocol.schema.json"], registry=registry)
    requests, answers = os.path.join(work, "requests.jsonl"), os.path.join(work, "answers.jsonl")
    tapped = (f"tee -a {shlex.quote(requests)} | {shlex.quote(parity)} serve --backend impl | "
              f"tee -a {shlex.quote(answers)}")
    # One worker: two backends appending to one file could interleave their lines.
    campaign(parity, os.path.join(work, "tapped"), ["--impl-cmd", tapped, "--jobs", "1"], cases=200)
    count = 0
    for path in (requests, answers):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                errors = sorted(validator.iter_errors(json.loads(line)), key=lambda e: e.path)
                if errors:
                    sys.exit(f"FAIL: {path}:{n} is no protocol message: {errors[0].message[:300]}")
                count += 1
    print(f"ok: {count} messages of a campaign through the protocol match reports/schema/protocol.schema.json")


def check_drift_through_the_protocol(parity, work):
    """`parity drift --oracle-cmd`: this build's LibTorch, both sides behind the protocol, agrees with itself."""
    out = os.path.join(work, "drift")
    serve = f"{shlex.quote(parity)} serve --backend libtorch"
    code, text = run([parity, "drift", "--oracle-cmd", serve, "--cases", "300", "--seed", "5", "--out", out])
    summary, findings = outputs(out)
    if code != 0 or findings or summary["backends"]["oracle"]["command"] != serve:
        sys.exit(f"FAIL: LibTorch through the protocol differs from itself (exit {code}):\n{text[-3000:]}")
    print(f"ok: drift through the protocol: LibTorch {summary['backends']['impl']['version']} agrees with itself "
          f"on {summary['cases']} programs")


def fault(parity, kind, *more):
    args = [sys.executable, os.path.join(HERE, "fault_backend.py"), "--parity", parity, "--fault", kind, *more]
    return " ".join(map(shlex.quote, args))


def kinds_of(out):
    summary, findings = outputs(out)
    return {f["divergence"]["kind"] for f in findings}, findings


def check_faults(parity, work):
    quick = ["--confirm", "0", "--shrink-share", "0"]
    for kind, extra, expected in [
        ("crash", ["--at", "3"], "crash"),
        ("garbage", ["--at", "2"], "protocol"),
        ("lying", [], "protocol"),
    ]:
        out = os.path.join(work, kind)
        campaign(parity, out, ["--impl-cmd", fault(parity, kind, *extra)] + quick, cases=40, expect=(1,))
        kinds, findings = kinds_of(out)
        if kinds != {expected}:
            sys.exit(f"FAIL: a backend that plays {kind} gave findings of kinds {kinds}, expected only {expected}")
        if any(not f["divergence"]["impl"].startswith("protocol backend failed") for f in findings):
            sys.exit(f"FAIL: a {kind} finding does not say the protocol backend failed")
        print(f"ok: a backend that plays {kind}: {len(findings)} {expected} findings, blamed on impl")

    out = os.path.join(work, "hang")
    code, text = campaign(parity, out, ["--impl-cmd", fault(parity, "hang", "--at", "2"), "--timeout-ms", "2000"] +
                          quick, cases=4, expect=(1,))
    kinds, findings = kinds_of(out)
    if kinds != {"timeout"}:
        sys.exit(f"FAIL: a hanging backend gave findings of kinds {kinds}, expected timeout")
    print(f"ok: a hanging backend: {len(findings)} timeout findings, and the campaign ended")

    # Refused at start, with the reason, before anything is written.
    for kind, extra, flags, words in [
        ("slow-start", ["--seconds", "3"], ["--backend-start-ms", "1000"], "within 1000 ms"),
        ("noise", [], [], "is not JSON"),
    ]:
        code, text = run([parity, "fuzz", "--cases", "5", "--out", os.path.join(work, kind), "--overwrite",
                          "--impl-cmd", fault(parity, kind, *extra)] + flags)
        if code != 2 or words not in text:
            sys.exit(f"FAIL: a backend that plays {kind} was not refused at start (exit {code}):\n{text[-2000:]}")
        print(f"ok: a backend that plays {kind} is refused at start: {text.strip().splitlines()[-1][:150]}")
    code, text = run([parity, "fuzz", "--cases", "5", "--out", os.path.join(work, "missing"), "--overwrite",
                      "--impl-cmd", "/nonexistent/backend --flag"])
    if code != 2 or "exited with status 127" not in text:
        sys.exit(f"FAIL: a command that does not exist was not refused (exit {code}):\n{text[-2000:]}")
    print("ok: a command that does not exist is refused at start")

    # A slow start within the limit is no fault.
    campaign(parity, os.path.join(work, "slow-ok"), ["--impl-cmd", fault(parity, "slow-start", "--seconds", "1")],
             cases=30, expect=(0, 1))
    print("ok: a backend that takes 1 s to start is used")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    check_equal_to_in_process(args.parity, args.work)
    check_messages_against_schema(args.parity, args.work)
    check_drift_through_the_protocol(args.parity, args.work)
    check_faults(args.parity, args.work)


if __name__ == "__main__":
    main()
