#!/usr/bin/env python3
"""bench/kernels.py turns Google Benchmark JSON into the kernel table, kernels.json and kernels.svg.

usage: kernels_bench_test.py KERNELS_PY WORK_DIR [PARITY_BENCH]

The driver's logic only, on canned Google Benchmark JSON written here (no timing is measured): the median
repetition is the one read, in the chosen clock and any time unit; ratios, GB/s, goals and PASS/FAIL/ERROR are
right in the table, the JSON and the chart; a scenario missing or unknown, or no parity_bench, is refused (exit 2);
--require-goals exits 1 on a missed goal. With PARITY_BENCH, the benchmarks it lists must be exactly the driver's
scenarios on both sides (--benchmark_list_tests: nothing is run).
"""
import importlib.util
import json
import os
import shutil
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


def entry(run_name, aggregate, cpu, real=None, unit="us", bytes_=None, run_type="aggregate"):
    e = {"name": f"{run_name}_{aggregate}" if aggregate else run_name, "run_name": run_name, "run_type": run_type,
         "repetitions": 5, "threads": 1, "iterations": 100, "real_time": real if real is not None else cpu,
         "cpu_time": cpu, "time_unit": unit}
    if aggregate:
        e["aggregate_name"] = aggregate
    if bytes_ is not None:
        e["bytes_per_iteration"] = bytes_
    return e


# (impl cpu time, libtorch cpu time) in microseconds for each scenario's median; the mean and stddev rows hold
# other numbers, so that reading any row but the median changes the ratios.
MEDIANS = {
    "clone_1_float": (0.1, 0.6),               # 6x: PASS (goal 5)
    "detach": (0.05, 0.2),                     # 4x: FAIL (goal 5)
    "clone_requires_grad": (0.2, 1.2),         # 6x: PASS
    "clone_mul_add_sum_backward": (5.0, 25.0),  # 5x: PASS (exactly the goal)
    "clone_64mib": (10000.0, 40000.0),         # 4x, GB/s: PASS (goal 3)
    "channels_last_to_contiguous": (1000.0, 1000.0),  # 1x: PASS (goal 1)
    "transpose_contiguous": (40000.0, 4000.0),  # 0.1x: FAIL
    "add_broadcast_256": (70.0, 7.0),          # 0.1x: FAIL
    "mm_256": (10000.0, 5000.0),               # 0.5x: FAIL (goal 0.8)
    "sum_1m": (3000.0, 45.0),                  # 0.015x: FAIL
}
BYTES = {"clone_64mib": 2 * 64 * 2 ** 20, "channels_last_to_contiguous": 2 * 8 * 64 * 56 * 56 * 4,
         "transpose_contiguous": 2 * 2048 * 2048 * 4}
EXPECTED_PASS = {"clone_1_float", "clone_requires_grad", "clone_mul_add_sum_backward", "clone_64mib",
                 "channels_last_to_contiguous"}


def canned(skip=(), extra=(), error=None, single=False):
    benchmarks = []
    for scenario, (impl, torch) in MEDIANS.items():
        for side, t in (("impl", impl), ("libtorch", torch)):
            name = f"{scenario}/{side}"
            if name in skip:
                continue
            b = BYTES.get(scenario)
            if error == name:
                benchmarks.append({"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
                                   "error_message": f"{side} raised: planted fault"})
                continue
            if single:
                benchmarks.append(entry(name, None, t, bytes_=b, run_type="iteration"))
                continue
            benchmarks.append(entry(name, "mean", t * 3, bytes_=b))
            # Real time 10x the CPU time: --clock real must read it, the default must not.
            benchmarks.append(entry(name, "median", t, real=t * 10, bytes_=b))
            benchmarks.append(entry(name, "stddev", t / 7, bytes_=b))
            benchmarks.append(entry(name, "cv", 0.01, unit="ns"))
    for name in extra:
        benchmarks.append(entry(name, "median", 1.0))
    # Some benchmarks in other time units: units must be converted, not assumed.
    for b in benchmarks:
        unit = {"detach/impl": ("ns", 1e3), "mm_256/libtorch": ("ms", 1e-3)}.get(b.get("run_name"))
        if unit and "cpu_time" in b and b.get("aggregate_name") != "cv":
            b["time_unit"] = unit[0]
            b["cpu_time"] *= unit[1]
            b["real_time"] *= unit[1]
    return {"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "testhost", "num_cpus": 2,
                        "mhz_per_cpu": 2600, "load_avg": [0.5, 0.5, 0.5], "libtorch_version": "1.13.1",
                        "commit": "0123456789abcdef", "cpu_model": "Test CPU"},
            "benchmarks": benchmarks}


def run(driver, work, name, data, *args):
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, "gbench.json")
    with open(source, "w") as f:
        json.dump(data, f)
    out_dir = os.path.join(folder, "out")
    p = subprocess.run([sys.executable, driver, "--from-json", source, "--out-dir", out_dir, *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr, out_dir


def read_outputs(out_dir):
    with open(os.path.join(out_dir, "kernels.json")) as f:
        report = json.load(f)
    svg = ET.parse(os.path.join(out_dir, "kernels.svg")).getroot()
    return report, svg


def close(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def test_table(driver, work, module):
    code, out, err, out_dir = run(driver, work, "table", canned())
    if not check(code == 0, f"canned results: exit {code}, expected 0; stderr:\n{err}"):
        return
    report, svg = read_outputs(out_dir)
    check(report["schema"] == "parity-kernels-bench/1", f"schema {report['schema']}")
    check(report["commit"] == "0123456789abcdef" and report["libtorch_version"] == "1.13.1",
          "commit and LibTorch version must come from the benchmark's context")
    check(report["machine"]["cpu_model"] == "Test CPU" and report["machine"]["num_cpus"] == 2, "machine")
    check(report["method"]["statistic"] == "median" and report["method"]["repetitions"] == 5, "method")
    names = [r["scenario"] for r in report["rows"]]
    check(names == [s for s, _, _ in module.SCENARIOS], f"rows {names}: expected the SCENARIOS order")
    rows = {r["scenario"]: r for r in report["rows"]}
    for scenario, (impl, torch) in MEDIANS.items():
        r = rows[scenario]
        check(close(r["ratio"], torch / impl), f"{scenario}: ratio {r['ratio']}, expected {torch / impl}")
        check(r["pass"] == (scenario in EXPECTED_PASS), f"{scenario}: pass {r['pass']}")
        check(r["error"] is None, f"{scenario}: error {r['error']}")
        if scenario in BYTES:
            check(r["unit"] == "GB/s", f"{scenario}: unit {r['unit']}")
            check(close(r["impl"], BYTES[scenario] / (impl * 1e3)), f"{scenario}: impl {r['impl']} GB/s")
            check(close(r["libtorch"], BYTES[scenario] / (torch * 1e3)), f"{scenario}: libtorch GB/s")
        else:
            check(r["unit"] == "ns", f"{scenario}: unit {r['unit']}")
            check(close(r["impl"], impl * 1e3) and close(r["libtorch"], torch * 1e3), f"{scenario}: times in ns")
    check(report["goals_met"] == len(EXPECTED_PASS) and report["goals_total"] == 10, "goals_met")
    for line in ("| clone, 1 float | 100 ns | 600 ns | 6× | ≥ 5× | PASS |",
                 "| detach (1 float, requires_grad) | 50 ns | 200 ns | 4× | ≥ 5× | FAIL |",
                 "| clone, 64 MiB (old result freed each time) | 13.4 GB/s | 3.36 GB/s | 4× | ≥ 3× | PASS |",
                 "| mm, 256×256 float | 10 ms | 5 ms | 0.5× | ≥ 0.8× | FAIL |",
                 "| sum of 1M floats | 3 ms | 45 µs | 0.015× | ≥ 1× | FAIL |",
                 "5 of 10 goals met"):
        check(line in out, f"the table lacks the line {line!r}:\n{out}")
    bars = svg.findall(f".//{SVG}rect[@class='bar']")
    goals = svg.findall(f".//{SVG}line[@class='goal']")
    check(len(bars) == 10 and len(goals) == 10, f"chart: {len(bars)} bars and {len(goals)} goal marks, expected 10")
    colours = [b.get("fill") for b in bars]
    check(colours.count("#2e7d32") == len(EXPECTED_PASS), f"chart: green bars {colours}")
    texts = " ".join("".join(t.itertext()) for t in svg.iter(f"{SVG}text"))
    for title in ("sum of 1M floats", "6×", "0.015×", "5 of 10 goals met", "1.13.1"):
        check(title in texts, f"chart lacks the text {title!r}")
    # A faster impl draws its bar right of parity (1×), a slower one left of it.
    x = {b.find(f"{SVG}title").text.split(":")[0]: float(b.get("x")) for b in bars}
    check(x["sum_1m"] < x["clone_1_float"], "a slower impl's bar must start left of a faster one's")

    code, _, _, out_dir = run(driver, work, "real", canned(), "--clock", "real")
    if check(code == 0, f"--clock real: exit {code}"):
        report, _ = read_outputs(out_dir)
        r = {r["scenario"]: r for r in report["rows"]}["mm_256"]
        check(close(r["impl"], 10000.0 * 10 * 1e3), f"--clock real must read real_time: impl {r['impl']}")
        check(report["method"]["clock"] == "wall-clock time", f"clock {report['method']['clock']}")

    code, _, _, out_dir = run(driver, work, "require", canned(), "--require-goals")
    check(code == 1, f"--require-goals with goals missed: exit {code}, expected 1")
    check(os.path.exists(os.path.join(out_dir, "kernels.svg")), "--require-goals must still write the chart")

    code, out, err, _ = run(driver, work, "single", canned(single=True))
    check(code == 0 and "5 of 10 goals met" in out, f"one run per benchmark (no repetitions): exit {code}\n{err}")


def test_error_row(driver, work):
    code, out, err, out_dir = run(driver, work, "error", canned(error="mm_256/impl"))
    if not check(code == 0, f"a benchmark that raised: exit {code}, expected 0 (a row says ERROR); {err}"):
        return
    report, svg = read_outputs(out_dir)
    r = {r["scenario"]: r for r in report["rows"]}["mm_256"]
    check(r["ratio"] is None and not r["pass"] and "planted fault" in (r["error"] or ""), f"error row {r}")
    check("| mm, 256×256 float | — | — | — | ≥ 0.8× | ERROR |" in out, f"table:\n{out}")
    check(len(svg.findall(f".//{SVG}rect[@class='bar']")) == 9, "chart: the errored row must have no bar")


def test_refusals(driver, work):
    code, _, err, _ = run(driver, work, "missing", canned(skip={"sum_1m/libtorch"}))
    check(code == 2 and "sum_1m/libtorch" in err, f"a missing result: exit {code}, stderr {err!r}")
    code, _, err, _ = run(driver, work, "unknown", canned(extra=("new_kernel/impl", "new_kernel/libtorch")))
    check(code == 2 and "new_kernel" in err and "SCENARIOS" in err, f"an unknown scenario: exit {code}, {err!r}")
    code, _, err, _ = run(driver, work, "badname", canned(extra=("oddly_named",)))
    check(code == 2 and "oddly_named" in err, f"a benchmark not named SCENARIO/SIDE: exit {code}, {err!r}")
    folder = os.path.join(work, "nobench")
    p = subprocess.run([sys.executable, driver, "--bench", os.path.join(folder, "no_such_bench"), "--out-dir",
                        os.path.join(folder, "out")], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "build it first" in p.stderr, f"no parity_bench: exit {p.returncode}, {p.stderr!r}")


def test_bench_lists_scenarios(bench, module):
    p = subprocess.run([bench, "--benchmark_list_tests"], capture_output=True, text=True, timeout=120)
    listed = p.stdout.split()
    expected = [f"{s}/{side}" for s, _, _ in module.SCENARIOS for side in module.SIDES]
    check(p.returncode == 0 and sorted(listed) == sorted(expected),
          f"parity_bench lists {listed}, the driver expects {expected}")


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    driver, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    module = load_driver(driver)
    test_table(driver, work, module)
    test_error_row(driver, work)
    test_refusals(driver, work)
    if len(sys.argv) == 4:
        test_bench_lists_scenarios(sys.argv[3], module)
    if failures:
        print(f"kernels_bench: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("kernels_bench: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
