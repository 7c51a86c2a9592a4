#!/usr/bin/env python3
"""`parity drift` and `parity claims --against`, run as a user would.

Against itself a build's LibTorch must agree with itself on every program (the worker protocol, the comparison
and the output all run, and nothing may differ). Against another build (--other, a parity binary judged against
another LibTorch release) the behaviour changes between the releases must be found, shrunk and written as a
campaign's output, and `parity claims --against` must show both releases' verdicts.

usage: drift_test.py --parity BIN --work DIR [--other OTHER_BIN --expect SIGNATURE ...]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def run(cmd, timeout=600):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return res.returncode, res.stdout


def drift(parity, other, out, cases):
    cmd = [parity, "drift", "--against", other, "--cases", str(cases), "--seed", "11", "--out", out, "--overwrite"]
    code, text = run(cmd)
    if code not in (0, 1):
        sys.exit(f"FAIL: {' '.join(cmd)} exited {code}:\n{text[-4000:]}")
    with open(os.path.join(out, "run.json")) as f:
        summary = json.load(f)
    if "drift" not in summary or summary["drift"]["other_parity"] != other:
        sys.exit(f"FAIL: {out}/run.json has no drift field naming {other}: {summary.get('drift')}")
    if summary["cases"] != cases:
        sys.exit(f"FAIL: drift ran {summary['cases']} cases, asked for {cases}")
    with open(os.path.join(out, "findings.jsonl")) as f:
        findings = [json.loads(line) for line in f if line.strip()]
    if not os.path.getsize(os.path.join(out, "report.html")):
        sys.exit(f"FAIL: {out}/report.html is empty")
    return code, summary, findings, text


def script(work, name, body):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def still_running(marker):
    """Processes whose command line holds `marker` (pgrep -f), after a moment for the kill to land."""
    time.sleep(0.5)
    res = subprocess.run(["pgrep", "-f", marker], stdout=subprocess.PIPE, text=True)
    return res.stdout.split()


def check_foreign_binaries(parity, work):
    """A binary that is not parity is refused before a case runs (exit 2), what it starts dies with it, and what it
    prints never reaches parity's terminal raw or unbounded (issue 32, F7 and F8)."""
    hang = script(work, "hang.sh", "sleep 100023")
    flood = script(work, "flood.sh", "printf '\\033[31m'; yes flood")
    backend = "sleep 100027 & printf 'boom \\033[2J' >&2; exec sleep 100029"
    cases = (("/bin/true", ["--against", "/bin/true"], "exited with status 0"),
             ("a script that hangs", ["--against", hang, "--timeout-ms", "2000"], "no result after 2000 ms"),
             ("a script that floods its stdout", ["--against", flood, "--timeout-ms", "2000"], "flood"),
             ("a protocol backend that hangs", ["--oracle-cmd", backend, "--backend-start-ms", "2000"],
              "its stderr ended with: boom"))
    for label, flags, fragment in cases:
        out = os.path.join(work, "foreign")
        start = time.time()
        code, text = run([parity, "drift", *flags, "--cases", "4", "--out", out], timeout=60)
        if code != 2 or fragment not in text or ("not a parity binary" not in text and "--oracle-cmd" not in text):
            sys.exit(f"FAIL: drift against {label}: exit {code} (2 expected, saying {fragment!r}):\n{text[-2000:]}")
        raw = "\x1b" in text
        if raw or len(text) > 20000:
            sys.exit(f"FAIL: drift against {label} passed the binary's output to the terminal ({len(text)} bytes, "
                     f"raw escapes: {raw})")
        if time.time() - start > 30:
            sys.exit(f"FAIL: drift against {label} took {time.time() - start:.0f} s to refuse it")
        if os.path.exists(os.path.join(out, "findings.jsonl")):
            sys.exit(f"FAIL: drift against {label} wrote its output before refusing the binary")
    for marker in ("sleep 100023", "sleep 100027", "sleep 100029"):
        if still_running(marker):
            sys.exit(f"FAIL: `{marker}`, started by a refused binary, outlived it")
    print("ok: /bin/true, scripts that hang or flood and a backend that hangs are refused with exit 2; nothing they "
          "started is left running, and nothing they printed reached the terminal raw")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--other")
    ap.add_argument("--expect", action="append", default=[], help="a signature drift must find against --other")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    code, summary, findings, text = drift(args.parity, args.parity, os.path.join(args.work, "self"), 300)
    if code != 0 or summary["findings"] or findings:
        sys.exit(f"FAIL: LibTorch {summary['libtorch_version']} differs from itself ({summary['findings']} "
                 f"findings, exit {code}):\n{text[-4000:]}")
    if summary["drift"]["other_libtorch_version"] != summary["libtorch_version"]:
        sys.exit(f"FAIL: against itself the other release reads {summary['drift']['other_libtorch_version']}")
    print(f"ok: LibTorch {summary['libtorch_version']} agrees with itself on 300 programs")
    check_foreign_binaries(args.parity, args.work)

    if not args.other:
        return 0
    code, summary, findings, text = drift(args.parity, args.other, os.path.join(args.work, "other"), 3000)
    mine, theirs = summary["libtorch_version"], summary["drift"]["other_libtorch_version"]
    if mine == theirs:
        sys.exit(f"FAIL: --other {args.other} runs the same LibTorch ({mine}): nothing to compare")
    groups = {g["signature"] for g in summary["groups"]}
    missing = [s for s in args.expect if s not in groups]
    if code != 1 or missing:
        sys.exit(f"FAIL: drift {mine} -> {theirs} exited {code} and did not find {missing}; it found:\n"
                 + "\n".join(sorted(groups)))
    for f in findings:
        if f["signature"] not in groups or not f.get("impl_trace") or not f.get("oracle_trace"):
            sys.exit(f"FAIL: a drift finding lacks its group or a trace: {f['signature']}")
        if len(f["program"]["steps"]) > f["original_program_size"]:
            sys.exit(f"FAIL: a drift finding grew while shrinking: {f['signature']}")
    print(f"ok: LibTorch {mine} -> {theirs}: {summary['findings']} differences in {len(groups)} groups, "
          f"expected ones included: {', '.join(args.expect)}")

    code, text = run([args.parity, "claims", "--against", args.other, "--json"])
    if code not in (0, 1):
        sys.exit(f"FAIL: parity claims --against exited {code}:\n{text[-4000:]}")
    claims = json.loads(text)
    if claims.get("other_libtorch_version") != theirs or any("other_libtorch" not in c for c in claims["claims"]):
        sys.exit("FAIL: parity claims --against --json lacks the other release's verdicts")
    print(f"ok: parity claims --against shows {len(claims['claims'])} claims on both releases; "
          f"changed: {claims['changed_between_releases'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
