#!/usr/bin/env python3
"""Runs docs/check-your-library.md the way a reader would, and checks that it says the truth.

    python3 tests/protocol/tutorial_test.py --parity build/parity --work /tmp/tut

The tutorial's fenced blocks are executed in document order, from a copy of the repository's docs/ under
WORK/repo (so that the campaigns' output folders and the fix the tutorial applies never touch the source tree):

  ```sh            one command per line (a trailing backslash continues it), run with `bash -c` from the
                   copy's root; `build/parity` is the parity under test (--parity). A command expected to
                   fail says so in a trailing comment, `# exits 1`; any other exits 0.
  ```python file=PATH
                   an edit: each top-level `def` of the block replaces the function of that name in PATH.
  ```python        a quote of docs/tutorial/tiny_backend.py: each of its lines must be one of the file's.
  ```json file=PATH
                   PATH's content, which must be the same JSON.
  ```text          output shown: its lines of finding groups ("   1  add:status:shape  [...]") must be in the
                   output of the command before it.

Besides: docs/tutorial/tiny_backend.py is at most 150 lines and answers a scripted session on its own (one
JSON line per request, nothing else on stdout, exit 0 at EOF); the first campaign found the planted bug and
names tinytensor as the library under test (run.json backends.impl.library); no campaign saw the backend
fail (crash, timeout, protocol); a campaign given --known has only expected groups; and the tutorial ends on
a campaign that exits 0 and finds nothing. Python standard library only.

--extra-fuzz-args adds options to every campaign (e.g. "--isolation fork"); --budget-s bounds the whole run.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = Path("docs/check-your-library.md")
BACKEND = Path("docs/tutorial/tiny_backend.py")
MAX_BACKEND_LINES = 150
PLANTED = {"add:status:shape", "mul:status:shape"}  # tinytensor.broadcast_shapes refuses unequal ranks
BACKEND_FAILURES = {"crash", "timeout", "protocol", "out_of_memory"}
BUDGET_S = 110  # the whole test, on 2 cores (--budget-s)

FENCE = re.compile(r"^```(\S*)(.*)$")
EXITS = re.compile(r"\s+#\s*exits\s+(\d+)\s*$")
GROUP_LINE = re.compile(r"^\s+(?:UNEXPECTED|expected)\s+\d+\s+[a-z0-9_]+:[a-z0-9_]+\S*\s+\[")
PARITY = re.compile(r"(?<![\w./-])build/parity(?![\w./-])")


class Failure(Exception):
    pass


def blocks(markdown):
    """(language, info, text) of each fenced block, in order."""
    out, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        i += 1
        if not m:
            continue
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        out.append((m.group(1), m.group(2).strip(), "\n".join(body) + "\n"))
    return out


def commands(text):
    """(command, expected exit status) of each line of a sh block."""
    out, pending = [], ""
    for line in text.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line, pending = pending + line, ""
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = EXITS.search(line)
        out.append((line[: m.start()] if m else line, int(m.group(1)) if m else 0))
    return out


def replace_functions(path, block):
    """Each top-level def of `block` replaces the function of the same name in `path`."""
    source = path.read_text()
    for m in re.finditer(r"^def (\w+)\(.*?(?=^\S|\Z)", block, re.S | re.M):
        name, new = m.group(1), m.group(0).rstrip() + "\n"
        old = re.search(rf"^def {name}\(.*?(?=^\S|\Z)", source, re.S | re.M)
        if not old:
            raise Failure(f"the tutorial edits {name}() of {path.name}, which has no such function")
        source = source[: old.start()] + new + "\n\n" + source[old.end():].lstrip("\n")
    path.write_text(source)


def fuzz_out(command):
    """The --out folder of a `parity fuzz` command, or None for another command."""
    words = shlex.split(command)
    if "fuzz" not in words:
        return None
    return words[words.index("--out") + 1] if "--out" in words else "parity-out"


def run_json(repo, out):
    path = repo / out / "run.json"
    if not path.is_file():
        raise Failure(f"{path} was not written")
    return json.loads(path.read_text())


def check_backend_alone(repo):
    """The backend answers a scripted session by itself: one JSON line per request, then exit 0 at EOF."""
    step = lambda i, op, inputs, attrs, **kw: dict(  # noqa: E731
        type="step", index=i, step=dict(op=op, inputs=inputs, attrs=attrs, grad_enabled=True),
        before=kw.get("before", []), read=kw.get("read", []), observe=[i], grad=False, **kw.get("extra", {}))
    rand = dict(sizes=[2, 2], strides=[1, 2], offset=1, dtype="float64", device="cpu", requires_grad=True, seed=1)
    full = dict(sizes=[2, 2], scalar=dict(kind="float", value="inf"), dtype="float64", device="cpu",
                requires_grad=False)
    requests = [dict(type="hello", protocol=1, parity="test", ops=[], dtypes=[]), dict(type="start"),
                step(0, "rand", [], rand, extra=dict(data=[9, 1, 2, 3, 4])),
                step(1, "full", [], full),
                step(2, "mul", [0, 1], {}, before=[0, 1], read=[0]),
                step(3, "sum", [0], {}),
                step(4, "add", [3, 0], {}),  # [] + [2, 2]: the planted bug
                dict(type="read", ids=[3], autograd=False, grad=False)]
    r = subprocess.run([sys.executable, str(BACKEND)], cwd=repo, input="".join(json.dumps(q) + "\n" for q in requests),
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise Failure(f"{BACKEND} exited {r.returncode} at EOF; stderr:\n{r.stderr}")
    checks = [
        ("one JSON object per request", lambda a: [x["type"] for x in a] ==
         ["hello", "started", "step", "step", "step", "step", "step", "tensors"]),
        ("the library's name", lambda a: a[0]["library"]["name"] == "tinytensor"),
        ("rand's view of its storage, row-major", lambda a: a[2]["tensors"]["0"]["values"] == [1, 3, 2, 4]),
        ("before", lambda a: a[4]["before"] == {"0": {"values": [1, 3, 2, 4]}, "1": {"values": ["inf"] * 4}}),
        ("mul's result", lambda a: a[4]["tensors"]["2"] ==
         {"values": ["inf"] * 4, "sizes": [2, 2], "dtype": "float64", "device": "cpu"}),
        ("the planted bug", lambda a: not a[6]["ok"] and a[6]["error"]["category"] == "shape"),
        ("a read", lambda a: a[7]["tensors"] == {"3": {"values": [10.0]}}),
    ]
    try:
        answers = [json.loads(line) for line in r.stdout.splitlines()]  # a stray print fails here
        failed = [what for what, check in checks if not check(answers)]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        failed = [f"{type(e).__name__} {e}"]
    if failed:
        raise Failure(f"{BACKEND} answered a scripted session wrongly ({'; '.join(failed)}):\n{r.stdout}")


def run_command(command, expected, parity, args, repo, log, started):
    """Runs one of the tutorial's commands in the copy; returns its exit status, which must be `expected`."""
    actual = PARITY.sub(shlex.quote(parity), command)
    if fuzz_out(command) is not None and args.extra_fuzz_args:
        actual += " " + args.extra_fuzz_args
    left = args.budget_s - (time.monotonic() - started)
    t0 = time.monotonic()
    with open(log, "w") as f:
        f.write(f"$ {actual}\n")
        f.flush()
        try:
            status = subprocess.run(["bash", "-c", actual], cwd=repo, stdout=f, stderr=subprocess.STDOUT,
                                    timeout=max(left, 1)).returncode
        except subprocess.TimeoutExpired:
            raise Failure(f"`{command}` was still running when the test's {args.budget_s:g} s were spent")
    print(f"[{time.monotonic() - started:5.1f}s] exit {status} (expected {expected}) "
          f"in {time.monotonic() - t0:.1f}s: {command}", flush=True)
    if status != expected:
        tail = "".join(log.read_text().splitlines(keepends=True)[-40:])
        raise Failure(f"`{command}` exited {status}; the tutorial says {expected}. Its output (whole: {log}):\n{tail}")
    return status


def run_blocks(parity, args, repo, logs, started):
    """Walks the tutorial's blocks in order: edits and shell commands run, quotes checked against the files and
    the output. Returns the commands run (command, expected, status) and the campaigns (command, out, expected)."""
    ran, campaigns, last_log = [], [], None
    backend_lines = {line.rstrip() for line in (ROOT / BACKEND).read_text().splitlines()}
    for language, info, text in blocks((ROOT / TUTORIAL).read_text()):
        target = info[len("file="):] if info.startswith("file=") else None
        if language == "python" and target:
            replace_functions(repo / target, text)
            ran.append((f"(edit {target})", 0, 0))
        elif language == "python":
            stale = [line for line in text.splitlines() if line.strip() and line.rstrip() not in backend_lines]
            if stale:
                raise Failure(f"{TUTORIAL} quotes lines that {BACKEND} does not have: {stale}")
        elif language == "json" and target:
            if json.loads(text) != json.loads((ROOT / target).read_text()):
                raise Failure(f"{TUTORIAL} shows another {target} than the file")
        elif language == "text" and last_log:
            shown = [line for line in text.splitlines() if GROUP_LINE.match(line)]
            if "parity fuzz:" in text and not shown:
                raise Failure(f"{TUTORIAL} quotes a campaign summary whose group lines this test cannot read")
            missing = [line for line in shown if line not in last_log.read_text().splitlines()]
            if missing:
                raise Failure(f"{TUTORIAL} shows group lines that `{ran[-1][0]}` did not print: {missing}")
        elif language == "sh":
            for command, expected in commands(text):
                last_log = logs / f"{len(ran):02d}.txt"
                status = run_command(command, expected, parity, args, repo, last_log, started)
                ran.append((command, expected, status))
                if fuzz_out(command) is not None:
                    campaigns.append((command, fuzz_out(command), expected))
    return ran, campaigns


def check_campaigns(repo, ran, campaigns):
    """What the campaigns wrote: the planted bug found, no backend failure, the ledger matching, the fix
    finding nothing. Returns the planted signatures the first campaign found."""
    if not campaigns:
        raise Failure(f"{TUTORIAL} runs no campaign")
    if ran[-1][1] != 0 or fuzz_out(ran[-1][0]) is None:
        raise Failure(f"{TUTORIAL} must end on a campaign that exits 0; it ends on `{ran[-1][0]}`")
    first = run_json(repo, campaigns[0][1])
    library = first.get("backends", {}).get("impl", {}).get("library")
    if library != "tinytensor":
        raise Failure(f"run.json's backends.impl.library is {library!r}, not 'tinytensor'")
    found = {g["signature"] for g in first["groups"]}
    if not found & PLANTED:
        raise Failure(f"the first campaign did not find the planted bug ({sorted(PLANTED)}); it found "
                      f"{sorted(found) or 'nothing'}")
    for command, out, _ in campaigns:
        groups = run_json(repo, out)["groups"]
        failed = [g["signature"] for g in groups if g["signature"].split(":")[1] in BACKEND_FAILURES]
        if failed:
            raise Failure(f"`{command}`: the backend failed ({failed}): see {repo / out / 'findings.jsonl'}")
        if "--known" in shlex.split(command) and not (groups and all(g["expected"] for g in groups)):
            raise Failure(f"`{command}`: the ledger should match every group: {[g['signature'] for g in groups]}")
    last = run_json(repo, campaigns[-1][1])["groups"]
    if last:
        raise Failure(f"the last campaign (after the fix) still finds {[g['signature'] for g in last]}")
    return found & PLANTED


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parity", required=True, help="the parity binary under test")
    ap.add_argument("--work", required=True, help="a scratch folder (WORK/repo is replaced)")
    ap.add_argument("--extra-fuzz-args", default="", help="appended to every `parity fuzz` command")
    ap.add_argument("--budget-s", type=float, default=BUDGET_S, help=f"time for the whole test (default {BUDGET_S})")
    args = ap.parse_args()
    parity = str(Path(args.parity).resolve())
    if not os.access(parity, os.X_OK):
        sys.exit(f"tutorial_test: {parity} is not an executable")
    started = time.monotonic()

    repo = Path(args.work).resolve() / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "docs", repo / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    logs = repo.parent / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir()
    try:
        lines = len((ROOT / BACKEND).read_text().splitlines())
        if lines > MAX_BACKEND_LINES:
            raise Failure(f"{BACKEND} has {lines} lines; the tutorial promises at most {MAX_BACKEND_LINES}")
        check_backend_alone(repo)
        ran, campaigns = run_blocks(parity, args, repo, logs, started)
        found = check_campaigns(repo, ran, campaigns)
    except Failure as e:
        print(f"tutorial_test: FAILED after {time.monotonic() - started:.1f}s: {e}", file=sys.stderr)
        return 1
    print(f"tutorial_test: passed in {time.monotonic() - started:.1f}s ({len(ran)} commands; first campaign found "
          f"{', '.join(sorted(found))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
