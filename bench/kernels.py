#!/usr/bin/env python3
"""impl's kernels vs LibTorch: issue 14's table, from one run of parity_bench.

usage: bench/kernels.py [--bench BUILD/parity_bench] [--out-dir DIR] [--repetitions N] [--min-time S]
                        [--clock cpu|real] [--require-goals]
       bench/kernels.py --from-json GBENCH.json [--out-dir DIR] [--clock cpu|real] [--require-goals]

Runs parity_bench (both sides in the same process and run, LibTorch at one thread), pairs SCENARIO/impl with
SCENARIO/libtorch, and for each scenario of SCENARIOS prints impl, LibTorch, the ratio (impl speed / LibTorch
speed: > 1 means impl is faster), the goal and PASS/FAIL, as a Markdown table. It writes into DIR (default:
bench-results/ at the repository root):
  kernels.json         the table and how it was measured (schema "parity-kernels-bench/1", below)
  kernels.svg          the ratios as a bar chart, log scale, with each row's goal
  kernels-gbench.json  Google Benchmark's own output, for --from-json (re-render without re-running)

Each benchmark is measured in N repetitions of at least S seconds each, repetitions of all benchmarks in random
order (so that a slow spell of this shared machine does not land on one side only); the table shows the median
repetition. The clock is the thread's CPU time by default (time this process was not scheduled does not count;
the kernel's page-fault time does) or wall-clock time with --clock real. A scenario that moves bytes is shown in
GB/s, counting the bytes read plus the bytes written (parity_bench's bytes_per_iteration), the others as time
per iteration.

Exit status: 0 when the table was written (whatever the goals), 1 with --require-goals when a goal is not met,
2 when parity_bench failed or its output does not have exactly the scenarios of SCENARIOS.

kernels.json: {schema, created, commit, libtorch_version, machine: {...}, method: {statistic, repetitions,
min_time_s, clock, bytes}, goals_met, goals_total, rows: [{scenario, title, unit ("ns" per iteration or "GB/s"),
impl, libtorch, ratio, goal, pass, error}]}; impl/libtorch/ratio are null in a row whose benchmark raised
(error says what).
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
from xml.sax.saxutils import escape

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "parity-kernels-bench/1"

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
SIDES = ("impl", "libtorch")
TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


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


def run_bench(args, raw_path):
    if not os.access(args.bench, os.X_OK):
        raise BadInput(f"{args.bench} is not an executable: build it first (cmake --build build --target "
                       f"parity_bench; it needs Debian's libbenchmark-dev) or pass --bench")
    # Google Benchmark's --benchmark_context splits on commas: the CPU model must not hold one.
    context = f"commit={git_commit()},cpu_model={cpu_model().replace(',', ' ')}"
    cmd = [args.bench, f"--benchmark_repetitions={args.repetitions}", f"--benchmark_min_time={args.min_time}",
           "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=true",
           f"--benchmark_out={raw_path}", "--benchmark_out_format=json", f"--benchmark_context={context}"]
    print("running: " + " ".join(cmd), file=sys.stderr, flush=True)
    # Its console table goes to stderr, as progress; stdout is this script's table.
    done = subprocess.run(cmd, stdout=sys.stderr)
    if done.returncode != 0:
        raise BadInput(f"parity_bench exited with status {done.returncode}")


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"cannot read Google Benchmark JSON {path}: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise BadInput(f"{path} is not Google Benchmark JSON (no \"benchmarks\" list)")
    return data


def split_name(run_name):
    scenario, _, side = run_name.rpartition("/")
    return scenario, side


def measurements(data, clock):
    """{(scenario, side): {"ns": median time per iteration, "bytes": bytes_per_iteration or None} or
    {"error": message}}, and the repetitions that were run."""
    key = "cpu_time" if clock == "cpu" else "real_time"
    out, repetitions = {}, None
    for b in data["benchmarks"]:
        run_name = b.get("run_name", b.get("name", ""))
        scenario, side = split_name(run_name)
        if side not in SIDES:
            raise BadInput(f"benchmark {run_name!r} is not named SCENARIO/impl or SCENARIO/libtorch")
        if b.get("error_occurred"):
            out[(scenario, side)] = {"error": b.get("error_message", "error")}
            continue
        # Aggregates only: the median row. Without repetitions the single run is its own median.
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if b.get("run_type") == "iteration" and (scenario, side) in out:
            raise BadInput(f"{run_name} has several runs and no median: run with --benchmark_repetitions and "
                           f"--benchmark_report_aggregates_only=true")
        if "error" in out.get((scenario, side), {}):
            continue
        unit = b.get("time_unit", "ns")
        if unit not in TIME_UNIT_NS or key not in b:
            raise BadInput(f"{run_name}: no {key} in a known time unit")
        out[(scenario, side)] = {"ns": float(b[key]) * TIME_UNIT_NS[unit], "bytes": b.get("bytes_per_iteration")}
        if b.get("run_type") == "aggregate":
            repetitions = b.get("repetitions", repetitions)
    return out, repetitions


def rows_from(measured):
    known = {name for name, _, _ in SCENARIOS}
    unknown = sorted({s for s, _ in measured if s not in known})
    if unknown:
        raise BadInput(f"parity_bench ran scenarios this script does not know: {', '.join(unknown)} "
                       f"(add them to SCENARIOS in bench/kernels.py, with their goal)")
    missing = [f"{s}/{side}" for s, _, _ in SCENARIOS for side in SIDES if (s, side) not in measured]
    if missing:
        raise BadInput(f"no result for {', '.join(missing)} (a parity_bench that lacks these scenarios?)")
    rows = []
    for name, title, goal in SCENARIOS:
        impl, torch = measured[(name, "impl")], measured[(name, "libtorch")]
        row = {"scenario": name, "title": title, "unit": "ns", "impl": None, "libtorch": None, "ratio": None,
               "goal": goal, "pass": False, "error": None}
        errors = [m["error"] for m in (impl, torch) if "error" in m]  # parity_bench's message names the side
        if errors:
            row["error"] = "; ".join(errors)
            rows.append(row)
            continue
        if impl["ns"] <= 0 or torch["ns"] <= 0:
            raise BadInput(f"{name}: a time of zero")
        # Same work on both sides, so the speed ratio is LibTorch's time over impl's, in either unit.
        row["ratio"] = torch["ns"] / impl["ns"]
        if impl["bytes"] is not None or torch["bytes"] is not None:
            if impl["bytes"] != torch["bytes"]:
                raise BadInput(f"{name}: impl and libtorch move different bytes per iteration")
            row["unit"] = "GB/s"
            row["impl"] = impl["bytes"] / impl["ns"]  # bytes per ns = GB/s
            row["libtorch"] = torch["bytes"] / torch["ns"]
        else:
            row["impl"], row["libtorch"] = impl["ns"], torch["ns"]
        row["pass"] = row["ratio"] >= goal
        rows.append(row)
    return rows


def fmt_value(value, unit):
    if value is None:
        return "—"
    if unit == "GB/s":
        return f"{value:.3g} GB/s"
    for scale, name in ((1e6, "ms"), (1e3, "µs")):
        if value >= scale:
            return f"{value / scale:.3g} {name}"
    return f"{value:.3g} ns"


def fmt_ratio(ratio):
    return "—" if ratio is None else f"{ratio:.3g}×"


def verdict(row):
    return "ERROR" if row["error"] else ("PASS" if row["pass"] else "FAIL")


def table(report):
    m = report["method"]
    lines = [f"impl vs LibTorch {report['libtorch_version']}, 1 thread each; median of {m['repetitions']} "
             f"repetitions ({m['clock']}); GB/s counts bytes {m['bytes']}; ratio = impl speed / LibTorch speed",
             "", "| work | impl | LibTorch | ratio | goal | |", "|---|---|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(f"| {r['title']} | {fmt_value(r['impl'], r['unit'])} | {fmt_value(r['libtorch'], r['unit'])} | "
                     f"{fmt_ratio(r['ratio'])} | ≥ {r['goal']:g}× | {verdict(r)} |")
    lines.append("")
    lines.append(f"{report['goals_met']} of {report['goals_total']} goals met "
                 f"(commit {report['commit']}, {report['machine']['cpu_model']}, {report['created']})")
    for r in report["rows"]:
        if r["error"]:
            lines.append(f"ERROR in {r['scenario']}: {r['error']}")
    return "\n".join(lines)


def svg_chart(report):
    rows = report["rows"]
    values = [r["ratio"] for r in rows if r["ratio"]] + [r["goal"] for r in rows] + [1.0]
    # Room beyond the extreme bars for their labels; the grid's decades need not meet the edges.
    lo, hi = min(values) / 2.5, max(values) * 2.5
    label_w, plot_w, right, top, row_h = 420, 520, 20, 92, 30
    width, height = label_w + plot_w + right, top + row_h * len(rows) + 64

    def x(v):
        return label_w + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    m, machine = report["method"], report["machine"]
    title = f"impl vs LibTorch {report['libtorch_version']}: speed ratio (> 1: impl faster), log scale"
    subtitle = (f"median of {m['repetitions']} repetitions, {m['clock']}, 1 thread each; "
                f"commit {report['commit'][:12]}; {machine['cpu_model']}; {report['created']}")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="12" y="24" font-size="16" font-weight="bold">{escape(title)}</text>',
           f'<text x="12" y="44" fill="#444">{escape(subtitle)}</text>',
           f'<text x="12" y="64" fill="#444">{report["goals_met"]} of {report["goals_total"]} goals met'
           f'  <tspan fill="#2e7d32">■ goal met</tspan>  <tspan fill="#c62828">■ goal missed</tspan>'
           f'  <tspan font-weight="bold">| goal</tspan></text>']
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
        if r["ratio"] is None:
            out.append(f'<text x="{x(1) + 6:.1f}" y="{y + row_h / 2 + 4:.1f}" fill="#c62828">ERROR</text>')
        else:
            x0, x1 = sorted((x(1.0), x(r["ratio"])))
            colour = "#2e7d32" if r["pass"] else "#c62828"
            out.append(f'<rect class="bar" x="{x0:.1f}" y="{y + 6}" width="{max(x1 - x0, 1):.1f}" '
                       f'height="{row_h - 12}" fill="{colour}" fill-opacity="0.8"><title>'
                       f'{escape(r["scenario"])}: {escape(fmt_ratio(r["ratio"]))}</title></rect>')
            # Clear of the goal mark, which may lie inside the bar or just past its end.
            if r["ratio"] >= 1:
                label_x, anchor = max(x1, x(r["goal"]) + 1) + 5, "start"
            else:
                label_x, anchor = min(x0, x(r["goal"]) - 1) - 5, "end"
            out.append(f'<text x="{label_x:.1f}" y="{y + row_h / 2 + 4:.1f}" text-anchor="{anchor}" '
                       f'font-size="12">{escape(fmt_ratio(r["ratio"]))}</text>')
        out.append(f'<line class="goal" x1="{x(r["goal"]):.1f}" y1="{y + 2}" x2="{x(r["goal"]):.1f}" '
                   f'y2="{y + row_h - 2}" stroke="#000" stroke-width="3"><title>goal ≥ {r["goal"]:g}×</title></line>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def report_from(data, rows, clock, repetitions, min_time):
    ctx = data.get("context", {})
    return {
        "schema": SCHEMA,
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": ctx.get("commit", "unknown"),
        "libtorch_version": ctx.get("libtorch_version", "unknown"),
        "machine": {"host": ctx.get("host_name", "unknown"), "cpu_model": ctx.get("cpu_model", "unknown"),
                    "num_cpus": ctx.get("num_cpus"), "mhz_per_cpu": ctx.get("mhz_per_cpu"),
                    "load_avg_at_start": ctx.get("load_avg"), "benchmark_date": ctx.get("date")},
        "method": {"statistic": "median", "repetitions": repetitions, "min_time_s": min_time,
                   "clock": "CPU time" if clock == "cpu" else "wall-clock time", "bytes": "read + written"},
        "goals_met": sum(1 for r in rows if r["pass"]),
        "goals_total": len(rows),
        "rows": rows,
    }


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench", default=os.path.join(REPO, "build", "parity_bench"))
    p.add_argument("--from-json", help="Google Benchmark JSON to read instead of running parity_bench")
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench-results"))
    p.add_argument("--repetitions", type=int, default=7)
    p.add_argument("--min-time", type=float, default=0.3, help="seconds per repetition, at least")
    p.add_argument("--clock", choices=("cpu", "real"), default="cpu")
    p.add_argument("--require-goals", action="store_true", help="exit 1 unless every goal is met")
    args = p.parse_args(argv)
    if args.repetitions < 1 or args.min_time <= 0:
        p.error("--repetitions must be at least 1 and --min-time positive")
    try:
        os.makedirs(args.out_dir, exist_ok=True)
        raw = os.path.join(args.out_dir, "kernels-gbench.json")
        if args.from_json:
            source, min_time = args.from_json, None
        else:
            run_bench(args, raw)
            source, min_time = raw, args.min_time
        data = load(source)
        measured, repetitions = measurements(data, args.clock)
        rows = rows_from(measured)
    except BadInput as e:
        print(f"kernels.py: {e}", file=sys.stderr)
        return 2
    report = report_from(data, rows, args.clock, repetitions or 1, min_time)
    write(os.path.join(args.out_dir, "kernels.json"), json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    write(os.path.join(args.out_dir, "kernels.svg"), svg_chart(report))
    print(table(report))
    print(f"\nwritten: {os.path.join(args.out_dir, 'kernels.json')}, {os.path.join(args.out_dir, 'kernels.svg')}")
    if args.require_goals and report["goals_met"] < report["goals_total"]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
