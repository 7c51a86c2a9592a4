#!/usr/bin/env python3
"""PyTorch's Python API as the judge (backends/python/torch_backend.py as --oracle-cmd), run as a user would.

1. `parity claims --oracle-cmd` gives every seed claim the verdict the C++ LibTorch of this build gives it.
2. A fixed-seed impl campaign judged by it has no unexpected finding beyond the documented list of real
   differences between PyTorch's Python layer and its C++ API (backends/python/known_divergences.json).

Skipped (77) unless PYTHON imports a torch of this build's LibTorch release.

usage: python_oracle_test.py --parity BIN --python PYTHON --work DIR
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKEND = os.path.join(ROOT, "backends", "python", "torch_backend.py")
LEDGER = os.path.join(ROOT, "backends", "python", "known_divergences.json")


def run(cmd, timeout=900):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return res.returncode, res.stdout, res.stderr


def release(text):
    return text.split("+")[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    code, cpp, err = run([args.parity, "claims", "--json"])
    if code not in (0, 1):
        sys.exit(f"FAIL: parity claims --json exited {code}:\n{err[-2000:]}")
    cpp = json.loads(cpp)
    code, version, _ = run([args.python, "-c", "import torch; print(torch.__version__)"])
    if code != 0 or release(version.strip()) != release(cpp["libtorch_version"]):
        print(f"skipped: {args.python} has no torch {cpp['libtorch_version']} (it has: {version.strip() or 'none'})")
        sys.exit(77)
    oracle = f"{shlex.quote(args.python)} {shlex.quote(BACKEND)}"

    code, py, err = run([args.parity, "claims", "--json", "--oracle-cmd", oracle])
    if code not in (0, 1):
        sys.exit(f"FAIL: parity claims --oracle-cmd exited {code}:\n{err[-2000:]}")
    py = json.loads(py)
    verdict = lambda c: (c["libtorch"]["holds"], c["libtorch"]["ran_as_intended"])
    a = {c["id"]: verdict(c) for c in cpp["claims"]}
    b = {c["id"]: verdict(c) for c in py["claims"]}
    if a != b:
        differs = sorted(k for k in a if a[k] != b.get(k))
        sys.exit(f"FAIL: PyTorch's Python API and the C++ LibTorch disagree on claims {differs}")
    print(f"ok: the same {len(a)} claim verdicts from PyTorch's Python API as from the C++ LibTorch")

    out = os.path.join(args.work, "campaign")
    cmd = [args.parity, "fuzz", "--seed", "20261128", "--cases", "4000", "--jobs", "2", "--out", out,
           "--oracle-cmd", oracle, "--known", LEDGER, "--confirm", "1"]
    code, text, err = run(cmd)
    with open(os.path.join(out, "run.json")) as f:
        summary = json.load(f)
    if code != 0 or summary["unexpected_findings"]:
        groups = [g["signature"] for g in summary["groups"] if not g["expected"]]
        sys.exit(f"FAIL: judged by PyTorch's Python API, unexpected findings {groups} (exit {code}):\n"
                 f"{text[-3000:]}{err[-2000:]}")
    if summary["backends"]["oracle"]["library"] != "torch (Python API)":
        sys.exit(f"FAIL: run.json does not name the Python oracle: {summary['backends']}")
    print(f"ok: {summary['cases']} cases judged by PyTorch's Python API: {summary['expected_findings']} findings, "
          f"all in its ledger of Python-layer differences")


if __name__ == "__main__":
    main()
