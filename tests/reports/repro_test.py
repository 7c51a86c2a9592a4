#!/usr/bin/env python3
"""Checks that the repros printed by `parity replay --cpp/--python` stand alone: they show LibTorch's side of a
finding, and check the first difference themselves, ending with PASS or FAIL.

A planted campaign (PARITY_PLANT) gives findings of known groups, one divergence kind or more each; for one
finding of each group two repros are printed, built (C++: one CMake project, every repro an executable, one
parallel build; Python: a syntax check, which needs no torch) and run:
- replayed without the planted faults, the library under test is impl as it is, which does what LibTorch does:
  the repro must end with PASS (exit 0), and its output must show the finding's oracle trace: the diverging value
  as LibTorch made it, LibTorch's error where it raised, never impl's side where that differs;
- replayed with them, the library is the planted impl: the repro must end with FAIL (exit 1).

usage: repro_test.py --parity BIN --lang cpp --work DIR --cmake CMAKE --torch-dir DIR [--generator G ...]
       repro_test.py --parity BIN --lang python --work DIR [--python PY]
exit status: 0 passed, 1 failed, 77 skipped (Python repros that cannot run: no PyTorch).
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

SKIP = 77
# mul=values: impl's mul result is off by one in element 0; neg=error: impl refuses neg (LibTorch runs it).
# sigmoid=values too: its values are not short decimals (mul's of the seeded quarters are), so a repro that
# rounds what it prints is caught. deepcopy=values: only such repros carry the deepcopy recipe, which must build.
# The others give one divergence kind each, so that each kind's check is built and run: mul_=fresh (identity),
# div=message (message), add=writes_input (schema, which no repro observes: the recorded sides stand), and the
# ones that kill the case's process: abs=crash, exp=hang (timeout), tanh=oom (out_of_memory).
PLANT = ("mul=values,neg=error,sigmoid=values,deepcopy=values,mul_=fresh,div=message,add=writes_input,abs=crash,"
         "exp=hang,tanh=oom")
# Each kind of check must be exercised, or the test proves nothing.
REQUIRED_GROUPS = ("mul:values", "neg:status:argument", "sigmoid:values", "deepcopy:values", "mul_:identity",
                   "div:message:shape", "add:schema", "abs:crash:SIGSEGV", "exp:timeout", "tanh:out_of_memory")
# A hang is cut short: the campaign and every replay of exp=hang wait this long for it.
TIMEOUT_MS = "1000"

started = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - started:5.1f}s] {msg}", flush=True)


def run(cmd, timeout, env=None):
    """The command's exit status and output; a hang is a failure to report like any other (status -1)."""
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return subprocess.CompletedProcess(cmd, -1, out + f"\n(timed out after {timeout} s: {' '.join(cmd)})")


# ---- the campaign and the repros ----

def planted_campaign(parity, work, cases, seed):
    out = os.path.join(work, "campaign")
    env = dict(os.environ, PARITY_PLANT=PLANT)
    cmd = [parity, "fuzz", "--cases", str(cases), "--seed", str(seed), "--out", out, "--timeout-ms", TIMEOUT_MS]
    res = run(cmd, timeout=120, env=env)
    # 1: findings were made, which a planted campaign must do.
    if res.returncode != 1:
        sys.exit(f"FAIL: PARITY_PLANT={PLANT} {' '.join(cmd)} exited {res.returncode} (expected 1, findings):\n"
                 f"{res.stdout[-4000:]}")
    path = os.path.join(out, "findings.jsonl")
    with open(path) as f:
        findings = [json.loads(line) for line in f if line.strip()]
    return path, findings


def one_per_group(findings):
    """The smallest program of each planted signature (the quickest repro to build), first one on ties. Other
    groups are impl's own divergences from this LibTorch (ledgered ones), against which no repro passes."""
    picked = {}
    for index, f in enumerate(findings):
        sig = f["signature"]
        if sig not in REQUIRED_GROUPS:
            continue
        if sig not in picked or len(f["program"]["steps"]) < len(findings[picked[sig]]["program"]["steps"]):
            picked[sig] = index
    missing = [g for g in REQUIRED_GROUPS if g not in picked]
    if missing:
        sys.exit(f"FAIL: the planted campaign made no finding of {', '.join(missing)} (groups: {sorted(picked)})")
    return sorted(picked.items())


def print_repro(parity, findings_path, index, lang, planted):
    """The repro text of finding `index`, replayed on impl as it is, or (`planted`) on the planted impl."""
    env = {k: v for k, v in os.environ.items() if k != "PARITY_PLANT"}
    if planted:
        env["PARITY_PLANT"] = PLANT
    flag = "--cpp" if lang == "cpp" else "--python"
    res = run([parity, "replay", findings_path, "--index", str(index), flag, "--timeout-ms", TIMEOUT_MS],
              timeout=120, env=env)
    start = res.stdout.find("// parity repro" if lang == "cpp" else "# parity repro")
    if res.returncode not in (0, 1) or start < 0:
        raise Failure(f"`parity replay --index {index} {flag}` exited {res.returncode} without a repro:\n"
                      f"{res.stdout[-4000:]}")
    return res.stdout[start:]


def verdict(output):
    """The repro's last PASS or FAIL line, or None."""
    lines = [line for line in output.splitlines() if line.startswith(("PASS:", "FAIL:"))]
    return lines[-1] if lines else None


class Failure(Exception):
    pass


# ---- reading a repro's output ----

# show()'s line in either language; dtype is a C++ type name ("long int") or torch.<dtype>.
SHOW = re.compile(r"^(v\d+): (?:(undefined)|sizes=\[(.*?)\] strides=\[(.*?)\] offset=(-?\d+) dtype=(.+?) "
                  r"requires_grad=(\w+) is_leaf=(\w+) retains_grad=(\w+) grad_fn=(\S+) version=(\d+) "
                  r"values=\[(.*)\])$")
GRAD = re.compile(r"^  grad: sizes=\[(.*?)\] strides=\[(.*?)\] values=\[(.*)\]$")
CPP_DTYPES = {"float": "float32", "double": "float64", "long int": "int64", "long": "int64", "int64_t": "int64",
              "bool": "bool"}


def ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


def numbers(text):
    out = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        # Python prints bool tensors' values as True/False; float() reads nan, -nan, inf and -inf.
        out.append({"True": 1.0, "False": 0.0}[tok] if tok in ("True", "False") else float(tok))
    return out


def dtype_name(printed):
    return printed[len("torch."):] if printed.startswith("torch.") else CPP_DTYPES.get(printed, printed)


def parse_output(text):
    """value name -> what show() printed (None: undefined), and the steps that said they raised."""
    shows, raised, last = {}, {}, None
    for line in text.splitlines():
        m = SHOW.match(line)
        if m:
            last = m.group(1)
            if m.group(2):
                shows[last] = None
                continue
            shows[last] = {"sizes": ints(m.group(3)), "strides": ints(m.group(4)), "offset": int(m.group(5)),
                           "dtype": dtype_name(m.group(6)), "requires_grad": m.group(7).lower() == "true",
                           "is_leaf": m.group(8).lower() == "true", "retains_grad": m.group(9).lower() == "true",
                           "grad_fn": "" if m.group(10) == "None" else m.group(10), "version": int(m.group(11)),
                           "values": numbers(m.group(12)), "grad": None}
            continue
        g = GRAD.match(line)
        if g and last and shows.get(last):
            shows[last]["grad"] = {"sizes": ints(g.group(1)), "strides": ints(g.group(2)), "values": numbers(g.group(3))}
            continue
        # C++: "step 3 raised: MESSAGE"; Python names the class it caught: "step 3 raised IndexError: MESSAGE".
        r = re.match(r"^step (\d+) raised(?: [\w.]+)?: (.*)$", line)
        if r:
            raised[int(r.group(1))] = r.group(2)
    return shows, raised


# ---- holding the output against the finding ----

def as_number(x):
    return float(x) if not isinstance(x, str) else {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[x]


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


def differing(printed, expected):
    """Indices where two value lists differ (a length difference counts as index -1)."""
    if len(printed) != len(expected):
        return [-1]
    return [i for i, (a, b) in enumerate(zip(printed, expected)) if not same(a, as_number(b))]


def observation(trace, step, value):
    """LibTorch's observation of `value` as the repro's closing show() sees it: the last one from `step` on
    (a shrunk finding ends at its divergence, but a later step that touched the value would be seen there)."""
    found = None
    for s in trace["steps"][step:]:
        for o in s["observed"]:
            if o["value"] == value:
                found = o
    return found


FIELDS = ("sizes", "strides", "offset", "dtype", "requires_grad", "is_leaf", "retains_grad", "grad_fn", "version")


def comparable(field, value):
    """A field as both sides can be held together: a trace's grad_fn is the C++ node name (Python drops the
    namespace of C++-made nodes) or "<raised CATEGORY>", which a repro prints as "<raised>"."""
    if field != "grad_fn":
        return value
    if value.startswith("<raised"):
        return "<raised>"
    return value[len("torch::autograd::"):] if value.startswith("torch::autograd::") else value


def check(finding, source, output, lang):
    """What the repro got wrong, as sentences; empty when it shows the oracle's side of the divergence."""
    d = finding["divergence"]
    step, kind = d["step"], d["kind"]
    oracle, impl = finding.get("oracle_trace"), finding.get("impl_trace")
    if not oracle:
        # A case that crashed, hung or ran out of memory keeps no trace: only the repro's verdict is checked.
        return [] if kind in ("crash", "timeout", "out_of_memory") else ["the finding has no oracle_trace"]
    ostep = oracle["steps"][step]
    istep = impl["steps"][step] if impl and step < len(impl["steps"]) else None
    vid = d["value"] if d["value"] >= 0 else step
    name = f"v{vid}"
    # Steps without a value (backward, retain_grad) print no show() line.
    has_value = f'show("{name}", {name})' in source
    shows, raised = parse_output(output)
    problems = []

    if kind in ("status", "error_category", "message", "exception_type") and ostep["status"] == "error":
        if step not in raised:
            problems.append(f"LibTorch raised at step {step} ({ostep['message'][:200]!r}) but the repro printed "
                            f"no 'step {step} raised: ...' line")
        else:
            first = ostep["message"].splitlines()[0] if ostep["message"] else ""
            # PyTorch may word its exception differently from LibTorch's c10::Error; C++ prints the same text.
            if lang == "cpp" and not raised[step].startswith(first[:120]):
                problems.append(f"step {step} raised {raised[step][:200]!r}, LibTorch's trace says {first[:200]!r}")
        if has_value and shows.get(name, "missing") is not None:
            problems.append(f"{name} should print as undefined (LibTorch made no value), got {shows.get(name)}")
        return problems

    if kind in ("status", "error_category") and ostep["status"] == "skipped":
        if name in shows:
            problems.append(f"LibTorch skipped step {step}, yet the repro shows {name}")
        return problems

    if step in raised:
        problems.append(f"LibTorch ran step {step}, yet the repro says it raised: {raised[step][:200]!r}")
    if istep and istep["status"] == "error" and istep["message"] and istep["message"] in output:
        problems.append(f"the output contains impl's error message {istep['message'][:200]!r}")
    if not has_value:
        if kind != "status":
            problems.append(f"divergence kind {kind} at a step without a value: this test does not know what to check")
        return problems

    obs = observation(oracle, step, vid)
    shown = shows.get(name, "missing")
    if obs is None:
        return problems + [f"the oracle trace has no observation of {name} at or after step {step}"]
    if shown == "missing":
        return problems + [f"the repro printed no line for {name}"]
    if shown is None:
        return problems + [f"{name} printed as undefined; LibTorch made it with sizes {obs['sizes']}"]

    # Whatever the kind, the value shown is LibTorch's: every field show() prints.
    for field in FIELDS:
        if comparable(field, shown[field]) != comparable(field, obs[field]):
            problems.append(f"{name}.{field}: printed {shown[field]!r}, LibTorch's trace has {obs[field]!r}")
    if obs["values_defined"]:
        diff = differing(shown["values"], obs["values"])
        if diff:
            problems.append(f"{name}.values: printed {shown['values'][:20]}, LibTorch's trace has "
                            f"{obs['values'][:20]} (first differences at {diff[:5]})")
    if obs.get("grad"):
        g = shown["grad"]
        if g is None:
            problems.append(f"{name}.grad: not printed, LibTorch's trace has sizes {obs['grad']['sizes']}")
        elif g["sizes"] != obs["grad"]["sizes"] or (obs["grad"]["values"] and
                                                     differing(g["values"], obs["grad"]["values"])):
            problems.append(f"{name}.grad: printed {g}, LibTorch's trace has {obs['grad']}")
    elif shown["grad"] is not None and kind.startswith("grad"):
        problems.append(f"{name}.grad: printed {shown['grad']}, LibTorch's trace has none")

    # Impl's side must not be what the repro shows.
    iobs = None
    if istep:
        iobs = next((o for o in istep["observed"] if o["value"] == vid), None)
    if kind == "values" and iobs:
        wrong = [i for i in range(min(len(iobs["values"]), len(obs["values"])))
                 if not same(as_number(iobs["values"][i]), as_number(obs["values"][i]))]
        if not wrong:
            problems.append(f"impl's and LibTorch's traces agree on {name}'s values: not a values finding?")
        for i in wrong:
            if i < len(shown["values"]) and same(shown["values"][i], as_number(iobs["values"][i])):
                problems.append(f"{name}.values[{i}] printed {shown['values'][i]}, impl's value, not LibTorch's "
                                f"{obs['values'][i]}")
    elif (kind in FIELDS and iobs and comparable(kind, iobs[kind]) != comparable(kind, obs[kind])
          and comparable(kind, shown[kind]) == comparable(kind, iobs[kind])):
        problems.append(f"{name}.{kind} printed {shown[kind]!r}, impl's, not LibTorch's {obs[kind]!r}")
    return problems


# ---- C++ ----

CMAKE_PROJECT = """\
# The way the repro's header comment tells users to build it, with the LibTorch parity was built against; one
# precompiled <torch/torch.h> for all of them (the test's own addition), which parses for most of each build.
cmake_minimum_required(VERSION 3.18)
project(parity_repros LANGUAGES CXX)
find_package(Torch REQUIRED)
set(first "")
foreach(repro IN ITEMS {names})
  add_executable(${{repro}} ${{repro}}.cpp)
  target_include_directories(${{repro}} PRIVATE ${{TORCH_INCLUDE_DIRS}})
  target_link_libraries(${{repro}} torch_cpu c10)
  set_property(TARGET ${{repro}} PROPERTY CXX_STANDARD 20)  # the standard the header comment names
  if(first)
    target_precompile_headers(${{repro}} REUSE_FROM ${{first}})
  else()
    target_precompile_headers(${{repro}} PRIVATE <torch/torch.h>)
    set(first ${{repro}})
  endif()
endforeach()
"""


def build_cpp(args, work, repros):
    """Builds every repro in one parallel build; returns {name: executable} for those that built, and the log."""
    src, bld = os.path.join(work, "cpp"), os.path.join(work, "cpp-build")
    os.makedirs(src)
    for name, text in repros.items():
        with open(os.path.join(src, name + ".cpp"), "w") as f:
            f.write(text)
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write(CMAKE_PROJECT.format(names=" ".join(repros)))
    configure = [args.cmake, "-S", src, "-B", bld, "-DCMAKE_BUILD_TYPE=", f"-DTorch_DIR={args.torch_dir}"]
    # A LibTorch folder (a zip, the wheel's torch/) goes in CMAKE_PREFIX_PATH, as the header comment says: its
    # libraries are then found before a system LibTorch's (Debian's libc10.so beside the wheel's would be linked).
    parts = os.path.normpath(args.torch_dir).split(os.sep)
    if parts[-3:] == ["share", "cmake", "Torch"]:
        configure.append("-DCMAKE_PREFIX_PATH=" + os.sep.join(parts[:-3]))
    if args.generator:
        configure += ["-G", args.generator]
    if args.make_program:
        configure.append(f"-DCMAKE_MAKE_PROGRAM={args.make_program}")
    if args.cxx:
        configure.append(f"-DCMAKE_CXX_COMPILER={args.cxx}")
    if args.launcher:
        configure.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={args.launcher}")
    # A CUDA build of LibTorch (PyPI's wheel) probes GPU architectures unless told one, as the header comment says.
    res = run(configure, timeout=120, env=dict(os.environ, TORCH_CUDA_ARCH_LIST=os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0")))
    if res.returncode != 0:
        sys.exit(f"FAIL: configuring the repro project ({' '.join(configure)}) failed:\n{res.stdout[-6000:]}")
    log("configured the repro project")
    # Each LibTorch translation unit takes over 1 GB and tens of seconds: no more jobs than asked for.
    jobs = max(1, min(args.jobs, len(repros)))
    build = [args.cmake, "--build", bld, "--parallel", str(jobs)]
    # Keep going past a repro that does not compile, so every one is reported.
    if args.generator == "Ninja" or (not args.generator and os.path.exists(os.path.join(bld, "build.ninja"))):
        build += ["--", "-k", "0"]
    elif "Makefiles" in (args.generator or ""):
        build += ["--", "-k"]
    res = run(build, timeout=420)
    log(f"built {len(repros)} repros with {jobs} jobs (exit {res.returncode})")
    built = {}
    for name in repros:
        exe = os.path.join(bld, name)
        if os.path.exists(exe):
            built[name] = exe
    return built, res.stdout


def run_all(commands, jobs):
    """Each command's result, by name, `jobs` at a time: most of a repro's run is loading LibTorch."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {name: pool.submit(run, cmd, 120) for name, cmd in commands.items()}
        return {name: f.result() for name, f in futures.items()}


def numbered(text):
    return "\n".join(f"{i + 1:4}  {line}" for i, line in enumerate(text.splitlines()))


# ---- main ----

def print_repros(args, findings_path, findings, groups, failures):
    """Two repros of each group's finding, replayed on impl as it is and on the planted impl: their texts, labels,
    findings and which is planted, by repro name."""
    repros, label, finding_of, planted_of = {}, {}, {}, {}
    index_of = {}
    for sig, index in groups:
        base = "repro_" + re.sub(r"[^A-Za-z0-9]+", "_", sig).strip("_")
        for planted in (False, True):
            name = base + ("_planted" if planted else "")
            label[name] = f"finding {index} ({sig}){', replayed with the planted faults' if planted else ''}"
            finding_of[name], planted_of[name], index_of[name] = findings[index], planted, index
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        printing = {name: pool.submit(print_repro, args.parity, findings_path, index_of[name], args.lang,
                                      planted_of[name]) for name in label}
        for name, future in printing.items():
            try:
                repros[name] = future.result()
            except Failure as e:
                failures.append((label[name], str(e)))
    return repros, label, finding_of, planted_of


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parity", required=True, help="the parity binary")
    ap.add_argument("--lang", choices=("cpp", "python"), required=True)
    ap.add_argument("--work", required=True, help="scratch folder, emptied first and left for inspection")
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--cmake", help="cmake, for the C++ repro project")
    ap.add_argument("--torch-dir", help="Torch_DIR parity's build found LibTorch by")
    ap.add_argument("--generator", help="CMake generator (parity's)")
    ap.add_argument("--make-program", help="CMAKE_MAKE_PROGRAM (parity's)")
    ap.add_argument("--cxx", help="C++ compiler (parity's)")
    ap.add_argument("--launcher", help="compiler launcher (ccache), optional")
    ap.add_argument("--jobs", type=int, default=2, help="parallel compile jobs for the C++ repros, and repros run at once")
    ap.add_argument("--python", default=sys.executable, help="the python that runs the Python repros")
    args = ap.parse_args()
    if args.lang == "cpp" and not (args.cmake and args.torch_dir):
        ap.error("--lang cpp needs --cmake and --torch-dir")

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    findings_path, findings = planted_campaign(args.parity, args.work, args.cases, args.seed)
    groups = one_per_group(findings)
    log(f"planted campaign: {len(findings)} findings, groups: "
        + ", ".join(f"{sig} (finding {i})" for sig, i in groups))

    failures = []  # (what, why)
    repros, label, finding_of, planted_of = print_repros(args, findings_path, findings, groups, failures)
    ext = ".cpp" if args.lang == "cpp" else ".py"
    for name, text in repros.items():
        with open(os.path.join(args.work, name + ext), "w") as f:
            f.write(text)

    outputs = {}
    if args.lang == "cpp":
        built, build_log = build_cpp(args, args.work, repros)
        for name in repros:
            if name not in built:
                path = os.path.join(args.work, "cpp", name + ".cpp")
                failures.append((label[name], f"the C++ repro {path} did not compile (compiler errors above):\n"
                                 f"{numbered(repros[name])}"))
        if len(built) < len(repros):
            print("---- repro build log (compiler errors) ----\n" + build_log[-20000:])
        outputs = run_all({name: [exe] for name, exe in built.items()}, args.jobs)
    else:
        # Needs no torch, so it runs (and can fail) everywhere.
        for name, text in repros.items():
            try:
                compile(text, name + ext, "exec")
            except SyntaxError as e:
                failures.append((label[name], f"the Python repro is not valid Python: {e}\n{numbered(text)}"))
        log(f"{len(repros)} Python repros are valid Python" if not failures else "syntax check failed")
        probe = run([args.python, "-c", "import torch; print(torch.__version__)"], timeout=120)
        if probe.returncode != 0:
            if failures:
                return report(failures)
            print(f"SKIP: PyTorch is not installed for {args.python}; the Python repro is checked where it is")
            return SKIP
        torch_version = probe.stdout.strip().splitlines()[-1]
        log(f"running the Python repros with PyTorch {torch_version}")
        outputs = run_all({name: [args.python, os.path.join(args.work, name + ext)] for name in repros}, args.jobs)

    for name, res in outputs.items():
        # Against the planted impl the repro must fail, against impl as it is pass: each is the library under test.
        want, want_exit = ("FAIL", 1) if planted_of[name] else ("PASS", 0)
        said = verdict(res.stdout)
        if res.returncode != want_exit or not said or not said.startswith(want):
            failures.append((label[name], f"the repro should end with {want} (exit {want_exit}); it exited "
                             f"{res.returncode} after {said or 'no PASS or FAIL line'}:\n{res.stdout[-4000:]}"))
            continue
        if planted_of[name]:
            log(f"ok: {label[name]}: {said[:100]}")
            continue
        problems = check(finding_of[name], repros[name], res.stdout, args.lang)
        if problems:
            failures.append((label[name], "the repro's output does not show LibTorch's side:\n  - "
                             + "\n  - ".join(problems) + f"\noutput:\n{res.stdout[-4000:]}"))
        else:
            d = finding_of[name]["divergence"]
            log(f"ok: {label[name]}: shows LibTorch's side of step {d['step']} ({d['kind']}), {said[:5]}")
    if failures and args.lang == "python":
        recorded = {f["libtorch_version"] for f in findings}
        # The findings' oracle is the LibTorch parity was built with; another PyTorch may differ on its own.
        if not any(torch_version.split("+")[0] == v.split("+")[0] for v in recorded):
            print(f"NOTE: PyTorch {torch_version} ran the repros; the findings' oracle was LibTorch "
                  f"{', '.join(sorted(recorded))}: a difference below may be one between the versions\n")
    if not failures:
        # The C++ build folder holds the precompiled <torch/torch.h>, about 600 MB: kept only to inspect a failure.
        shutil.rmtree(os.path.join(args.work, "cpp-build"), ignore_errors=True)
    return report(failures)


def report(failures):
    for what, why in failures:
        print(f"FAIL: {what}: {why}\n")
    log("failed" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
