#!/usr/bin/env python3
"""Checks that a Python repro observes every kind of divergence as parity renders it, kind by kind.

Planted faults reach only some divergence kinds (repro_test.py runs those end to end). For the others, this test
takes LibTorch's own traces of one program that makes a view, a result and a gradient, and writes one finding per
kind at the value that kind concerns, in two variants:
- the library's trace is LibTorch's own: the repro must observe LibTorch agreeing with it and end with PASS;
- the library's trace has that one observation changed: the repro must end with FAIL (for a few kinds, one per
  way of observing: that a difference fails is one string comparison, the same for every kind).
`parity report` prints the repros (from the findings' own traces, as a user gets them), and each is run with
PyTorch. A PASS for every kind shows that the repro's live observation renders as judge::observation_text does.

usage: repro_kinds_test.py --parity BIN --work DIR [--python PY] [--jobs N]
exit status: 0 passed, 1 failed, 77 skipped (no PyTorch for PY).
"""
import argparse
import concurrent.futures
import copy
import html
import json
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
# v0 a leaf that requires grad, v1 a view of it (transpose), v2 a result, v3 their sum, step 4 its backward.
PROGRAM = {"schema_version": 1, "steps": [
    {"op": "rand", "inputs": [], "attrs": {"sizes": [2, 3], "strides": [3, 1], "offset": 0, "dtype": "float32",
                                           "requires_grad": True, "seed": 5}},
    {"op": "transpose", "inputs": [0], "attrs": {"dim": 0, "dim1": 1}},
    {"op": "mul_scalar", "inputs": [1], "attrs": {"scalar": {"kind": "float", "value": 2.0}}},
    {"op": "sum", "inputs": [2], "attrs": {}},
    {"op": "backward", "inputs": [3], "attrs": {"retain_graph": False, "create_graph": False}}]}


def flip(key):
    def change(o):
        o[key] = not o[key]
    return change


def grad_change(change):
    def on_grad(o):
        change(o["grad"])
    return on_grad


# Each kind: the (step, value) it is checked at, and how a library that differs there changes the observation.
KINDS = {
    "sizes": (1, 1, lambda o: o["sizes"].append(1)),
    "dtype": (1, 1, lambda o: o.update(dtype="float64")),
    "device": (1, 1, lambda o: o.update(device="cuda:0")),
    "strides": (1, 1, lambda o: o.update(strides=[9, 9])),
    "offset": (1, 1, lambda o: o.update(offset=o["offset"] + 1)),
    "alias": (1, 1, lambda o: o.update(alias_of=1)),
    "identity": (1, 1, lambda o: o.update(same_as=0)),
    "view": (1, 1, lambda o: o.update(is_view=False, base=-1)),
    "version": (1, 1, lambda o: o.update(version=o["version"] + 1)),
    "requires_grad": (1, 1, flip("requires_grad")),
    "is_leaf": (1, 1, flip("is_leaf")),
    "retains_grad": (1, 1, flip("retains_grad")),
    "grad_fn": (1, 1, lambda o: o.update(grad_fn="NotABackward0")),
    "contiguity": (1, 1, flip("contiguous")),
    "values": (2, 2, lambda o: o["values"].__setitem__(0, o["values"][0] + 1)),
    "grad_defined": (4, 0, lambda o: o.pop("grad")),
    "grad_sizes": (4, 0, grad_change(lambda g: g["sizes"].append(1))),
    "grad_dtype": (4, 0, grad_change(lambda g: g.update(dtype="float64"))),
    "grad_alias": (4, 0, grad_change(lambda g: g.update(alias_of=0))),
    "grad_version": (4, 0, grad_change(lambda g: g.update(version=g["version"] + 1))),
    "grad_strides": (4, 0, grad_change(lambda g: g.update(strides=[9, 9]))),
    "grad_values": (4, 0, grad_change(lambda g: g["values"].__setitem__(0, g["values"][0] + 1))),
}


# The kinds whose FAIL variant runs: a value's metadata, its elements, its gradient's metadata and elements.
FAIL_KINDS = ("identity", "values", "grad_alias", "grad_values")


def run(cmd, timeout=120, env=None):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -1, f"(timed out after {timeout} s)")


def traces(parity, work):
    """LibTorch's trace of PROGRAM (and impl's, which agrees), from `parity run --traces`."""
    path = os.path.join(work, "program.json")
    with open(path, "w") as f:
        json.dump(PROGRAM, f)
    res = run([parity, "run", path, "--traces"])
    if res.returncode != 0:
        sys.exit(f"FAIL: `parity run {path} --traces` exited {res.returncode}:\n{res.stdout[-3000:]}")
    decoder, text, found = json.JSONDecoder(), res.stdout, []
    at = text.find("{")
    while at >= 0:
        obj, end = decoder.raw_decode(text, at)
        found.append(obj)
        at = text.find("{", end)
    oracle = next(t for t in found if t.get("backend") == "libtorch")
    return oracle


def template(parity, work):
    """A real finding, whose provenance fields the synthetic ones keep."""
    out = os.path.join(work, "template")
    res = run([parity, "fuzz", "--cases", "100", "--seed", "5", "--out", out],
              env=dict(os.environ, PARITY_PLANT="mul=values"))
    path = os.path.join(out, "findings.jsonl")
    if res.returncode != 1 or not os.path.exists(path):
        sys.exit(f"FAIL: the planted campaign for a template finding exited {res.returncode}:\n{res.stdout[-3000:]}")
    with open(path) as f:
        return json.loads(f.readline())


def observation(trace, step, value):
    return next(o for o in trace["steps"][step]["observed"] if o["value"] == value)


def findings(base, oracle, differs):
    """One finding per kind; the library's trace LibTorch's own, or (differs) changed at the kind's point."""
    out = []
    for kind, (step, value, change) in KINDS.items():
        f = copy.deepcopy(base)
        f["program"] = PROGRAM
        f["oracle_trace"] = copy.deepcopy(oracle)
        library = copy.deepcopy(oracle)
        library["backend"] = "impl"
        if differs:
            change(observation(library, step, value))
        f["impl_trace"] = library
        f["signature"] = f"{PROGRAM['steps'][step]['op']}:{kind}"
        f["divergence"] = dict(f["divergence"], step=step, value=value, kind=kind, impl="(library)",
                               oracle="(LibTorch)", severity="major")
        for key in ("impl_category", "oracle_category", "signal"):
            f["divergence"].pop(key, None)
        f["planted_faults"] = []
        f["expected"], f["known_reason"] = False, ""
        out.append(f)
    return out


def repros(parity, folder, rows):
    """The Python repro of each kind, as `parity report` prints it."""
    os.makedirs(folder)
    with open(os.path.join(folder, "findings.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    page = os.path.join(folder, "report.html")
    res = run([parity, "report", folder, "-o", page])
    if res.returncode != 0 or "left out" in res.stdout:
        sys.exit(f"FAIL: `parity report {folder}` exited {res.returncode} or refused a finding:\n{res.stdout[-3000:]}")
    text = open(page, encoding="utf-8").read()
    out = {}
    for block in re.findall(r'<pre id="g\d+-py"><code>(.*?)</code></pre>', text, re.S):
        code = html.unescape(block)
        m = re.search(r'check(?:_elements|_recorded)?\("step \d+, v\d+: (\w+)"', code)
        if m:
            out[m.group(1)] = code
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parity", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if run([args.python, "-c", "import torch"]).returncode != 0:
        print(f"SKIP: {args.python} has no torch; the repros of every kind are run where it has")
        return SKIP
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    oracle, base = traces(args.parity, args.work), template(args.parity, args.work)
    jobs = {}
    for differs, want in ((False, "PASS"), (True, "FAIL")):
        printed = repros(args.parity, os.path.join(args.work, want.lower()), findings(base, oracle, differs))
        for kind in KINDS if not differs else FAIL_KINDS:
            if kind not in printed:
                jobs[(kind, want)] = None
                continue
            path = os.path.join(args.work, f"{want.lower()}_{kind}.py")
            with open(path, "w") as f:
                f.write(printed[kind])
            jobs[(kind, want)] = path
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = {key: pool.submit(run, [args.python, path]) for key, path in jobs.items() if path}
        results = {key: r.result() for key, r in results.items()}
    failures = []
    for (kind, want), path in jobs.items():
        if path is None:
            failures.append(f"{kind}: the report printed no Python repro that checks it ({want} variant)")
            continue
        res = results[(kind, want)]
        lines = [line for line in res.stdout.splitlines() if line.startswith(("PASS:", "FAIL:"))]
        if not lines or not lines[-1].startswith(want) or res.returncode != (0 if want == "PASS" else 1):
            failures.append(f"{kind}: {path} should end with {want}; it exited {res.returncode}:\n"
                            f"{res.stdout[-2500:]}")
        else:
            print(f"ok: {kind}: {want}")
    for f in failures:
        print(f"FAIL: {f}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
