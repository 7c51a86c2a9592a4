#!/usr/bin/env python3
"""Runs every program of examples/ with `parity run`: each must load, and its traces must agree (exit 0), as
examples/README.md says of them; and the README's table must list exactly the programs there are.

usage: examples_test.py PARITY_BINARY EXAMPLES_DIR      exit status: 0 passed, 1 failed
"""
import pathlib
import re
import subprocess
import sys


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    parity, folder = argv[1], pathlib.Path(argv[2])
    programs = sorted(folder.glob("*.json"))
    listed = set(re.findall(r"^\| `([^`]+\.json)` \|", (folder / "README.md").read_text(), re.M))
    failures = []
    if listed != {p.name for p in programs}:
        failures.append(f"examples/README.md lists {sorted(listed)}, the folder has {[p.name for p in programs]}")
    for p in programs:
        res = subprocess.run([parity, "run", str(p)], capture_output=True, text=True, timeout=120)
        if res.returncode != 0 or "the traces agree" not in res.stdout:
            failures.append(f"`parity run {p}` exited {res.returncode}:\n{(res.stdout + res.stderr)[-2000:]}")
        else:
            print(f"ok: {p.name}")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
