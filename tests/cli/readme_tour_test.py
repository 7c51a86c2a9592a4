#!/usr/bin/env python3
"""Runs the tour of README.md ("## A first look": its first sh block) as a new user would, and checks what each
command promises: the planted campaign makes findings (exit 1), the replay prints a repro and says the finding
still diverges (exit 1), and the repro, run with PyTorch, ends with FAIL (exit 1).

usage: readme_tour_test.py --parity BIN --readme README.md --work DIR [--python PY]
The tour's ./build/parity is BIN, its .venv-torch-2.15/bin/python is PY (default: this python); where PY has no
torch, the repro is only compiled as Python. Exit status: 0 passed, 1 failed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# What each tour command must do, by the words that pick it out: its exit status, and a check of its output.
EXPECTED = [
    ("parity fuzz", 1, lambda out, work: os.path.exists(os.path.join(work, "runs/planted/findings.jsonl"))),
    ("parity replay", 1, lambda out, work: open(os.path.join(work, "repro.py")).read().startswith("# parity repro")),
    ("repro.py", 1, lambda out, work: out.strip().splitlines()[-1].startswith("FAIL:")),
]


def tour(readme):
    text = open(readme, encoding="utf-8").read()
    section = text.split("## A first look", 1)
    if len(section) != 2:
        sys.exit(f"FAIL: {readme} has no '## A first look' section")
    block = re.search(r"```sh\n(.*?)```", section[1], re.S)
    if not block:
        sys.exit(f"FAIL: {readme}'s first look has no sh block")
    # A trailing comment is two spaces or more, then #.
    return [re.split(r"\s{2,}#", line)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parity", required=True)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    # The tour runs in the work folder: the binaries by absolute path.
    args.parity = os.path.abspath(args.parity)
    args.python = shutil.which(args.python) or os.path.abspath(args.python)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    has_torch = subprocess.run([args.python, "-c", "import torch"], capture_output=True).returncode == 0
    commands = tour(args.readme)
    if len(commands) != len(EXPECTED):
        sys.exit(f"FAIL: the tour has {len(commands)} commands, this test knows {len(EXPECTED)}: {commands}")
    failures = []
    for command, (words, want_exit, check) in zip(commands, EXPECTED):
        if words not in command.replace("./build/parity", "parity"):
            failures.append(f"expected a command with '{words}', the tour has: {command}")
            continue
        line = command.replace("./build/parity", args.parity)
        if words == "repro.py" and not has_torch:
            try:
                compile(open(os.path.join(args.work, "repro.py")).read(), "repro.py", "exec")
            except (OSError, SyntaxError) as e:
                failures.append(f"repro.py is no Python: {e}")
            print(f"note: {args.python} has no torch: repro.py only compiled, not run")
            continue
        line = re.sub(r"\S*python3?\b(?= repro\.py)", args.python, line)
        env = {k: v for k, v in os.environ.items() if k != "PARITY_PLANT"}
        res = subprocess.run(["bash", "-c", line], cwd=args.work, env=env, capture_output=True, text=True,
                             timeout=300)
        try:
            promised = check(res.stdout, args.work)
        except (OSError, IndexError):
            promised = False
        if res.returncode != want_exit or not promised:
            failures.append(f"`{command}` exited {res.returncode} (expected {want_exit}); output:\n"
                            f"{(res.stdout + res.stderr)[-3000:]}")
        else:
            print(f"ok: {command}")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
