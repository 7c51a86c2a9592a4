#!/usr/bin/env python3
"""Bounded memory, run as a user would: every command that evaluates programs holds the process running a
backend to `--memory-mb`, and a program past it is an out_of_memory divergence.

usage: memory_test.py PARITY_BINARY WORK_DIR

A valid program of 512 steps of `zeros [1048576] float64` (4 GiB of tensors) once drove `parity run`'s child to
7.7 GB of resident memory and was reported as a timeout. Under `--memory-mb 1024`, `parity run` and `parity
replay` must end it as out_of_memory (exit 1), with no process of parity's tree resident beyond the limit
(getrusage(RUSAGE_CHILDREN).ru_maxrss: the largest of the waited-for descendants); `parity claims` must apply
its default limit too (an allocation planted past it is out_of_memory). A program whose tensors fit must
agree with traces that do not grow with its elements (large values kept as summaries), and a wrong element of
a large tensor must still be a values divergence. A limit below what starting the backends takes is refused.
"""
import json
import os
import re
import resource
import subprocess
import sys

LIMIT_MB = 1024
# What a process of the tree may hold besides the capped child: parity's own parent process, LibTorch loaded.
MARGIN_MB = 256

failures = []


def fail(message):
    failures.append(message)
    print(f"memory_test: FAIL: {message}", file=sys.stderr)


def zeros_program(steps, dtype="float64"):
    step = {"op": "zeros", "attrs": {"sizes": [1048576], "dtype": dtype, "requires_grad": False},
            "inputs": [], "grad_enabled": True}
    return {"schema_version": 1, "steps": [step] * steps}


def write_program(work, name, program):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(program, f)
    return path


def parity(binary, args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "PARITY_PLANT")}
    env.update(env_extra or {})
    p = subprocess.run([binary] + args, env=env, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def max_rss_mb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # Linux: KiB


def expect_bounded(what):
    rss = max_rss_mb()
    if rss > LIMIT_MB + MARGIN_MB:
        fail(f"{what}: a process of parity's tree was resident at {rss:.0f} MiB, over --memory-mb {LIMIT_MB}")


def expect_out_of_memory(what, code, text):
    if code != 1:
        fail(f"{what} exited {code}, expected 1 (a divergence):\n{text[-3000:]}")
    elif "zeros:out_of_memory" not in text:
        fail(f"{what} did not end as zeros:out_of_memory:\n{text[-3000:]}")
    expect_bounded(what)


def check_least_limit(binary, work):
    """A limit too small for the backends to start is refused, naming the least that works; under that least, cases
    run (issue 32, F9: `fuzz --memory-mb 64` made every case a 10-second start-up timeout, and `run --memory-mb 512`
    a timeout divergence for a program of one 3-element zeros)."""
    zeros = {"op": "zeros", "attrs": {"sizes": [3], "dtype": "float32", "requires_grad": False}, "inputs": [],
             "grad_enabled": True}
    tiny = {"schema_version": 1, "steps": [zeros]}
    path = write_program(work, "zeros-3.json", tiny)
    for command in (["run", path], ["fuzz", "--cases", "30", "--out", os.path.join(work, "tiny-limit")]):
        code, out, err = parity(binary, command + ["--memory-mb", "64"])
        least = re.search(r"give --memory-mb (\d+) or more", err)
        if code != 2 or not least:
            fail(f"parity {command[0]} --memory-mb 64 exited {code}, not refused naming the least limit:\n"
                 f"{err[-2000:]}")
            continue
        out_dir = os.path.join(work, "least-limit")
        fuzz = ["fuzz", "--cases", "30", "--seed", "1", "--overwrite", "--out", out_dir]
        args = ["run", path] if command[0] == "run" else fuzz
        code, out, err = parity(binary, args + ["--memory-mb", least.group(1)])
        if command[0] == "run" and (code != 0 or "the traces agree" not in out):
            fail(f"parity run --memory-mb {least.group(1)} (the least it named) exited {code}:\n{(out + err)[-2000:]}")
        if command[0] == "fuzz":
            run = json.load(open(os.path.join(out_dir, "run.json"))) if code in (0, 1) else {}
            if run.get("cases") != 30 or run.get("timeouts") or run.get("out_of_memory"):
                fail(f"parity fuzz --memory-mb {least.group(1)} (the least it named): exit {code}, cases "
                     f"{run.get('cases')}, timeouts {run.get('timeouts')}, out of memory {run.get('out_of_memory')}")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, work = argv[1], argv[2]
    if os.environ.get("PARITY_ORACLE_LINKS_TORCH_CUDA") == "1":
        print(f"memory_test: skipped: this build's oracle links LibTorch's CUDA libraries, whose mappings take more "
              f"of the address space than --memory-mb {LIMIT_MB} leaves for the test's tensors")
        return 77
    os.makedirs(work, exist_ok=True)
    big = write_program(work, "zeros-512.json", zeros_program(512))
    limits = ["--memory-mb", str(LIMIT_MB), "--timeout-ms", "120000"]

    code, out, err = parity(binary, ["run", big] + limits)
    expect_out_of_memory("parity run", code, out + err)
    code, out, err = parity(binary, ["replay", big] + limits)
    expect_out_of_memory("parity replay", code, out + err)

    # impl's clone allocating past the default limit: that side of the claim did not run, out of memory.
    code, out, err = parity(binary, ["claims", "--only", "clone-own-memory", "--json"], {"PARITY_PLANT": "clone=oom"})
    try:
        impl = json.loads(out)["claims"][0]["impl"]
    except (ValueError, KeyError, IndexError) as e:
        impl = {"problem": f"no claim in the output ({e})"}
    if code != 1 or not impl.get("problem", "").startswith("out_of_memory"):
        fail(f"parity claims with PARITY_PLANT=clone=oom exited {code}, impl's side is not out_of_memory:\n"
             f"{(out + err)[-3000:]}")

    # 384 MiB of tensors fit the limit, and the traces (large values kept as summaries) must not grow with
    # them: every value kept, as JSON, took the child past 1 GiB.
    fits = write_program(work, "zeros-48.json", zeros_program(48))
    code, out, err = parity(binary, ["run", fits, "--traces"] + limits)
    if code != 0 or "the traces agree" not in out or '"values_summary"' not in out:
        fail(f"parity run of 48 large zeros exited {code}, expected agreeing traces with summarised values:\n"
             f"{(out + err)[-3000:]}")
    expect_bounded("parity run of 48 large zeros")

    # A wrong element in a tensor of 2^20 is still a values divergence when the values are summarised.
    planted = zeros_program(1, "float32")
    planted["steps"].append({"op": "neg", "inputs": [0], "grad_enabled": True})
    wrong = write_program(work, "neg-large.json", planted)
    code, out, err = parity(binary, ["run", wrong], {"PARITY_PLANT": "neg=values"})
    if code != 1 or "neg:values" not in out:
        fail(f"parity run with PARITY_PLANT=neg=values on 2^20 elements exited {code} without neg:values:\n"
             f"{(out + err)[-3000:]}")

    check_least_limit(binary, work)

    if failures:
        return 1
    print(f"memory_test: ok (largest resident process {max_rss_mb():.0f} MiB under --memory-mb {LIMIT_MB})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
