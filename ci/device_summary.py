#!/usr/bin/env python3
"""The one summary ci/device_check.sh prints: what each step of a GPU machine's check measured.

usage: device_summary.py [--steps SUMMARY_TXT] [--tests GTEST_XML] [--campaign NAME=DIR]... [--throughput JSON]
                         [--kernels JSON]

Reads what the steps left: the steps' exit statuses (SUMMARY_TXT, lines "== NAME: ..." then "   exit N after S s"),
the device tests' GoogleTest XML, each campaign's run.json (its cases, cases/s, unexpected groups and the LibTorch
release that judged it), parity_throughput_bench --device cuda's JSON and bench/kernels.py --device cuda's
kernels-cuda.json. An input that is missing or unreadable (its step failed or never ran) is named as such; the
summary is printed whatever is missing. Exit status 0, or 2 on bad usage.
"""
import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

MAX_SIGNATURES = 10  # unexpected groups listed by name per campaign


class Unreadable(Exception):
    pass


def load_json(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise Unreadable(f"no {path} (its step failed or did not run)")
    except (OSError, ValueError) as e:
        raise Unreadable(f"{path} is unreadable: {e}")
    if not isinstance(data, dict):
        raise Unreadable(f"{path} is not a JSON object")
    return data


def number(data, key, path):
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unreadable(f"{path}: {key} is not a number")
    return value


def fields(data, names, kind, path):
    """data's fields `names`, each of type `kind`, or Unreadable naming them."""
    values = [data.get(n) for n in names]
    if not all(isinstance(v, kind) for v in values):
        raise Unreadable(f"{path}: {' or '.join(names)} missing or not a {kind.__name__}")
    return values


def steps_lines(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return [f"steps: no {path}"]
    steps = re.findall(r"^== ([^:\n]+):.*\n\s+exit (-?\d+) after (\d+) s", text, re.M)
    failed = [f"{name} (exit {code})" for name, code, _ in steps if code != "0"]
    total = sum(int(s) for _, _, s in steps)
    line = f"steps: {len(steps) - len(failed)} of {len(steps)} passed in {total} s"
    return [line + (f"; failed: {', '.join(failed)}" if failed else "")]


def tests_lines(path):
    try:
        root = ET.parse(path).getroot()
        counts = {k: int(root.get(k, "0")) for k in ("tests", "failures", "errors", "disabled")}
        skipped = sum(1 for _ in root.iter("skipped"))
    except FileNotFoundError:
        return [f"device tests: no {path} (their step failed or did not run)"]
    except (OSError, ET.ParseError, ValueError) as e:
        return [f"device tests: {path} is unreadable: {e}"]
    failed = counts["failures"] + counts["errors"]
    passed = counts["tests"] - failed - skipped - counts["disabled"]
    return [f"device tests: {passed} passed, {failed} failed, {skipped} skipped (of {counts['tests']})"]


def campaign_line(name, folder):
    path = os.path.join(folder, "run.json")
    try:
        run = load_json(path)
        cases, rate = number(run, "cases", path), number(run, "cases_per_second", path)
        groups = run.get("groups")
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise Unreadable(f"{path}: groups is not a list of objects")
    except Unreadable as e:
        return [f"  {name}: {e}"]
    unexpected = [str(g.get("signature", "?")) for g in groups if g.get("expected") is not True]
    judge = "impl on the CPU" if run.get("oracle") == "impl-cpu" else f"LibTorch {run.get('libtorch_version', '?')}"
    lines = [f"  {name}: {cases} cases on {run.get('device', '?')}, {rate:.1f} cases/s with {run.get('jobs', '?')} "
             f"workers, judged by {judge}: {len(unexpected)} unexpected group(s) of {len(groups)}"]
    lines += [f"    unexpected: {s}" for s in unexpected[:MAX_SIGNATURES]]
    if len(unexpected) > MAX_SIGNATURES:
        lines.append(f"    (+{len(unexpected) - MAX_SIGNATURES} more in {path})")
    return lines


def throughput_lines(path):
    try:
        data = load_json(path)
        modes, ratios = fields(data, ("modes", "ratios"), dict, path)
        parts = [f"{name} {number(m, 'cases_per_second', path):.1f}/s" for name, m in modes.items()
                 if isinstance(m, dict)]
    except Unreadable as e:
        return [f"throughput: {e}"]
    lines = [f"throughput ({data.get('cores', '?')} workers, {data.get('seconds_per_mode', '?')} s a mode): "
             + ", ".join(parts)]
    for name, r in ratios.items():
        if not isinstance(r, dict) or not isinstance(r.get("value"), (int, float)):
            continue
        goal = f" (goal >= {r['goal']:g}: {'met' if r.get('met') else 'NOT met'})" if "goal" in r else ""
        lines.append(f"  {name}: {r['value']:.3g}{goal}")
    return lines


def kernels_lines(path):
    try:
        data = load_json(path)
        rows, releases = fields(data, ("rows", "releases"), list, path)
        if not releases:
            raise Unreadable(f"{path}: no releases")
        version = releases[0].get("libtorch_version", "?")
        lines = [f"device benchmark (impl's cuda vs LibTorch-CUDA {version}): {data.get('goals_met', '?')} of "
                 f"{data.get('goals_total', '?')} goals met"]
        for r in rows:
            cell = r.get("releases", {}).get(version, {})
            ratio, fraction = cell.get("ratio"), cell.get("impl_fraction")
            what = f"ratio {ratio:.3g}x" if isinstance(ratio, (int, float)) else f"ERROR: {cell.get('error')}"
            if isinstance(fraction, (int, float)):
                what += f", impl at {100 * fraction:.0f}% of the ceiling"
            goal = (f"impl >= {100 * r['goal']:.0f}% of the ceiling" if r.get("goal_kind") == "ceiling_fraction"
                    else f">= {r.get('goal')}x")
            lines.append(f"  {r.get('title', r.get('scenario'))}: {what} (goal {goal}: "
                         f"{'PASS' if r.get('pass') else 'FAIL'})")
        return lines
    except (Unreadable, AttributeError, TypeError, KeyError) as e:
        return [f"device benchmark: {e if isinstance(e, Unreadable) else f'{path} is malformed: {e!r}'}"]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps")
    p.add_argument("--tests")
    p.add_argument("--campaign", action="append", default=[], help="NAME=FOLDER of a campaign's run.json")
    p.add_argument("--throughput")
    p.add_argument("--kernels")
    args = p.parse_args(argv)
    campaigns = []
    for c in args.campaign:
        name, sep, folder = c.partition("=")
        if not sep or not name or not folder:
            p.error(f"--campaign takes NAME=FOLDER, not {c!r}")
        campaigns.append((name, folder))
    lines = ["== device check summary"]
    if args.steps:
        lines += steps_lines(args.steps)
    if args.tests:
        lines += tests_lines(args.tests)
    if campaigns:
        lines.append("campaigns:")
        for name, folder in campaigns:
            lines += campaign_line(name, folder)
    if args.throughput:
        lines += throughput_lines(args.throughput)
    if args.kernels:
        lines += kernels_lines(args.kernels)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
