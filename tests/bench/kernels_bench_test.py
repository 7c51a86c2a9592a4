#!/usr/bin/env python3
"""bench/kernels.py turns Google Benchmark JSON into the kernel table, kernels.json and kernels.svg.

usage: kernels_bench_test.py KERNELS_PY WORK_DIR [PARITY_BENCH]

The driver's logic only, on canned Google Benchmark JSON of two LibTorch releases written here (no timing is
measured): the median repetition is the one read, in the chosen clock and any time unit; ratios, GB/s and their
fraction of the run's memcpy, GFLOP/s and their fraction of the run's FMA peak, goals (met only when met against
every release) and PASS/FAIL/ERROR are right in the table, the JSON and the chart; a scenario, side, memcpy or peak
missing or unknown, a release given twice, or no parity_bench, is refused (exit 2); --require-goals exits 1 on a
missed goal; the run mode runs each --bench given (stand-in scripts here) and keeps each release's JSON. With
PARITY_BENCH, the benchmarks it lists must be exactly the driver's (--benchmark_list_tests: nothing is run), on the
CPU and with --device cuda. The device table (--device cuda) has no FMA peak, wall-clock time only, and a goal that is
a share of the ceiling (the clone's) beside ratio goals.
"""
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET

failures = []
SVG = "{http://www.w3.org/2000/svg}"


def fail(message):
    failures.append(message)
    print(f"kernels_bench: FAIL: {message}", file=sys.stderr)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


def load_driver(path):
    spec = importlib.util.spec_from_file_location("kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def entry(run_name, aggregate, cpu, real=None, unit="us", bytes_=None, flops=None, run_type="aggregate"):
    e = {"name": f"{run_name}_{aggregate}" if aggregate else run_name, "run_name": run_name, "run_type": run_type,
         "repetitions": 5, "threads": 1, "iterations": 100, "real_time": real if real is not None else cpu,
         "cpu_time": cpu, "time_unit": unit}
    if aggregate:
        e["aggregate_name"] = aggregate
    if bytes_ is not None:
        e["bytes_per_iteration"] = bytes_
    if flops is not None:
        e["flops_per_iteration"] = flops
    return e


OLD, NEW = "1.13.1", "2.15.0"
# (impl cpu time, libtorch cpu time) in microseconds for each scenario's median, per release; the mean and stddev
# rows hold other numbers, so that reading any row but the median changes the ratios. Several scenarios pass in
# one release and fail in the other: their goal is not met.
MEDIANS = {
    OLD: {
        "clone_1_float": (0.1, 0.6),               # 6x: PASS (goal 5)
        "detach": (0.05, 0.2),                     # 4x: FAIL (goal 5)
        "clone_requires_grad": (0.2, 1.2),         # 6x: PASS
        "clone_mul_add_sum_backward": (5.0, 25.0),  # 5x: PASS (exactly the goal)
        "clone_64mib": (10000.0, 40000.0),         # 4x, GB/s: PASS (goal 3)
        "channels_last_to_contiguous": (1000.0, 1000.0),  # 1x: PASS (goal 1)
        "transpose_contiguous": (40000.0, 4000.0),  # 0.1x: FAIL
        "add_broadcast_256": (70.0, 7.0),          # 0.1x: FAIL
        "mm_256": (10000.0, 5000.0),               # 0.5x, GFLOP/s: FAIL (goal 0.8)
        "sum_1m": (3000.0, 45.0),                  # 0.015x, GB/s: FAIL
    },
    NEW: {
        "clone_1_float": (0.1, 0.4),               # 4x: FAIL
        "detach": (0.05, 0.3),                     # 6x: PASS
        "clone_requires_grad": (0.2, 1.4),         # 7x: PASS
        "clone_mul_add_sum_backward": (5.0, 30.0),  # 6x: PASS
        "clone_64mib": (12000.0, 36000.0),         # 3x: PASS (exactly the goal)
        "channels_last_to_contiguous": (1000.0, 900.0),  # 0.9x: FAIL
        "transpose_contiguous": (4000.0, 8000.0),  # 2x: PASS
        "add_broadcast_256": (70.0, 70.0),         # 1x: PASS
        "mm_256": (10000.0, 8000.0),               # 0.8x: PASS (exactly the goal)
        "sum_1m": (3000.0, 60.0),                  # 0.02x: FAIL
    },
}
PASSES = {OLD: {"clone_1_float", "clone_requires_grad", "clone_mul_add_sum_backward", "clone_64mib",
                "channels_last_to_contiguous"},
          NEW: {"detach", "clone_requires_grad", "clone_mul_add_sum_backward", "clone_64mib", "transpose_contiguous",
                "add_broadcast_256", "mm_256"}}
GOALS_MET = PASSES[OLD] & PASSES[NEW]
# bytes_per_iteration of the scenarios that move bytes (as bench/backend_bench.cpp counts them), and the median of
# each one's memcpy per release, in microseconds.
BYTES = {"clone_64mib": 2 * 64 * 2 ** 20, "channels_last_to_contiguous": 2 * 8 * 64 * 56 * 56 * 4,
         "transpose_contiguous": 2 * 2048 * 2048 * 4, "sum_1m": 4 * 2 ** 20 + 4}
MEMCPY = {OLD: {"clone_64mib": 6000.0, "channels_last_to_contiguous": 500.0, "transpose_contiguous": 1000.0,
                "sum_1m": 150.0},
          NEW: {"clone_64mib": 9000.0, "channels_last_to_contiguous": 400.0, "transpose_contiguous": 1200.0,
                "sum_1m": 100.0}}
FLOPS = {"mm_256": 2 * 256 ** 3}
PEAK_FLOPS = 2 * 16 * 12 * 16384  # per iteration of peak_fma/machine
PEAK_US = {OLD: 30.0, NEW: 32.0}


def canned(version=OLD, skip=(), extra=(), errors=(), single=False, numbers=None):
    """Google Benchmark JSON of parity_bench for a release, with that release's canned numbers (or those of the
    release numbers names)."""
    numbers = numbers or version
    benchmarks = []

    def add(name, t, bytes_=None, flops=None, label=None):
        if name in skip:
            return
        if name in errors:
            benchmarks.append({"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
                               "error_message": f"{name.split('/')[1]} raised: planted fault"})
            return
        if single:
            rows = [entry(name, None, t, bytes_=bytes_, flops=flops, run_type="iteration")]
        else:
            # Real time 10x the CPU time: --clock real must read it, the default must not.
            rows = [entry(name, "mean", t * 3, bytes_=bytes_, flops=flops),
                    entry(name, "median", t, real=t * 10, bytes_=bytes_, flops=flops),
                    entry(name, "stddev", t / 7, bytes_=bytes_, flops=flops), entry(name, "cv", 0.01, unit="ns")]
        for r in rows:
            if label is not None:
                r["label"] = label
        benchmarks.extend(rows)

    for scenario, (impl, torch) in MEDIANS[numbers].items():
        for side, t in (("impl", impl), ("libtorch", torch)):
            add(f"{scenario}/{side}", t, BYTES.get(scenario), FLOPS.get(scenario))
        if scenario in BYTES:
            add(f"{scenario}/memcpy", MEMCPY[numbers][scenario], BYTES[scenario])
    add("peak_fma/machine", PEAK_US[numbers], flops=PEAK_FLOPS, label="avx512f")
    for name in extra:
        benchmarks.append(entry(name, "median", 1.0))
    # Some benchmarks in other time units: units must be converted, not assumed.
    for b in benchmarks:
        unit = {"detach/impl": ("ns", 1e3), "mm_256/libtorch": ("ms", 1e-3),
                "sum_1m/memcpy": ("ns", 1e3)}.get(b.get("run_name"))
        if unit and "cpu_time" in b and b.get("aggregate_name") != "cv":
            b["time_unit"] = unit[0]
            b["cpu_time"] *= unit[1]
            b["real_time"] *= unit[1]
    return {"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "testhost", "num_cpus": 2,
                        "mhz_per_cpu": 2600, "load_avg": [0.5, 0.5, 0.5], "libtorch_version": version,
                        "commit": "0123456789abcdef", "cpu_model": "Test CPU"},
            "benchmarks": benchmarks}


def run(driver, work, name, datas, *args):
    """The driver on one Google Benchmark JSON per element of datas, given in that order."""
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    sources = []
    for i, data in enumerate(datas):
        source = os.path.join(folder, f"gbench{i}.json")
        with open(source, "w") as f:
            json.dump(data, f)
        sources += ["--from-json", source]
    out_dir = os.path.join(folder, "out")
    p = subprocess.run([sys.executable, driver, *sources, "--out-dir", out_dir, *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr, out_dir


def both(**kwargs):
    """Both releases, the newer first: the driver must order them by version."""
    return [canned(NEW, **kwargs.get(NEW, {})), canned(OLD, **kwargs.get(OLD, {}))]


def read_outputs(out_dir):
    with open(os.path.join(out_dir, "kernels.json")) as f:
        report = json.load(f)
    svg = ET.parse(os.path.join(out_dir, "kernels.svg")).getroot()
    return report, svg


def close(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def expected_cell(version, scenario, clock_scale=1):
    """What the driver must compute for a scenario in a release, from the canned numbers: (impl, libtorch,
    impl_fraction, libtorch_fraction), values in the row's unit."""
    impl, torch = (t * 1e3 * clock_scale for t in MEDIANS[version][scenario])  # ns
    if scenario in BYTES:
        ceiling = BYTES[scenario] / (MEMCPY[version][scenario] * 1e3 * clock_scale)
        work = BYTES[scenario]
    elif scenario in FLOPS:
        ceiling = PEAK_FLOPS / (PEAK_US[version] * 1e3 * clock_scale)
        work = FLOPS[scenario]
    else:
        return impl, torch, None, None
    return work / impl, work / torch, work / impl / ceiling, work / torch / ceiling


def test_table(driver, work, module):
    code, out, err, out_dir = run(driver, work, "table", both())
    if not check(code == 0, f"canned results: exit {code}, expected 0; stderr:\n{err}"):
        return
    report, svg = read_outputs(out_dir)
    check_report(report, module)
    check_table_text(out)
    check_chart(svg)


def check_report(report, module):
    check(report["schema"] == "parity-kernels-bench/2", f"schema {report['schema']}")
    check(report["commit"] == "0123456789abcdef", "the commit must come from the benchmark's context")
    check(report["machine"]["cpu_model"] == "Test CPU" and report["machine"]["num_cpus"] == 2, "machine")
    check(report["method"]["statistic"] == "median" and report["method"]["repetitions"] == 5, "method")
    releases = report["releases"]
    check([r["libtorch_version"] for r in releases] == [OLD, NEW],
          f"releases {[r['libtorch_version'] for r in releases]}: expected version order {OLD}, {NEW}")
    for r in releases:
        v = r["libtorch_version"]
        check(r["bench"] == "from-json" and r["gbench_json"].endswith(f"gbench{1 if v == OLD else 0}.json"),
              f"{v}: bench {r['bench']}, gbench_json {r['gbench_json']}")
        check(close(r["peak_gflops"], PEAK_FLOPS / (PEAK_US[v] * 1e3)) and r["peak_isa"] == "avx512f",
              f"{v}: peak {r['peak_gflops']} GFLOP/s ({r['peak_isa']})")
        check(sorted(r["memcpy_gbps"]) == sorted(BYTES), f"{v}: memcpy ceilings of {sorted(r['memcpy_gbps'])}")
        for s, t in MEMCPY[v].items():
            check(close(r["memcpy_gbps"].get(s), BYTES[s] / (t * 1e3)), f"{v}: {s} memcpy {r['memcpy_gbps'].get(s)}")
    names = [r["scenario"] for r in report["rows"]]
    check(names == [s for s, _, _ in module.SCENARIOS], f"rows {names}: expected the SCENARIOS order")
    rows = {r["scenario"]: r for r in report["rows"]}
    for scenario in MEDIANS[OLD]:
        r = rows[scenario]
        unit = "GB/s" if scenario in BYTES else ("GFLOP/s" if scenario in FLOPS else "ns")
        check(r["unit"] == unit, f"{scenario}: unit {r['unit']}, expected {unit}")
        check(r["pass"] == (scenario in GOALS_MET), f"{scenario}: pass {r['pass']} (met against every release?)")
        check(sorted(r["releases"]) == sorted([OLD, NEW]), f"{scenario}: releases {sorted(r['releases'])}")
        for v in (OLD, NEW):
            c = r["releases"][v]
            impl, torch = MEDIANS[v][scenario]
            check(close(c["ratio"], torch / impl), f"{scenario} {v}: ratio {c['ratio']}, expected {torch / impl}")
            check(c["pass"] == (scenario in PASSES[v]), f"{scenario} {v}: pass {c['pass']}")
            check(c["error"] is None, f"{scenario} {v}: error {c['error']}")
            e_impl, e_torch, e_fi, e_ft = expected_cell(v, scenario)
            check(close(c["impl"], e_impl) and close(c["libtorch"], e_torch),
                  f"{scenario} {v}: impl {c['impl']}, libtorch {c['libtorch']}; expected {e_impl}, {e_torch}")
            if e_fi is None:
                check(c["impl_fraction"] is None and c["libtorch_fraction"] is None, f"{scenario} {v}: fractions")
            else:
                check(close(c["impl_fraction"], e_fi) and close(c["libtorch_fraction"], e_ft),
                      f"{scenario} {v}: fractions {c['impl_fraction']}, {c['libtorch_fraction']}; "
                      f"expected {e_fi}, {e_ft}")
    check(report["goals_met"] == len(GOALS_MET) and report["goals_total"] == 10,
          f"goals_met {report['goals_met']}, expected {len(GOALS_MET)}")


def check_table_text(out):
    # Computed by hand from the canned numbers: 64 MiB clone 2^27 bytes / 10 ms = 13.4 GB/s, its memcpy 6 ms
    # (60%); mm 2^25 flops / 10 ms = 3.36 GFLOP/s of a peak of 6291456 flops / 30 µs (1.6%); sum_1m's LibTorch
    # faster than its memcpy (333%).
    for line in (f"| work | goal | {OLD} impl | {OLD} LibTorch | {OLD} ratio | {OLD} | {NEW} impl | {NEW} LibTorch | "
                 f"{NEW} ratio | {NEW} | all |",
                 "| clone, 1 float | ≥ 5× | 100 ns | 600 ns | 6× | PASS | 100 ns | 400 ns | 4× | FAIL | FAIL |",
                 "| detach (1 float, requires_grad) | ≥ 5× | 50 ns | 200 ns | 4× | FAIL | 50 ns | 300 ns | 6× | PASS | "
                 "FAIL |",
                 "| clone of a requires_grad tensor (1 float) | ≥ 5× | 200 ns | 1.2 µs | 6× | PASS | 200 ns | 1.4 µs | "
                 "7× | PASS | PASS |",
                 "| clone, 64 MiB (old result freed each time) | ≥ 3× | 13.4 GB/s (60%) | 3.36 GB/s (15%) | 4× | "
                 "PASS | 11.2 GB/s (75%) | 3.73 GB/s (25%) | 3× | PASS | PASS |",
                 "| mm, 256×256 float | ≥ 0.8× | 3.36 GFLOP/s (1.6%) | 6.71 GFLOP/s (3.2%) | 0.5× | FAIL | "
                 "3.36 GFLOP/s (1.7%) | 4.19 GFLOP/s (2.1%) | 0.8× | PASS | FAIL |",
                 "| sum of 1M floats | ≥ 1× | 1.4 GB/s (5%) | 93.2 GB/s (333%) | 0.015× | FAIL | 1.4 GB/s (3.3%) | "
                 "69.9 GB/s (167%) | 0.02× | FAIL | FAIL |",
                 f"{len(GOALS_MET)} of 10 goals met"):
        check(line in out, f"the table lacks the line {line!r}:\n{out}")
    check(sum(1 for line in out.splitlines() if line.startswith("| ")) == 11, f"one header and 10 rows:\n{out}")


def check_chart(svg):
    bars = svg.findall(f".//{SVG}rect[@class='bar']")
    goals = svg.findall(f".//{SVG}line[@class='goal']")
    check(len(bars) == 20 and len(goals) == 10, f"chart: {len(bars)} bars and {len(goals)} goal marks, "
                                                f"expected 20 (10 rows × 2 releases) and 10")
    titles = {b.find(f"{SVG}title").text.split(":")[0]: b for b in bars}
    check(len(titles) == 20, f"chart: bar titles {sorted(titles)}")
    outlines = [b.get("stroke") for b in bars]
    check(outlines.count("#2e7d32") == len(PASSES[OLD]) + len(PASSES[NEW]), f"chart: green outlines {outlines}")
    fills = {v: {b.get("fill") for t, b in titles.items() if t.endswith(" " + v)} for v in (OLD, NEW)}
    check(all(len(f) == 1 for f in fills.values()) and fills[OLD] != fills[NEW],
          f"chart: a colour per release, {fills}")
    bar = titles.get(f"mm_256 {NEW}")
    check(bar is not None and bar.find(f"{SVG}title").text.endswith(": 0.8×"), "chart: mm_256's bar title")
    texts = " ".join("".join(t.itertext()) for t in svg.iter(f"{SVG}text"))
    for title in ("sum of 1M floats", "6×", "0.015×", "0.02×", f"{len(GOALS_MET)} of 10 goals met", OLD, NEW):
        check(title in texts, f"chart lacks the text {title!r}")
    # A faster impl draws its bar right of parity (1×), a slower one left of it.
    x = {t: float(b.get("x")) for t, b in titles.items()}
    check(x[f"sum_1m {OLD}"] < x[f"clone_1_float {OLD}"], "a slower impl's bar must start left of a faster one's")


def test_options(driver, work):

    code, _, err, out_dir = run(driver, work, "real", both(), "--clock", "real")
    if check(code == 0, f"--clock real: exit {code}\n{err}"):
        report, _ = read_outputs(out_dir)
        c = {r["scenario"]: r for r in report["rows"]}["mm_256"]["releases"][OLD]
        e_impl, _, e_fraction, _ = expected_cell(OLD, "mm_256", clock_scale=10)
        check(close(c["impl"], e_impl), f"--clock real must read real_time: impl {c['impl']}, expected {e_impl}")
        check(close(c["impl_fraction"], e_fraction), f"--clock real: fraction {c['impl_fraction']}")
        peak = report["releases"][0]["peak_gflops"]
        check(close(peak, PEAK_FLOPS / (PEAK_US[OLD] * 1e4)), f"--clock real: peak {peak}")
        check(report["method"]["clock"] == "wall-clock time", f"clock {report['method']['clock']}")

    code, _, _, out_dir = run(driver, work, "require", both(), "--require-goals")
    check(code == 1, f"--require-goals with goals missed: exit {code}, expected 1")
    check(os.path.exists(os.path.join(out_dir, "kernels.svg")), "--require-goals must still write the chart")

    code, out, err, _ = run(driver, work, "single", both(**{OLD: {"single": True}, NEW: {"single": True}}))
    check(code == 0 and f"{len(GOALS_MET)} of 10 goals met" in out,
          f"one run per benchmark (no repetitions): exit {code}\n{err}")

    # One release alone: its own verdicts are the goals.
    code, out, err, _ = run(driver, work, "one", [canned(NEW)])
    check(code == 0 and f"{len(PASSES[NEW])} of 10 goals met" in out and f"{OLD} impl" not in out,
          f"one release: exit {code}\n{out}{err}")


def test_error_rows(driver, work):
    # mm_256 fails in 1.13.1 and raises in 2.15.0: FAIL. clone_64mib passes in 1.13.1 and raises in 2.15.0: ERROR.
    code, out, err, out_dir = run(driver, work, "error", both(**{NEW: {"errors": {"mm_256/impl",
                                                                                     "clone_64mib/libtorch"}}}))
    if not check(code == 0, f"a benchmark that raised: exit {code}, expected 0 (a row says ERROR); {err}"):
        return
    report, svg = read_outputs(out_dir)
    rows = {r["scenario"]: r for r in report["rows"]}
    c = rows["mm_256"]["releases"][NEW]
    check(c["ratio"] is None and c["impl"] is None and not c["pass"] and "planted fault" in (c["error"] or ""),
          f"error cell {c}")
    check(close(c["libtorch"], FLOPS["mm_256"] / (MEDIANS[NEW]["mm_256"][1] * 1e3)),
          f"the side that ran keeps its number: {c}")
    check(close(rows["mm_256"]["releases"][OLD]["ratio"], 0.5), "the other release's cell is untouched")
    check(not rows["clone_64mib"]["pass"], "a goal that raised in one release is not met")
    check(report["goals_met"] == len(GOALS_MET - {"clone_64mib"}), f"goals_met {report['goals_met']}")
    for line in ("| mm, 256×256 float | ≥ 0.8× | 3.36 GFLOP/s (1.6%) | 6.71 GFLOP/s (3.2%) | 0.5× | FAIL | ERROR | "
                 "4.19 GFLOP/s (2.1%) | — | ERROR | FAIL |",
                 "| clone, 64 MiB (old result freed each time) | ≥ 3× | 13.4 GB/s (60%) | 3.36 GB/s (15%) | 4× | "
                 "PASS | 11.2 GB/s (75%) | ERROR | — | ERROR | ERROR |",
                 f"ERROR in mm_256 with LibTorch {NEW}: impl raised: planted fault"):
        check(line in out, f"the table lacks the line {line!r}:\n{out}")
    bars = svg.findall(f".//{SVG}rect[@class='bar']")
    check(len(bars) == 18, f"chart: {len(bars)} bars; the errored cells must have none (expected 18)")
    titles = {b.find(f"{SVG}title").text.split(":")[0] for b in bars}
    check(f"mm_256 {OLD}" in titles and f"mm_256 {NEW}" not in titles, f"chart: bars {sorted(titles)}")


def write_fake_bench(folder, name, version, fail_with=0):
    """A stand-in parity_bench: logs its arguments, writes canned JSON of its release to --benchmark_out."""
    os.makedirs(folder, exist_ok=True)
    data_path = os.path.join(folder, name + ".json")
    with open(data_path, "w") as f:
        json.dump(canned(version, numbers=OLD), f)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(f"#!{sys.executable}\nimport json, shutil, sys\n"
                f"with open({os.path.join(folder, name + '.args')!r}, 'w') as f:\n"
                f"    json.dump(sys.argv[1:], f)\n"
                f"out = [a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--benchmark_out=')]\n"
                f"shutil.copyfile({data_path!r}, out[0])\n"
                f"sys.exit({fail_with})\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def test_runs_each_bench(driver, work):
    folder = os.path.join(work, "benches")
    # 1.13.1 before 1.9.0 as text, after it as a version.
    newer, older = write_fake_bench(folder, "bench_a", "1.13.1"), write_fake_bench(folder, "bench_b", "1.9.0")
    out_dir = os.path.join(folder, "out")
    p = subprocess.run([sys.executable, driver, "--bench", newer, "--bench", older, "--repetitions", "3",
                        "--min-time", "0.01", "--out-dir", out_dir], capture_output=True, text=True, timeout=60)
    if not check(p.returncode == 0, f"two parity_bench runs: exit {p.returncode}\n{p.stderr}"):
        return
    report, _ = read_outputs(out_dir)
    check([r["libtorch_version"] for r in report["releases"]] == ["1.9.0", "1.13.1"],
          f"releases must be in version order: {[r['libtorch_version'] for r in report['releases']]}")
    check([r["bench"] for r in report["releases"]] == [older, newer], "each release names the binary run")
    check(report["method"]["min_time_s"] == 0.01, f"min_time_s {report['method']['min_time_s']}")
    kept = sorted(os.listdir(out_dir))
    check(kept == ["kernels-gbench-1.13.1.json", "kernels-gbench-1.9.0.json", "kernels.json", "kernels.svg"],
          f"out dir holds {kept}")
    for name in ("bench_a", "bench_b"):
        with open(os.path.join(folder, name + ".args")) as f:
            args = json.load(f)
        for flag in ("--benchmark_repetitions=3", "--benchmark_min_time=0.01", "--benchmark_out_format=json",
                     "--benchmark_report_aggregates_only=true", "--benchmark_enable_random_interleaving=true"):
            check(flag in args, f"{name} was run without {flag}: {args}")
    # The same release twice, and a parity_bench that fails.
    twin = write_fake_bench(folder, "bench_c", "1.13.1")
    p = subprocess.run([sys.executable, driver, "--bench", newer, "--bench", twin, "--out-dir", out_dir,
                        "--repetitions", "1"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "1.13.1" in p.stderr and twin in p.stderr,
          f"two binaries of one release: exit {p.returncode}, {p.stderr!r}")
    broken = write_fake_bench(folder, "bench_d", "2.15.0", fail_with=3)
    p = subprocess.run([sys.executable, driver, "--bench", broken, "--out-dir", out_dir, "--repetitions", "1"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "status 3" in p.stderr, f"a failing parity_bench: exit {p.returncode}, {p.stderr!r}")
    check(not [f for f in os.listdir(out_dir) if f.endswith(".tmp")], f"temporary files left: {os.listdir(out_dir)}")


def test_refusals(driver, work):
    code, _, err, _ = run(driver, work, "missing", both(**{NEW: {"skip": {"sum_1m/libtorch"}}}))
    check(code == 2 and "sum_1m/libtorch" in err and NEW in err, f"a missing result: exit {code}, stderr {err!r}")
    code, _, err, _ = run(driver, work, "nomemcpy", both(**{OLD: {"skip": {"clone_64mib/memcpy"}}}))
    check(code == 2 and "clone_64mib/memcpy" in err, f"a missing memcpy: exit {code}, stderr {err!r}")
    code, _, err, _ = run(driver, work, "nopeak", both(**{OLD: {"skip": {"peak_fma/machine"}}}))
    check(code == 2 and "peak_fma/machine" in err, f"a missing peak: exit {code}, stderr {err!r}")
    code, _, err, _ = run(driver, work, "timememcpy", both(**{OLD: {"extra": ("detach/memcpy",)}}))
    check(code == 2 and "detach" in err and "memcpy" in err, f"a memcpy of a time row: exit {code}, {err!r}")
    code, _, err, _ = run(driver, work, "unknown", both(**{OLD: {"extra": ("new_kernel/impl", "new_kernel/libtorch")}}))
    check(code == 2 and "new_kernel" in err and "SCENARIOS" in err, f"an unknown scenario: exit {code}, {err!r}")
    code, _, err, _ = run(driver, work, "badname", both(**{OLD: {"extra": ("oddly_named",)}}))
    check(code == 2 and "oddly_named" in err, f"a benchmark not named SCENARIO/SIDE: exit {code}, {err!r}")
    code, _, err, _ = run(driver, work, "badside", both(**{OLD: {"extra": ("mm_256/gpu",)}}))
    check(code == 2 and "mm_256/gpu" in err, f"an unknown side: exit {code}, {err!r}")
    code, _, err, out_dir = run(driver, work, "duplicate", [canned(OLD), canned(OLD)])
    check(code == 2 and OLD in err and "gbench0.json" in err and "gbench1.json" in err,
          f"two inputs of one release: exit {code}, {err!r}")
    check(not os.path.exists(os.path.join(out_dir, "kernels.json")), "a refused input must write no table")
    nameless = canned(OLD)
    del nameless["context"]["libtorch_version"]
    code, _, err, _ = run(driver, work, "noversion", [nameless])
    check(code == 2 and "libtorch_version" in err, f"no release in the context: exit {code}, {err!r}")
    folder = os.path.join(work, "nobench")
    p = subprocess.run([sys.executable, driver, "--bench", os.path.join(folder, "no_such_bench"), "--out-dir",
                        os.path.join(folder, "out")], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "build it first" in p.stderr, f"no parity_bench: exit {p.returncode}, {p.stderr!r}")
    # No --bench and no build: a copy of the driver in a tree that has built nothing.
    bare = os.path.join(work, "bare")
    os.makedirs(os.path.join(bare, "bench"))
    shutil.copy(driver, os.path.join(bare, "bench", "kernels.py"))
    p = subprocess.run([sys.executable, os.path.join(bare, "bench", "kernels.py"), "--out-dir",
                        os.path.join(bare, "out")], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "build it first" in p.stderr and "build-torch-2.15" in p.stderr,
          f"no build at all: exit {p.returncode}, {p.stderr!r}")


def test_bench_lists_scenarios(bench, module):
    p = subprocess.run([bench, "--benchmark_list_tests"], capture_output=True, text=True, timeout=120)
    listed = p.stdout.split()
    expected = ([f"{s}/{side}" for s, _, _ in module.SCENARIOS for side in ("impl", "libtorch")]
                + [f"{s}/memcpy" for s in BYTES] + ["peak_fma/machine"])
    check(p.returncode == 0 and sorted(listed) == sorted(expected),
          f"parity_bench lists {listed}, the driver expects {expected}")
    # The device's scenarios are listed without a device; each is timed by the wall clock.
    p = subprocess.run([bench, "--device", "cuda", "--benchmark_list_tests"], capture_output=True, text=True,
                       timeout=120)
    listed = p.stdout.split()
    expected = ([f"{s}/{side}/real_time" for s, _, _ in module.DEVICE_SCENARIOS for side in ("impl", "libtorch")]
                + [f"{s}/memcpy/real_time" for s in DEVICE_BYTES])
    check(p.returncode == 0 and sorted(listed) == sorted(expected),
          f"parity_bench --device cuda lists {listed}, the driver expects {expected}")


# A device run (parity_bench --device cuda): (impl, libtorch) wall-clock medians in microseconds, the memcpy
# ceilings' medians, bytes and flops. The clone's goal is impl at 80% of its ceiling, whatever LibTorch does.
DEVICE_VERSION = "2.11.0"
DEVICE_BYTES = {"clone_1gib": 2 * 2 ** 30, "add_broadcast_16k": (2 * 16384 ** 2 + 16384) * 4,
                "sum_256m": (2 ** 28 + 1) * 4}
DEVICE_FLOPS = {"mm_4096": 2 * 4096 ** 3}


def canned_device(medians, memcpy):
    benchmarks = []
    for scenario, (impl, torch) in medians.items():
        for side, t in (("impl", impl), ("libtorch", torch)):
            run_name = f"{scenario}/{side}/real_time"
            benchmarks.append(entry(run_name, "median", t * 7, real=t, bytes_=DEVICE_BYTES.get(scenario),
                                    flops=DEVICE_FLOPS.get(scenario)))
        if scenario in DEVICE_BYTES:
            benchmarks.append(entry(f"{scenario}/memcpy/real_time", "median", memcpy[scenario] * 7,
                                    real=memcpy[scenario], bytes_=DEVICE_BYTES[scenario]))
    return {"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "gpuhost", "num_cpus": 16,
                        "libtorch_version": DEVICE_VERSION, "commit": "0123456789abcdef", "cpu_model": "Test CPU"},
            "benchmarks": benchmarks}


def test_device_table(driver, work):
    memcpy = {"clone_1gib": 500.0, "add_broadcast_16k": 250.0, "sum_256m": 125.0}
    medians = {"clone_1gib": (600.0, 510.0),       # impl at 83% of cudaMemcpy: PASS though 0.85x LibTorch
               "add_broadcast_16k": (500.0, 250.0),  # 0.5x: PASS (exactly the goal)
               "sum_256m": (1000.0, 250.0),          # 0.25x: FAIL
               "mm_4096": (4000.0, 3000.0)}          # 0.75x: PASS
    code, out, err, out_dir = run(driver, work, "device", [canned_device(medians, memcpy)], "--device", "cuda")
    if not check(code == 0, f"device table: exit {code}: {err}"):
        return
    check(not os.path.exists(os.path.join(out_dir, "kernels.json")), "device table wrote the CPU's kernels.json")
    with open(os.path.join(out_dir, "kernels-cuda.json")) as f:
        report = json.load(f)
    ET.parse(os.path.join(out_dir, "kernels-cuda.svg"))
    rows = {r["scenario"]: r for r in report["rows"]}
    cells = {name: r["releases"][DEVICE_VERSION] for name, r in rows.items()}
    check(report["device"] == "cuda" and report["releases"][0]["peak_gflops"] is None,
          f"device report: {report['device']}, peak {report['releases'][0]['peak_gflops']}")
    check(report["method"]["clock"] == "wall-clock time", f"device clock: {report['method']['clock']}")
    check(rows["clone_1gib"]["goal_kind"] == "ceiling_fraction" and rows["sum_256m"]["goal_kind"] == "ratio",
          f"goal kinds: {[(n, r['goal_kind']) for n, r in rows.items()]}")
    check(close(cells["clone_1gib"]["impl_fraction"], 500.0 / 600.0) and cells["clone_1gib"]["pass"],
          f"clone: {cells['clone_1gib']}")
    check(close(cells["clone_1gib"]["ratio"], 510.0 / 600.0), f"clone ratio: {cells['clone_1gib']['ratio']}")
    check(cells["add_broadcast_16k"]["pass"] and not cells["sum_256m"]["pass"] and cells["mm_4096"]["pass"],
          f"ratio goals: {[(n, c['ratio'], c['pass']) for n, c in cells.items()]}")
    check(cells["mm_4096"]["impl_fraction"] is None and close(cells["mm_4096"]["impl"], 2 * 4096 ** 3 / 4e6),
          f"mm: {cells['mm_4096']}")
    check(report["goals_met"] == 3 and "impl ≥ 80% of ceiling" in out and "cudaMemcpy device to device" in out,
          f"device table text:\n{out}")
    # At 70% of its ceiling the clone misses its goal even while it is faster than LibTorch.
    medians["clone_1gib"] = (500.0 / 0.7, 1000.0)
    code, out, err, out_dir = run(driver, work, "device-slow-clone", [canned_device(medians, memcpy)],
                                  "--device", "cuda", "--require-goals")
    with open(os.path.join(out_dir, "kernels-cuda.json")) as f:
        clone = {r["scenario"]: r for r in json.load(f)["rows"]}["clone_1gib"]
    check(code == 1 and not clone["pass"] and clone["releases"][DEVICE_VERSION]["ratio"] > 1,
          f"a clone at 70% of cudaMemcpy: exit {code}, {clone}")
    # A device is measured by the wall clock only.
    code, _, err, _ = run(driver, work, "device-cpu-clock", [canned_device(medians, memcpy)], "--device", "cuda",
                          "--clock", "cpu")
    check(code == 2 and "--clock real" in err, f"--device cuda --clock cpu: exit {code}, {err!r}")


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    driver, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    module = load_driver(driver)
    test_table(driver, work, module)
    test_options(driver, work)
    test_error_rows(driver, work)
    test_runs_each_bench(driver, work)
    test_refusals(driver, work)
    test_device_table(driver, work)
    if len(sys.argv) == 4:
        test_bench_lists_scenarios(sys.argv[3], module)
    if failures:
        print(f"kernels_bench: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("kernels_bench: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
