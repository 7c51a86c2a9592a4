#!/usr/bin/env python3
"""What parity reads and writes, checked against hostile paths and files (issue 13's reproductions).

usage: file_safety_test.py PARITY_BINARY WORK_DIR

Inputs: a device or a FIFO is refused at once (no hang, no endless read).
JSON: nesting 100,000 levels deep and a number out of range (1e400) are refused with the file and line named,
never a crash.
Outputs: a device node, a FIFO or a symbolic link where an output goes is refused, left as it was, and nothing
is written through it.
A dangling link where a campaign's or a merge's output goes counts as output already there.
An output may not be an input of the same command.
Text from a finding reaches the terminal with its control characters escaped.
`replay` warns when a finding was made by another LibTorch, commit or generator.

Every parity run has a time limit and a memory limit, so that a parity that hangs or reads without end fails
this test instead of stalling or exhausting the machine. No test touches anything outside WORK_DIR but
/dev/zero, which it only reads.
"""
import json
import os
import pathlib
import resource
import shutil
import signal
import stat
import subprocess
import sys

failures = []
PARITY = None
WORK = None


def fail(message):
    failures.append(message)
    print(f"file_safety: FAIL: {message}", file=sys.stderr)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


class Run:
    def __init__(self, args, rc, out, err):
        self.args, self.rc, self.out, self.err = args, rc, out, err

    def __str__(self):
        return f"`parity {' '.join(self.args)}` (exit {self.rc}): {(self.out + self.err)[-2000:]}"


def parity(*args, plant=None, timeout=60, extra_env=None, limits=limit_memory):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "TEST_SHARD_STATUS_FILE", "PARITY_PLANT")}
    if plant:
        env["PARITY_PLANT"] = plant
    env.update(extra_env or {})
    args = [str(a) for a in args]
    try:
        p = subprocess.run([PARITY] + args, env=env, capture_output=True, timeout=timeout, preexec_fn=limits)
    except subprocess.TimeoutExpired:
        return Run(args, "timeout", "", f"did not finish in {timeout} s")
    return Run(args, p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"))


def expect_refused(r, *fragments):
    """Exit 2 with one error line holding every fragment."""
    ok = check(r.rc == 2, f"expected exit 2 from {r}")
    for f in fragments:
        ok = check(f in r.err, f"expected {f!r} in the error of {r}") and ok
    return ok


def file_type(path):
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "absent"
    for name, test in (("link", stat.S_ISLNK), ("fifo", stat.S_ISFIFO), ("chr", stat.S_ISCHR),
                       ("dir", stat.S_ISDIR), ("file", stat.S_ISREG)):
        if test(mode):
            return name
    return "other"


def findings_lines(folder):
    return (folder / "findings.jsonl").read_text().splitlines()


# ---- outputs --------------------------------------------------------------------------------------------------

def test_output_on_a_device_node(base):
    node = WORK / "fakenull"
    if os.geteuid() == 0:
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a null device of our own, never /dev/null
        kind = "chr"
    else:
        os.mkfifo(node)  # mknod needs root; a FIFO is the same case for parity
        kind = "fifo"
    r = parity("report", base, "-o", node)
    expect_refused(r, str(node), "will not write the report there")
    check(file_type(node) == kind, f"-o {node} ({kind}) is now {file_type(node)}")


def test_link_at_the_old_temporary_name():
    out = WORK / "out"
    out.mkdir()
    (out / "run.json.tmp").symlink_to(WORK / "victim")
    r = parity("fuzz", "--cases", 5, "--seed", 7, "--out", out)
    check(r.rc == 0, f"expected exit 0 from {r}")
    check(file_type(WORK / "victim") == "absent", "a campaign wrote through out/run.json.tmp, a link to ../victim")
    check(file_type(out / "run.json") == "file", f"out/run.json is a {file_type(out / 'run.json')}")
    left = [p.name for p in out.iterdir() if p.name.endswith(".tmp") and p.name != "run.json.tmp"]
    check(not left, f"temporary files left in {out}: {left}")


def test_findings_through_a_dangling_link():
    out = WORK / "out2"
    out.mkdir()
    (out / "findings.jsonl").symlink_to(WORK / "outside")
    r = parity("fuzz", "--cases", 100, "--seed", 7, "--out", out, plant="mul=values")
    expect_refused(r, "already holds a campaign's output (findings.jsonl)")
    check(file_type(WORK / "outside") == "absent", "a campaign wrote its findings outside --out, through a link")
    # --overwrite removes the link itself, never what it names.
    r = parity("fuzz", "--cases", 100, "--seed", 7, "--out", out, "--overwrite", plant="mul=values")
    check(r.rc in (0, 1), f"expected exit 0 or 1 (findings) from {r}")
    check(file_type(WORK / "outside") == "absent", "--overwrite wrote findings outside --out, through a link")
    check(file_type(out / "findings.jsonl") == "file" and findings_lines(out),
          "--overwrite did not write findings.jsonl as a file of its own")


def test_shard_status_file_through_a_link():
    # Bazel's TEST_SHARD_STATUS_FILE is touched, never written through a symbolic link.
    link = WORK / "status-link"
    link.symlink_to(WORK / "status-outside")
    r = parity("fuzz", "--cases", 1, "--seed", 7, "--out", WORK / "status-out",
               extra_env={"TEST_SHARD_STATUS_FILE": str(link)})
    expect_refused(r, "symbolic link")
    check(file_type(WORK / "status-outside") == "absent", "TEST_SHARD_STATUS_FILE was followed through a link")


def test_a_full_disk_fails_loudly_and_keeps_what_was_written():
    # A file size limit stands in for a full disk (no mount needed): a write past it fails (EFBIG) as with ENOSPC.
    # Whichever file fills first (the journal or findings.jsonl), the campaign must stop with an error naming it,
    # and every finding written before must still be whole.
    def small_files():
        limit_memory()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (20 << 10, 20 << 10))
    out = WORK / "full"
    r = parity("fuzz", "--cases", 300, "--seed", 7, "--out", out, plant="mul=values,neg=error", limits=small_files,
               timeout=300)
    expect_refused(r, str(out), "cannot write", "File too large")
    findings = out / "findings.jsonl"
    lines = findings.read_text().split("\n")[:-1] if findings.exists() else []  # the last: empty, or torn
    if "findings.jsonl: cannot write" in r.err:
        check(lines, f"no finding was kept of those written before the disk filled: {r}")
    for line in lines:
        try:
            json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"a finding written before the disk filled is broken ({e}): {line[:80]}")


def test_report_over_its_own_input(base):
    copy = WORK / "b2"
    shutil.copytree(base, copy)
    before = {name: (copy / name).read_bytes() for name in ("findings.jsonl", "run.json")}
    os.link(copy / "findings.jsonl", WORK / "alias.jsonl")
    for out in (copy / "findings.jsonl", copy / "run.json", WORK / "alias.jsonl"):
        r = parity("report", copy, "-o", out)
        expect_refused(r, "an input of this command")
    for name, data in before.items():
        check((copy / name).read_bytes() == data, f"`parity report -o` replaced its input {name}")


def test_merge_into_a_dangling_link(base):
    out = WORK / "merged"
    out.mkdir()
    (out / "findings.jsonl").symlink_to(WORK / "merge-outside")
    r = parity("merge", base, "-o", out)
    expect_refused(r, "already holds a run (findings.jsonl)")
    check(file_type(WORK / "merge-outside") == "absent", "merge wrote findings outside -o, through a link")


# ---- inputs ---------------------------------------------------------------------------------------------------

def test_a_device_is_not_read():
    r = parity("replay", "/dev/zero", timeout=30)
    expect_refused(r, "/dev/zero: cannot read: it is a character device")


def test_a_fifo_does_not_hang(base):
    fifo = WORK / "program.fifo"
    os.mkfifo(fifo)
    expect_refused(parity("run", fifo, timeout=30), "program.fifo: cannot read: it is a FIFO")
    expect_refused(parity("replay", fifo, timeout=30), "program.fifo: cannot read: it is a FIFO")
    copy = WORK / "b3"
    shutil.copytree(base, copy)
    (copy / "run.json").unlink()
    os.mkfifo(copy / "run.json")
    r = parity("report", copy, "-o", WORK / "b3.html", timeout=30)
    check(r.rc == 0, f"a run.json that is a FIFO is left out of the page, with a warning: {r}")
    check("run.json: cannot read: it is a FIFO" in r.err, f"the warning names the FIFO: {r}")
    (copy / "findings.jsonl").unlink()
    os.mkfifo(copy / "findings.jsonl")
    expect_refused(parity("report", copy, "-o", WORK / "b3.html", timeout=30), "findings.jsonl: cannot read: it is a FIFO")


# ---- JSON -----------------------------------------------------------------------------------------------------

def test_deep_nesting(base):
    deep = "[" * 100000 + "]" * 100000
    shard = WORK / "b4"
    shutil.copytree(base, shard)
    line = len(findings_lines(shard)) + 1
    with open(shard / "findings.jsonl", "a") as f:
        f.write(deep + "\n")
    where = f"findings.jsonl:{line}:"
    expect_refused(parity("merge", shard, "-o", WORK / "m4"), where, "nested deeper than")
    expect_refused(parity("replay", shard / "findings.jsonl", "--index", line - 1), where, "nested deeper than")
    r = parity("report", shard, "-o", WORK / "b4.html")
    check(r.rc == 0 and where in r.err and "nested deeper than" in r.err,
          f"report leaves the deep line out, naming it: {r}")
    (WORK / "deep.json").write_text('{"schema_version": 1, "steps": ' + deep + "}")
    expect_refused(parity("run", WORK / "deep.json"), "deep.json:1:", "nested deeper than")
    (WORK / "deep-known.json").write_text('{"schema_version": 1, "entries": ' + deep + "}")
    expect_refused(parity("fuzz", "--cases", 1, "--known", WORK / "deep-known.json", "--out", WORK / "deep-out"),
                   "deep-known.json:1:", "nested deeper than")
    run = WORK / "b5"
    shutil.copytree(base, run)
    (run / "run.json").write_text('{"groups": ' + deep + "}\n")
    expect_refused(parity("merge", run, "-o", WORK / "m5"), "run.json:1:", "nested deeper than")


def test_number_out_of_range(base):
    finding = json.loads(findings_lines(base)[0])
    text = json.dumps(finding).replace('"shrink_evaluations": %d' % finding["shrink_evaluations"],
                                       '"shrink_evaluations": 1e400')
    check("1e400" in text, "the test could not place 1e400 in a finding")
    path = WORK / "overflow.jsonl"
    path.write_text(text + "\n")
    expect_refused(parity("replay", path), "overflow.jsonl:1:", "number overflow parsing '1e400'")


# ---- text on the terminal -------------------------------------------------------------------------------------

HOSTILE = "\x1b[2J\x1b]0;owned\x07\u009b31m"


def test_control_characters_are_escaped(base):
    finding = json.loads(findings_lines(base)[0])
    plant = ",".join(finding["planted_faults"])
    finding["planted_faults"] = finding["planted_faults"] + ["mul=values" + HOSTILE]
    path = WORK / "hostile.json"
    path.write_text(json.dumps(finding))
    r = parity("replay", path, plant=plant)
    check(r.rc == 1, f"the hostile finding still replays: {r}")
    for shown in (r.out, r.err):
        check(not any(c in shown for c in "\x1b\x07\u009b"), f"a control character reached the terminal: {shown!r}")
    check("\\x1b[2J\\x1b]0;owned\\x07\\u009b31m" in r.err, f"the planted faults are shown escaped: {r.err!r}")
    # The page's warnings, printed on stderr, quote the file too.
    copy = WORK / "b6"
    shutil.copytree(base, copy)
    finding["signature"] = "mul" + HOSTILE
    with open(copy / "findings.jsonl", "a") as f:
        f.write(json.dumps(finding) + "\n")
    r = parity("report", copy, "-o", WORK / "b6.html")
    check(r.rc == 0 and "\\x1b[2J" in r.err and "\x1b" not in r.err, f"report's warnings are escaped: {r.err!r}")


def test_replay_warns_of_another_build(base):
    finding = json.loads(findings_lines(base)[0])
    plant = ",".join(finding["planted_faults"])
    finding.update(libtorch_version="0.0.1-elsewhere", parity_commit="0000000", generator_version=1)
    path = WORK / "elsewhere.json"
    path.write_text(json.dumps(finding))
    r = parity("replay", path, plant=plant)
    check(r.rc == 1, f"a finding of another build is still replayed: {r}")
    for made_with in ("LibTorch 0.0.1-elsewhere", "parity commit 0000000", "generator version 1,"):
        lines = [l for l in r.err.splitlines() if "warning: this finding was made with " + made_with in l]
        check(len(lines) == 1, f"one warning line for {made_with!r}: {r.err!r}")


def main(argv):
    global PARITY, WORK
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    PARITY = str(pathlib.Path(argv[1]).resolve())
    WORK = pathlib.Path(argv[2]).resolve()
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    base = WORK / "base"
    r = parity("fuzz", "--cases", 300, "--seed", 7, "--out", base, plant="mul=values,neg=error", timeout=300)
    if r.rc != 1 or not (base / "findings.jsonl").exists() or not findings_lines(base):
        print(f"file_safety: the planted campaign found nothing: {r}", file=sys.stderr)
        return 1
    tests = [(name, f) for name, f in globals().items() if name.startswith("test_")]
    for name, f in tests:
        before = len(failures)
        try:
            f(base) if f.__code__.co_argcount else f()
        except Exception as e:  # a test that breaks is a failure, and the others still run
            fail(f"{name} raised {type(e).__name__}: {e}")
        print(f"file_safety: {name}: {'ok' if len(failures) == before else 'FAILED'}")
    if failures:
        print(f"file_safety: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print(f"file_safety: all {len(tests)} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
