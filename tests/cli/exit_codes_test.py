#!/usr/bin/env python3
"""The exit statuses of `parity fuzz` and `parity drift` that tell a whole run from a partial or empty one.

usage: exit_codes_test.py PARITY_BINARY WORK_DIR

Each stop signal (SIGINT, SIGTERM, SIGHUP, SIGUSR1) sent to a running campaign must end it cleanly: run.json
written and marked interrupted, with the budget it was given, and exit status 5, so that a partial run is never
taken for a whole one. A campaign given no case (--cases 0, --seconds 0, a shard with no case index below --cases)
must fail with exit status 6, saying why.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

failures = []
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)
# Far more cases than run before the signal: the campaign is always stopped midway.
MANY_CASES = 1_000_000
EXIT_FINDINGS = 1
EXIT_INTERRUPTED = 5
EXIT_NO_CASES = 6


def fail(message):
    failures.append(message)
    print(f"exit_codes: FAIL: {message}", file=sys.stderr)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX",
                        "PARITY_PLANT")}
    env.update(extra)
    return env


def run_until_signal(cmd, started, sig, settle_s=2.0, timeout_s=120, env=None):
    """Starts `cmd`, waits for the stderr line starting with `started` (printed once its signal handlers are in
    place), lets it run `settle_s`, sends `sig` and returns (exit status, output). A status below 0 is the
    signal that killed it."""
    proc = subprocess.Popen(cmd, env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    ready = threading.Event()

    def drain(stream):
        for line in stream:
            lines.append(line)
            if line.startswith(started):
                ready.set()

    threads = [threading.Thread(target=drain, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)]
    for t in threads:
        t.start()
    if not ready.wait(timeout_s):
        proc.kill()
        proc.wait()
        return None, "".join(lines)
    time.sleep(settle_s)
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = "still running after the signal"
    for t in threads:
        t.join(timeout=10)
    return code, "".join(lines)


def sig_name(label):
    return label.rsplit(" ", 1)[-1]


def read_run(out):
    try:
        return json.loads((out / "run.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        return e


def check_stopped_run(label, out, code, text, budget_cases):
    run = read_run(out)
    if isinstance(run, Exception):
        fail(f"{label}: no readable run.json after the signal ({run}); exit {code}, output:\n{text[-1500:]}")
        return
    if run.get("interrupted") is not True:
        fail(f"{label}: run.json is not marked interrupted")
    if run.get("budget") != {"cases": budget_cases, "seconds": None}:
        fail(f"{label}: run.json budget is {run.get('budget')}, expected cases {budget_cases}")
    if not 0 <= run["cases"] < budget_cases:
        fail(f"{label}: run.json says {run['cases']} cases of a budget of {budget_cases}")
    if code != EXIT_INTERRUPTED:
        fail(f"{label}: exit {code}, expected {EXIT_INTERRUPTED} (interrupted); output:\n{text[-1500:]}")
    elif f"stopped by {sig_name(label)}" not in text:
        fail(f"{label}: stderr does not say which signal stopped it:\n{text[-1500:]}")


def check_fuzz_signals(parity, work):
    for sig in STOP_SIGNALS:
        out = work / f"fuzz-{sig.name}"
        # The CI campaign's command (ci/campaign.sh, ctest differential_campaign), stopped midway.
        cmd = [parity, "fuzz", "--cases", str(MANY_CASES), "--seed", "20261121", "--require-coverage", "--jobs", "1",
               "--out", str(out)]
        code, text = run_until_signal(cmd, "parity fuzz: seed", sig)
        check_stopped_run(f"parity fuzz stopped by {sig.name}", out, code, text, MANY_CASES)


def check_drift_signals(parity, work):
    # drift against this very build: it runs the same workers and loop as against another release.
    for sig in (signal.SIGHUP, signal.SIGUSR1):
        out = work / f"drift-{sig.name}"
        cmd = [parity, "drift", "--against", parity, "--cases", str(MANY_CASES), "--seed", "3", "--out", str(out)]
        code, text = run_until_signal(cmd, "parity drift: LibTorch", sig)
        check_stopped_run(f"parity drift stopped by {sig.name}", out, code, text, MANY_CASES)


def check_stopped_with_findings(parity, work):
    """Findings outrank a stop signal: exit 1, and the message names that status, not 5."""
    out = work / "fuzz-stopped-with-findings"
    cmd = [parity, "fuzz", "--cases", str(MANY_CASES), "--seed", "5", "--jobs", "1", "--out", str(out)]
    code, text = run_until_signal(cmd, "parity fuzz: seed", signal.SIGTERM, env=clean_env(PARITY_PLANT="mul=values"))
    if code != EXIT_FINDINGS:
        fail(f"a planted campaign stopped by SIGTERM exited {code}, expected {EXIT_FINDINGS}:\n{text[-1500:]}")
    elif f"(exit {EXIT_FINDINGS}, for its findings)" not in text or f"(exit {EXIT_INTERRUPTED})" in text:
        fail(f"a planted campaign stopped by SIGTERM: the message should name exit {EXIT_FINDINGS}:\n{text[-1500:]}")


def check_no_case(parity, work):
    plans = {
        "--cases 0": ([ "--cases", "0"], {}, "--cases 0 asks for none"),
        "--seconds 0": (["--seconds", "0"], {}, "--seconds 0 ran out before the first case started"),
        "an empty shard": (["--cases", "3"], {"GTEST_TOTAL_SHARDS": "5", "GTEST_SHARD_INDEX": "4"},
                           "--cases 3 gives shard 4 of 5 no case"),
    }
    for n, (label, (args, env, why)) in enumerate(plans.items()):
        out = work / f"no-case-{n}"
        cmd = [parity, "fuzz", "--seed", "1", "--jobs", "1", "--out", str(out)] + args
        p = subprocess.run(cmd, env=clean_env(**env), capture_output=True, text=True, timeout=120)
        if p.returncode != EXIT_NO_CASES:
            fail(f"parity fuzz with {label} exited {p.returncode}, expected {EXIT_NO_CASES} (no case ran):\n"
                 f"{p.stderr[-1500:]}")
        elif why not in p.stderr:
            fail(f"parity fuzz with {label}: stderr does not say \"{why}\":\n{p.stderr[-1500:]}")
        run = read_run(out)
        if isinstance(run, Exception) or run["cases"] != 0 or run["interrupted"]:
            fail(f"parity fuzz with {label}: run.json should say 0 cases, not interrupted: {run}")
    out = work / "no-case-drift"
    p = subprocess.run([parity, "drift", "--against", parity, "--cases", "0", "--out", str(out)], env=clean_env(),
                       capture_output=True, text=True, timeout=120)
    if p.returncode != EXIT_NO_CASES:
        fail(f"parity drift --cases 0 exited {p.returncode}, expected {EXIT_NO_CASES}:\n{p.stderr[-1500:]}")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    parity = os.path.abspath(argv[1])
    work = pathlib.Path(argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    check_fuzz_signals(parity, work)
    check_drift_signals(parity, work)
    check_stopped_with_findings(parity, work)
    check_no_case(parity, work)

    if failures:
        print(f"exit_codes: {len(failures)} failure(s); outputs kept in {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("exit_codes: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
