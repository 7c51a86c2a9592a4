#!/usr/bin/env python3
"""impl's kernels vs LibTorch, every LibTorch release built: issue 14's table, with issue 33's ceilings.

usage: bench/kernels.py [--device cpu|cuda] [--bench BUILD/parity_bench]... [--out-dir DIR] [--repetitions N]
                        [--min-time S] [--clock cpu|real] [--require-goals]
       bench/kernels.py [--device cpu|cuda] --from-json GBENCH.json... [--out-dir DIR] [--clock cpu|real]
                        [--require-goals]

--device cuda makes issue 30's device table instead: parity_bench --device cuda (default build-gpu/, then build/),
impl's cuda against LibTorch-CUDA on DEVICE_SCENARIOS, wall-clock time, each scenario's ceiling a cudaMemcpy device
to device of as many bytes, no GFLOP/s ceiling; the clone's goal is a share of its ceiling (FRACTION_GOALS), the
others ratios. Its files are named kernels-cuda* instead of kernels*, with the same schema and chart; a row's
goal_kind says which its goal is ("ratio" or "ceiling_fraction"), goal_ratio where the chart marks it.

Runs each parity_bench given with --bench (default: each of build/parity_bench, Debian's LibTorch 1.13.1, and
build-torch-2.15/parity_bench, LibTorch 2.15, that exists), one after the other; each runs both sides in the same
process and run, LibTorch at one thread, and names its LibTorch release in its JSON context. --from-json reads one
Google Benchmark JSON per release instead. Two inputs of the same release are refused. For each scenario of
SCENARIOS it pairs SCENARIO/impl with SCENARIO/libtorch and prints, as one Markdown table with a column group per
release (releases in version order): impl, LibTorch, the ratio (impl speed / LibTorch speed: > 1 means impl is
faster) and PASS/FAIL/ERROR against the row's goal; a goal is met when it is met against every release. It
writes into DIR (default: bench-results/ at the repository root):
  kernels.json                   the table and how it was measured (schema "parity-kernels-bench/2", below)
  kernels.svg                    the ratios as a bar chart, log scale, a bar per release, with each row's goal
  kernels-gbench-VERSION.json    each run's Google Benchmark output, for --from-json (re-render without re-running)

Each benchmark is measured in N repetitions of at least S seconds each, repetitions of all benchmarks in random
order (so that a slow spell of this shared machine does not land on one side only); the table shows the median
repetition. The clock is the thread's CPU time by default (time this process was not scheduled does not count;
the kernel's page-fault time does) or wall-clock time with --clock real. A scenario that moves bytes is shown in
GB/s, counting the bytes read plus the bytes written (parity_bench's bytes_per_iteration), with the fraction of
SCENARIO/memcpy's GB/s in the same run (std::memcpy moving as many bytes: the ceiling for that much traffic); mm
in GFLOP/s (flops_per_iteration), with the fraction of peak_fma/machine's GFLOP/s in the same run (fused
multiply-adds on registers only, at the widest vectors the CPU has: the core's peak); the others as time per
iteration. A fraction says how far a side is from the machine's limit, the ratio how far from the other side.

Exit status: 0 when the table was written (whatever the goals), 1 with --require-goals when a goal is not met,
2 when a parity_bench is missing or failed, or an input does not have exactly the scenarios of SCENARIOS (each
side, the memcpy of each that moves bytes, and peak_fma/machine), or two inputs are of the same release.

kernels.json: {schema, created, commit, machine: {...}, method: {statistic, repetitions, min_time_s, clock, bytes,
ceilings}, releases: [{libtorch_version, commit, bench (the binary run, or "from-json"), gbench_json,
repetitions, benchmark_date, load_avg_at_start, memcpy_gbps: {scenario: GB/s of its memcpy}, peak_gflops,
peak_isa}], goals_met, goals_total, rows: [{scenario, title, unit ("ns" per iteration, "GB/s" or "GFLOP/s"), goal,
pass (met against every release), releases: {VERSION: {impl, libtorch, ratio, pass, error, impl_fraction,
libtorch_fraction}}}]}. releases is in version order; a row's impl and libtorch are in its unit; a fraction is
of that release's memcpy (GB/s) or peak (GFLOP/s) and null in a time row; a side whose benchmark raised is null,
and so is the ratio (error says what). method.repetitions is null when the releases ran different counts.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
from xml.sax.saxutils import escape

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "parity-kernels-bench/2"

# (benchmark name in bench/backend_bench.cpp, what it does, goal: the ratio issue 14 asks for). Order = table order.
SCENARIOS = [
    ("clone_1_float", "clone, 1 float", 5.0),
    ("detach", "detach (1 float, requires_grad)", 5.0),
    ("clone_requires_grad", "clone of a requires_grad tensor (1 float)", 5.0),
    ("clone_mul_add_sum_backward", "x.clone()*2 + x.clone()*3, sum, backward (5 floats)", 5.0),
    ("clone_64mib", "clone, 64 MiB (old result freed each time)", 3.0),
    ("channels_last_to_contiguous", "channels_last → contiguous clone, 8×64×56×56 float", 1.0),
    ("transpose_contiguous", "contiguous() of a transposed 2048×2048 float", 1.0),
    ("add_broadcast_256", "a + b, 256×256 + 256 (broadcast)", 1.0),
    ("mm_256", "mm, 256×256 float", 0.8),
    ("sum_1m", "sum of 1M floats", 1.0),
]
# issue 30's device table: impl's cuda vs LibTorch-CUDA (bench/backend_bench.cpp, `--device cuda`). The clone's
# goal is a share of the ceiling (cudaMemcpy device to device), not a ratio: FRACTION_GOALS.
DEVICE_SCENARIOS = [
    ("clone_1gib", "clone, 1 GiB float", 0.8),
    ("add_broadcast_16k", "a + b, 16384×16384 + 16384 (broadcast) float", 0.5),
    ("sum_256m", "sum of 256M floats", 0.5),
    ("mm_4096", "mm, 4096×4096 float (no TF32)", 0.5),
]
FRACTION_GOALS = {"clone_1gib"}


class Suite:
    """What one table measures: the CPU's (parity_bench) or a CUDA device's (parity_bench --device cuda)."""

    def __init__(self, device, scenarios, builds, ceiling, threads, peak):
        self.device, self.scenarios, self.builds = device, scenarios, builds
        self.ceiling, self.threads, self.peak = ceiling, threads, peak
        self.bench = "parity_bench"
        self.list_name = "SCENARIOS" if device == "cpu" else "DEVICE_SCENARIOS"
        self.bench_args = [] if device == "cpu" else ["--device", device]


SUITES = {
    "cpu": Suite("cpu", SCENARIOS, ("build", "build-torch-2.15"), "std::memcpy", "1 thread each", peak=True),
    "cuda": Suite("cuda", DEVICE_SCENARIOS, ("build-gpu", "build"), "cudaMemcpy device to device",
                  "one CUDA device", peak=False),
}
SUITE = SUITES["cpu"]  # main() sets it from --device
SIDES = ("impl", "libtorch")
REAL_TIME_SUFFIX = "/real_time"
MEMCPY = "memcpy"  # SCENARIO/memcpy: the ceiling of a scenario that moves bytes
PEAK = ("peak_fma", "machine")  # the core's peak GFLOP/s, the ceiling of a scenario that computes
TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# A release names a file (kernels-gbench-VERSION.json): no path separators, no leading dot.
VERSION_NAME = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]*$")
# One colour per release, in version order; pass/fail is the bar's outline and label (GOOD/BAD).
RELEASE_COLOURS = ("#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2")
GOOD, BAD = "#2e7d32", "#c62828"


class BadInput(Exception):
    """parity_bench's output cannot give the table (exit 2)."""


def git_commit():
    try:
        sha = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def build_hint():
    builds = ", ".join(f"ninja -C {b} {SUITE.bench}" for b in SUITE.builds)
    return f"build it first ({builds}; it needs Debian's libbenchmark-dev) or pass --bench"


def benches_to_run(given):
    """The binaries to run: those given (each must be executable), else every default build's that exists."""
    if given:
        for bench in given:
            if not os.access(bench, os.X_OK) or os.path.isdir(bench):
                raise BadInput(f"{bench} is not an executable: {build_hint()}")
        seen = {}
        for bench in given:
            real = os.path.realpath(bench)
            if real in seen:
                raise BadInput(f"--bench {bench} is given twice (as {seen[real]}): each release once")
            seen[real] = bench
        return list(given)
    found = [os.path.join(REPO, b, SUITE.bench) for b in SUITE.builds]
    found = [b for b in found if os.access(b, os.X_OK) and not os.path.isdir(b)]
    if not found:
        tried = " or ".join(os.path.join(REPO, b, SUITE.bench) for b in SUITE.builds)
        raise BadInput(f"no {SUITE.bench}: {tried} is not an executable: {build_hint()}")
    return found


def run_bench(bench, args, raw_path):
    # Google Benchmark's --benchmark_context splits on commas: the CPU model must not hold one.
    context = f"commit={git_commit()},cpu_model={cpu_model().replace(',', ' ')}"
    cmd = [bench, *SUITE.bench_args, f"--benchmark_repetitions={args.repetitions}",
           f"--benchmark_min_time={args.min_time}",
           "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=true",
           f"--benchmark_out={raw_path}", "--benchmark_out_format=json", f"--benchmark_context={context}"]
    print("running: " + " ".join(cmd), file=sys.stderr, flush=True)
    # Its console table goes to stderr, as progress; stdout is this script's table.
    done = subprocess.run(cmd, stdout=sys.stderr)
    if done.returncode != 0:
        raise BadInput(f"{bench} exited with status {done.returncode}")


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"cannot read Google Benchmark JSON {path}: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise BadInput(f"{path} is not Google Benchmark JSON (no \"benchmarks\" list)")
    return data


def release_of(data, path):
    version = data.get("context", {}).get("libtorch_version") if isinstance(data.get("context"), dict) else None
    if not isinstance(version, str) or not VERSION_NAME.match(version):
        raise BadInput(f"{path}: its context names no LibTorch release (libtorch_version {version!r}): not "
                       f"parity_bench's output?")
    return version


def version_key(version):
    """Numeric order of the dotted parts: 1.9.0 < 1.13.1 < 2.15.0; a part's non-numeric tail ("0+cpu") after."""
    key = []
    for part in version.split("."):
        digits = re.match(r"\d*", part).group()
        key.append((int(digits) if digits else -1, part[len(digits):]))
    return key


def refuse_duplicate(version, path, seen):
    if version in seen:
        raise BadInput(f"{path} and {seen[version]} are both LibTorch {version}: one input per release")
    seen[version] = path


def split_name(run_name):
    # A benchmark timed by the wall clock (UseRealTime: parity_bench --device cuda) carries Google Benchmark's
    # suffix, which names no side.
    if run_name.endswith(REAL_TIME_SUFFIX):
        run_name = run_name[:-len(REAL_TIME_SUFFIX)]
    scenario, _, side = run_name.rpartition("/")
    return scenario, side


def measurements(data, clock, path):
    """{(scenario, side): {"ns": median time per iteration, "bytes": bytes_per_iteration or None, "flops":
    flops_per_iteration or None, "label": label or None} or {"error": message}}, and the repetitions run."""
    key = "cpu_time" if clock == "cpu" else "real_time"
    out, repetitions = {}, None
    for b in data["benchmarks"]:
        run_name = b.get("run_name", b.get("name", ""))
        scenario, side = split_name(run_name)
        if not scenario or (side not in SIDES + (MEMCPY,) and (scenario, side) != PEAK):
            raise BadInput(f"{path}: benchmark {run_name!r} is not named SCENARIO/impl, SCENARIO/libtorch, "
                           f"SCENARIO/memcpy or {'/'.join(PEAK)}")
        if b.get("error_occurred"):
            out[(scenario, side)] = {"error": b.get("error_message", "error")}
            continue
        # Aggregates only: the median row. Without repetitions the single run is its own median.
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if b.get("run_type") == "iteration" and (scenario, side) in out:
            raise BadInput(f"{path}: {run_name} has several runs and no median: run with --benchmark_repetitions "
                           f"and --benchmark_report_aggregates_only=true")
        if "error" in out.get((scenario, side), {}):
            continue
        unit = b.get("time_unit", "ns")
        if unit not in TIME_UNIT_NS or key not in b:
            raise BadInput(f"{path}: {run_name}: no {key} in a known time unit")
        out[(scenario, side)] = {"ns": float(b[key]) * TIME_UNIT_NS[unit], "bytes": b.get("bytes_per_iteration"),
                                 "flops": b.get("flops_per_iteration"), "label": b.get("label")}
        if b.get("run_type") == "aggregate":
            repetitions = b.get("repetitions", repetitions)
    return out, repetitions


def rate(m, work):
    """Work per ns (bytes per ns = GB/s, flops per ns = GFLOP/s); the caller has checked that time is not zero."""
    return m[work] / m["ns"]


def release_from(data, measured, version, path):
    """One release's cells ({scenario: cell, with the row unit it implies or None}) and its ceilings."""
    known = {name for name, _, _ in SUITE.scenarios}
    unknown = sorted({s for s, _ in measured if s not in known and s != PEAK[0]})
    if unknown:
        raise BadInput(f"{path}: parity_bench ran scenarios this script does not know: {', '.join(unknown)} "
                       f"(add them to {SUITE.list_name} in bench/kernels.py, with their goal)")
    missing = [f"{s}/{side}" for s, _, _ in SUITE.scenarios for side in SIDES if (s, side) not in measured]
    if SUITE.peak and PEAK not in measured:
        missing.append("/".join(PEAK))
    if missing:
        raise BadInput(f"{path} (LibTorch {version}): no result for {', '.join(missing)} (a parity_bench that "
                       f"lacks these benchmarks?)")
    stray = sorted(f"{s}/{side}" for s, side in measured if s == PEAK[0] and side != PEAK[1])
    if stray:
        raise BadInput(f"{path}: {', '.join(stray)}: {PEAK[0]} is measured as {'/'.join(PEAK)} only")
    ceilings = {"memcpy_gbps": {}, "peak_gflops": None, "peak_isa": None}
    if SUITE.peak:
        peak = measured[PEAK]
        if "error" in peak:
            raise BadInput(f"{path}: {'/'.join(PEAK)} failed: {peak['error']}")
        if not peak["flops"] or peak["flops"] <= 0 or peak["ns"] <= 0:
            raise BadInput(f"{path}: {'/'.join(PEAK)} reports no flops_per_iteration or a time of zero")
        ceilings.update(peak_gflops=rate(peak, "flops"), peak_isa=peak["label"])
    cells = {}
    for name, _, goal in SUITE.scenarios:
        where = f"{path} (LibTorch {version}): {name}"
        sides = {side: measured[(name, side)] for side in SIDES}
        ran = [m for m in sides.values() if "error" not in m]
        if any(m["ns"] <= 0 for m in ran):
            raise BadInput(f"{where}: a time of zero")
        copy = measured.get((name, MEMCPY))
        if copy is not None:
            if "error" in copy:
                raise BadInput(f"{where}/memcpy failed: {copy['error']}")
            if not copy["bytes"] or copy["ns"] <= 0:
                raise BadInput(f"{where}/memcpy reports no bytes_per_iteration or a time of zero")
            ceilings["memcpy_gbps"][name] = rate(copy, "bytes")
        if len({m["bytes"] for m in ran}) > 1:
            raise BadInput(f"{where}: impl and libtorch move different bytes per iteration")
        if len({m["flops"] for m in ran}) > 1:
            raise BadInput(f"{where}: impl and libtorch count different flops per iteration")
        bytes_ = ran[0]["bytes"] if ran else (copy["bytes"] if copy else None)
        flops = ran[0]["flops"] if ran else None
        if bytes_ and flops:
            raise BadInput(f"{where}: reports both bytes and flops per iteration: which is its rate?")
        if bytes_ and copy is None:
            raise BadInput(f"{where}: no result for {name}/memcpy, the ceiling of a scenario that moves bytes")
        if copy is not None and not bytes_:
            raise BadInput(f"{where}: has a memcpy ceiling but moves no bytes (no bytes_per_iteration)")
        if copy is not None and copy["bytes"] != bytes_:
            raise BadInput(f"{where}: its memcpy moves {copy['bytes']} bytes per iteration, the scenario "
                           f"{bytes_}: not its ceiling")
        unit, work, ceiling = ("GB/s", "bytes", ceilings["memcpy_gbps"].get(name)) if bytes_ else (
            ("GFLOP/s", "flops", ceilings["peak_gflops"]) if flops else ("ns", None, None))
        cell = {"impl": None, "libtorch": None, "ratio": None, "pass": False, "error": None,
                "impl_fraction": None, "libtorch_fraction": None}
        for side, m in sides.items():
            if "error" in m:
                continue
            cell[side] = rate(m, work) if work else m["ns"]
            if ceiling:
                cell[f"{side}_fraction"] = cell[side] / ceiling
        errors = [m["error"] for m in sides.values() if "error" in m]  # parity_bench's message names the side
        if errors:
            cell["error"] = "; ".join(errors)
        else:
            # Same work on both sides, so the speed ratio is LibTorch's time over impl's, in any unit.
            cell["ratio"] = sides["libtorch"]["ns"] / sides["impl"]["ns"]
            if name in FRACTION_GOALS:
                if ceiling is None:
                    raise BadInput(f"{where}: its goal is a share of its ceiling, and it has none")
                cell["pass"] = cell["impl_fraction"] >= goal
            else:
                cell["pass"] = cell["ratio"] >= goal
        # A release where neither side ran (and no memcpy) cannot say the unit: the other releases do.
        cells[name] = (cell, unit if ran or copy else None)
    ctx = data.get("context", {})
    release = {"libtorch_version": version, "commit": ctx.get("commit", "unknown"), "bench": None,
               "gbench_json": None, "repetitions": None, "benchmark_date": ctx.get("date"),
               "load_avg_at_start": ctx.get("load_avg")}
    release.update(ceilings)
    return release, cells


def rows_from(releases, cells):
    """The table's rows: each scenario with its cell in every release; releases is in version order."""
    rows = []
    for name, title, goal in SUITE.scenarios:
        units = {cells[r["libtorch_version"]][name][1] for r in releases} - {None}
        if len(units) > 1:
            raise BadInput(f"{name}: the releases' parity_bench disagree on its unit ({', '.join(sorted(units))})")
        row_cells = {r["libtorch_version"]: cells[r["libtorch_version"]][name][0] for r in releases}
        kind = "ceiling_fraction" if name in FRACTION_GOALS else "ratio"
        # Where the goal lies on the chart's ratio axis: a share of the ceiling is the ratio that reaches it
        # against the release where that ratio is highest.
        at = [c["impl_fraction"] and goal * c["ratio"] / c["impl_fraction"] for c in row_cells.values()
              if c["ratio"]] if kind != "ratio" else [goal]
        rows.append({"scenario": name, "title": title, "unit": units.pop() if units else "ns", "goal": goal,
                     "goal_kind": kind, "goal_ratio": max([a for a in at if a] or [goal]),
                     "pass": all(c["pass"] for c in row_cells.values()), "releases": row_cells})
    return rows


def fmt_fraction(fraction):
    percent = 100 * fraction
    return f"{percent:.0f}%" if percent >= 10 else f"{percent:.2g}%"


def fmt_value(value, unit, fraction=None):
    if value is None:
        return "—"
    if unit in ("GB/s", "GFLOP/s"):
        text = f"{value:.3g} {unit}"
    else:
        text = f"{value:.3g} ns"
        for scale, name in ((1e6, "ms"), (1e3, "µs")):
            if value >= scale:
                text = f"{value / scale:.3g} {name}"
                break
    return text if fraction is None else f"{text} ({fmt_fraction(fraction)})"


def fmt_ratio(ratio):
    return "—" if ratio is None else f"{ratio:.3g}×"


def verdict(cell):
    return "ERROR" if cell["error"] else ("PASS" if cell["pass"] else "FAIL")


def overall(row):
    """PASS against every release; FAIL where one release missed it; ERROR where one only could not say."""
    verdicts = {verdict(c) for c in row["releases"].values()}
    return "PASS" if verdicts == {"PASS"} else ("FAIL" if "FAIL" in verdicts else "ERROR")


def side_cell(cell, side, unit):
    # A side that raised (the only way a side has no number) says so in its own cell; the other's still shows.
    if cell[side] is None and cell["error"]:
        return "ERROR"
    return fmt_value(cell[side], unit, cell[f"{side}_fraction"])


def fmt_goal(row):
    if row["goal_kind"] == "ceiling_fraction":
        return f"impl ≥ {fmt_fraction(row['goal'])} of ceiling"
    return f"≥ {row['goal']:g}×"


def table(report):
    m, versions = report["method"], [r["libtorch_version"] for r in report["releases"]]
    reps = m["repetitions"] if m["repetitions"] is not None else "/".join(
        str(r["repetitions"]) for r in report["releases"])
    peaks = ", ".join(f"{r['libtorch_version']} run {r['peak_gflops']:.3g} GFLOP/s {r['peak_isa'] or '?'}"
                      for r in report["releases"] if r["peak_gflops"])
    computes = (f", GFLOP/s as a share of the core's peak (register-only FMA loop: {peaks})" if peaks else
                " (no ceiling for GFLOP/s)")
    lines = [f"impl vs LibTorch {' and '.join(versions)} (one {SUITE.bench} run each), {SUITE.threads}; median of "
             f"{reps} repetitions ({m['clock']}); ratio = impl speed / LibTorch speed; a goal is met when it is met "
             f"against every release.",
             f"(%): GB/s (bytes {m['bytes']}) as a share of a {SUITE.ceiling} moving as many bytes{computes}, "
             f"each measured in the same run as the row.", ""]
    header = ["work", "goal"]
    for v in versions:
        header += [f"{v} impl", f"{v} LibTorch", f"{v} ratio", v]
    header.append("all")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for r in report["rows"]:
        cells = [r["title"], fmt_goal(r)]
        for v in versions:
            c = r["releases"][v]
            cells += [side_cell(c, "impl", r["unit"]), side_cell(c, "libtorch", r["unit"]), fmt_ratio(c["ratio"]),
                      verdict(c)]
        cells.append(overall(r))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for r in report["releases"]:
        copies = ", ".join(f"{s} {g:.3g} GB/s" for s, g in r["memcpy_gbps"].items())
        lines.append(f"memcpy ceilings, {r['libtorch_version']} run: {copies or 'none'}")
    lines.append(f"{report['goals_met']} of {report['goals_total']} goals met "
                 f"(commit {report['commit']}, {report['machine']['cpu_model']}, {report['created']})")
    for r in report["rows"]:
        for v in versions:
            if r["releases"][v]["error"]:
                lines.append(f"ERROR in {r['scenario']} with LibTorch {v}: {r['releases'][v]['error']}")
    return "\n".join(lines)


def svg_chart(report):
    rows, releases = report["rows"], report["releases"]
    versions = [r["libtorch_version"] for r in releases]
    colour = {v: RELEASE_COLOURS[i % len(RELEASE_COLOURS)] for i, v in enumerate(versions)}
    cells = [(r, v, r["releases"][v]) for r in rows for v in versions]
    values = [c["ratio"] for _, _, c in cells if c["ratio"]] + [r["goal_ratio"] for r in rows] + [1.0]
    # Room beyond the extreme bars for their labels; the grid's decades need not meet the edges.
    lo, hi = min(values) / 2.5, max(values) * 2.5
    bar_h, gap = 14, 4
    label_w, plot_w, right, top = 420, 520, 20, 92
    row_h = len(versions) * (bar_h + gap) + 10
    width, height = label_w + plot_w + right, top + row_h * len(rows) + 64

    def x(v):
        return label_w + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    m, machine = report["method"], report["machine"]
    title = f"impl vs LibTorch {', '.join(versions)}: speed ratio (> 1: impl faster), log scale"
    reps = m["repetitions"] if m["repetitions"] is not None else "/".join(str(r["repetitions"]) for r in releases)
    subtitle = (f"median of {reps} repetitions, {m['clock']}, {SUITE.threads}; "
                f"commit {report['commit'][:12]}; {machine['cpu_model']}; {report['created']}")
    legend = "".join(f'<tspan fill="{colour[v]}">■</tspan> {escape(v)}  ' for v in versions)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="12" y="24" font-size="16" font-weight="bold">{escape(title)}</text>',
           f'<text x="12" y="44" fill="#444">{escape(subtitle)}</text>',
           f'<text x="12" y="64" fill="#444">{report["goals_met"]} of {report["goals_total"]} goals met (each '
           f'against every release)   {legend} outline and label: <tspan fill="{GOOD}">goal met</tspan> / '
           f'<tspan fill="{BAD}">missed</tspan>  <tspan font-weight="bold">| goal</tspan></text>']
    # Decade grid, with 2× and 5× minor lines.
    bottom = top + row_h * len(rows)
    decade = 10.0 ** math.floor(math.log10(lo))
    while decade <= hi:
        for k in (1, 2, 5):
            v = decade * k
            if not lo <= v <= hi:
                continue
            major = k == 1
            out.append(f'<line x1="{x(v):.1f}" y1="{top - 6}" x2="{x(v):.1f}" y2="{bottom}" '
                       f'stroke="{"#bbb" if major else "#e4e4e4"}"/>')
            if major or hi / lo <= 200:
                out.append(f'<text x="{x(v):.1f}" y="{bottom + 18}" text-anchor="middle" '
                           f'fill="{"#000" if major else "#777"}">{v:g}×</text>')
        decade *= 10
    out.append(f'<line x1="{x(1):.1f}" y1="{top - 6}" x2="{x(1):.1f}" y2="{bottom}" stroke="#000" '
               f'stroke-width="1.5"/>')
    out.append(f'<text x="{label_w + plot_w / 2:.1f}" y="{bottom + 40}" text-anchor="middle" fill="#444">'
               f'{escape("impl speed / LibTorch speed (bars start at parity, 1×)")}</text>')
    for i, r in enumerate(rows):
        y = top + i * row_h
        out.append(f'<text x="{label_w - 10}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end">'
                   f'{escape(r["title"])}</text>')
        for j, v in enumerate(versions):
            c = r["releases"][v]
            bar_y = y + 5 + j * (bar_h + gap)
            text_y = bar_y + bar_h / 2 + 4
            if c["ratio"] is None:
                out.append(f'<text x="{x(1) + 6:.1f}" y="{text_y:.1f}" font-size="12" fill="{BAD}">'
                           f'ERROR ({escape(v)})</text>')
                continue
            x0, x1 = sorted((x(1.0), x(c["ratio"])))
            mark = GOOD if c["pass"] else BAD
            out.append(f'<rect class="bar" x="{x0:.1f}" y="{bar_y}" width="{max(x1 - x0, 1):.1f}" '
                       f'height="{bar_h}" fill="{colour[v]}" fill-opacity="0.85" stroke="{mark}" '
                       f'stroke-width="2"><title>{escape(r["scenario"])} {escape(v)}: '
                       f'{escape(fmt_ratio(c["ratio"]))}</title></rect>')
            # Clear of the goal mark, which may lie inside the bar or just past its end.
            if c["ratio"] >= 1:
                label_x, anchor = max(x1, x(r["goal_ratio"]) + 1) + 5, "start"
            else:
                label_x, anchor = min(x0, x(r["goal_ratio"]) - 1) - 5, "end"
            out.append(f'<text x="{label_x:.1f}" y="{text_y:.1f}" text-anchor="{anchor}" font-size="12" '
                       f'fill="{mark}">{escape(fmt_ratio(c["ratio"]))}</text>')
        out.append(f'<line class="goal" x1="{x(r["goal_ratio"]):.1f}" y1="{y + 2}" x2="{x(r["goal_ratio"]):.1f}" '
                   f'y2="{y + row_h - 2}" stroke="#000" stroke-width="3"><title>goal {escape(fmt_goal(r))}'
                   f'</title></line>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def report_from(first_data, releases, rows, clock, min_time):
    ctx = first_data.get("context", {})
    commits = sorted({r["commit"] for r in releases})
    repetitions = {r["repetitions"] for r in releases}
    return {
        "schema": SCHEMA,
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commits[0] if len(commits) == 1 else "several: " + ", ".join(commits),
        "machine": {"host": ctx.get("host_name", "unknown"), "cpu_model": ctx.get("cpu_model", "unknown"),
                    "num_cpus": ctx.get("num_cpus"), "mhz_per_cpu": ctx.get("mhz_per_cpu")},
        "method": {"statistic": "median", "repetitions": repetitions.pop() if len(repetitions) == 1 else None,
                   "min_time_s": min_time, "clock": "CPU time" if clock == "cpu" else "wall-clock time",
                   "bytes": "read + written",
                   "ceilings": (f"in each release's run: SCENARIO/memcpy, {SUITE.ceiling} of half the scenario's "
                                "bytes (reading and writing as many)" + (
                                    "; peak_fma/machine, fused multiply-adds on registers only at the widest "
                                    "vectors the CPU has (peak_isa)" if SUITE.peak else ""))},
        "device": SUITE.device,
        "releases": releases,
        "goals_met": sum(1 for r in rows if r["pass"]),
        "goals_total": len(rows),
        "rows": rows,
    }


def stem():
    """The output files' common name: kernels on the CPU, kernels-cuda on a device."""
    return "kernels" if SUITE.device == "cpu" else f"kernels-{SUITE.device}"


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def gather(args):
    """[(data, bench or "from-json", Google Benchmark JSON path)] for each release, its version checked unique."""
    seen, inputs = {}, []
    if args.from_json:
        for path in args.from_json:
            data = load(path)
            refuse_duplicate(release_of(data, path), path, seen)
            inputs.append((data, "from-json", os.path.abspath(path)))
        return inputs
    for i, bench in enumerate(benches_to_run(args.bench)):
        # The release is known only from the output: written under a provisional name, renamed once known.
        tmp = os.path.join(args.out_dir, f"{stem()}-gbench-run{i}.json.tmp")
        try:
            run_bench(bench, args, tmp)
            data = load(tmp)
            version = release_of(data, bench)
            refuse_duplicate(version, bench, seen)
            raw = os.path.join(args.out_dir, f"{stem()}-gbench-{version}.json")
            os.replace(tmp, raw)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        inputs.append((data, os.path.abspath(bench), raw))
    return inputs


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", choices=sorted(SUITES), default="cpu",
                   help="cpu: parity_bench's table (issues 14 and 33); cuda: parity_bench --device cuda's (issue 30)")
    p.add_argument("--bench", action="append",
                   help="a parity_bench to run, once per LibTorch release (default: each of the default builds' "
                        "that exists)")
    p.add_argument("--from-json", action="append",
                   help="Google Benchmark JSON to read instead of running parity_bench, once per release")
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench-results"))
    p.add_argument("--repetitions", type=int, default=7)
    p.add_argument("--min-time", type=float, default=0.3, help="seconds per repetition, at least")
    p.add_argument("--clock", choices=("cpu", "real"),
                   help="cpu (the default on the CPU) or real (the default, and the only sense, on a device)")
    p.add_argument("--require-goals", action="store_true", help="exit 1 unless every goal is met")
    args = p.parse_args(argv)
    global SUITE
    SUITE = SUITES[args.device]
    if args.clock is None:
        args.clock = "real" if args.device == "cuda" else "cpu"
    if args.device == "cuda" and args.clock == "cpu":
        p.error("--device cuda measures wall-clock time (--clock real): the host's CPU time is not the device's")
    if args.repetitions < 1 or args.min_time <= 0:
        p.error("--repetitions must be at least 1 and --min-time positive")
    if args.bench and args.from_json:
        p.error("--bench runs parity_bench, --from-json reads its output instead: give one or the other")
    try:
        os.makedirs(args.out_dir, exist_ok=True)
        inputs = gather(args)
        releases, cells = [], {}
        for data, bench, path in inputs:
            version = release_of(data, path)
            measured, repetitions = measurements(data, args.clock, path)
            release, cells[version] = release_from(data, measured, version, path)
            release.update(bench=bench, gbench_json=path, repetitions=repetitions or 1)
            releases.append((data, release))
        releases.sort(key=lambda dr: version_key(dr[1]["libtorch_version"]))
        rows = rows_from([r for _, r in releases], cells)
    except BadInput as e:
        print(f"kernels.py: {e}", file=sys.stderr)
        return 2
    report = report_from(releases[0][0], [r for _, r in releases], rows, args.clock,
                         None if args.from_json else args.min_time)
    write(os.path.join(args.out_dir, f"{stem()}.json"), json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    write(os.path.join(args.out_dir, f"{stem()}.svg"), svg_chart(report))
    print(table(report))
    print(f"\nwritten: {os.path.join(args.out_dir, stem() + '.json')}, {os.path.join(args.out_dir, stem() + '.svg')}")
    if args.require_goals and report["goals_met"] < report["goals_total"]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
