#!/usr/bin/env python3
"""A long campaign per oracle, sampled each minute: does parity hold up over hours?

usage: soak.py --minutes M --out DIR --campaign ORACLE=PARITY_BINARY [--campaign ...] [--jobs J] [--sample-s S]

Each campaign (`parity fuzz --seconds M*60`) runs side by side with the others, each with --jobs J (default: the
cores shared out). Every --sample-s seconds (60) the sampler reads, per campaign:
  rss_mib      the resident memory of the campaign's process and its workers together (/proc/PID/status VmRSS);
  fds          open file descriptors of the campaign's process and its workers (/proc/PID/fd);
  workers      worker processes alive, and restarts: worker processes first seen since the last sample, beyond the
               first sample's (a worker is replaced after a crash, a timeout or an exhausted memory limit);
  cases_per_s  cases judged since the last sample (journal.json's summary.cases), over the seconds between.
It writes DIR/soak.json (every sample and the verdict) and DIR/soak.svg (a chart per measure), and fails (exit 1)
when, between the first and the last WINDOW minutes (10, or a third of a short run), a campaign's memory or
descriptors grew (median RSS up by more than RSS_GROWTH and RSS_SLACK_MIB, median descriptors up at all) or its
throughput fell by more than THROUGHPUT_FALL (median cases/s), or when a campaign did not end as asked.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

RSS_GROWTH = 0.10       # a campaign's memory may wander this much between windows (case sizes vary)...
RSS_SLACK_MIB = 16      # ... and this much more, for a small process
THROUGHPUT_FALL = 0.20  # the bound: throughput may not fall by more than this
WINDOW_MIN = 10


def children(pid):
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out = []
    for t in tasks:
        try:
            out += [int(c) for c in pathlib.Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
        except OSError:
            pass
    return out


def tree(pid):
    """The campaign's process and every descendant (workers, and what they start)."""
    seen, unvisited = [], [pid]
    while unvisited:
        p = unvisited.pop()
        seen.append(p)
        unvisited += children(p)
    return seen


def rss_kib(pid):
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def judged_cases(out):
    try:
        return json.loads((out / "journal.json").read_text())["summary"]["cases"]
    except (OSError, ValueError, KeyError):
        return None


class Campaign:
    def __init__(self, oracle, binary, out, seconds, jobs):
        self.oracle, self.out = oracle, out
        cmd = [binary, "fuzz", "--seconds", str(seconds), "--jobs", str(jobs), "--out", str(out), "--overwrite"]
        self.log = open(out.parent / f"{out.name}.log", "w")
        self.process = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        self.samples, self.known_workers, self.last = [], None, (time.time(), 0)

    def sample(self, minute):
        pid = self.process.pid
        procs = tree(pid)
        workers = set(procs) - {pid}
        restarts = 0 if self.known_workers is None else len(workers - self.known_workers)
        self.known_workers = workers if self.known_workers is None else self.known_workers | workers
        now, cases = time.time(), judged_cases(self.out)
        rate = None
        if cases is not None:
            rate = (cases - self.last[1]) / (now - self.last[0])
            self.last = (now, cases)
        self.samples.append({"minute": minute, "rss_mib": sum(rss_kib(p) for p in procs) / 1024,
                             "fds": sum(fd_count(p) for p in procs), "workers": len(workers),
                             "restarts": restarts, "cases": cases, "cases_per_s": rate})

    def verdict(self, window):
        s = [x for x in self.samples if x["cases_per_s"] is not None]
        problems = []
        if len(s) < 2 * window:
            return [f"{len(s)} samples, fewer than two windows of {window}"]
        first, last = s[:window], s[-window:]
        med = lambda xs, k: statistics.median(x[k] for x in xs)
        if med(last, "rss_mib") > med(first, "rss_mib") * (1 + RSS_GROWTH) + RSS_SLACK_MIB:
            problems.append(f"memory grew: median {med(first, 'rss_mib'):.0f} MiB in the first {window} samples, "
                            f"{med(last, 'rss_mib'):.0f} MiB in the last")
        # Medians: a sample may catch a descriptor open for a moment (a journal's temporary file, a new worker's
        # socket), which is no leak.
        if med(last, "fds") > med(first, "fds"):
            problems.append(f"descriptors grew: median {med(first, 'fds'):g} in the first {window} samples, "
                            f"{med(last, 'fds'):g} in the last")
        if med(last, "cases_per_s") < med(first, "cases_per_s") * (1 - THROUGHPUT_FALL):
            problems.append(f"throughput fell: median {med(first, 'cases_per_s'):.0f} cases/s in the first {window} "
                            f"samples, {med(last, 'cases_per_s'):.0f} in the last")
        return problems


def chart(campaigns, path):
    """One panel per measure, a line per campaign: a self-contained SVG any browser opens."""
    measures = [("rss_mib", "resident memory (MiB)"), ("fds", "open descriptors"), ("cases_per_s", "cases/s"),
                ("restarts", "worker restarts per sample")]
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    w, h, pad = 640, 180, 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{(h + pad) * len(measures) + pad}" '
             f'font-family="sans-serif" font-size="12">']
    for i, (key, title) in enumerate(measures):
        top = pad + i * (h + pad)
        values = [x[key] for c in campaigns for x in c.samples if x[key] is not None]
        hi = max(values + [1]) * 1.1
        minutes = max([x["minute"] for c in campaigns for x in c.samples] + [1])
        parts.append(f'<text x="{pad}" y="{top - 8}">{title}, 0 to {hi:.0f}, over {minutes} minutes</text>')
        parts.append(f'<rect x="{pad}" y="{top}" width="{w - 2 * pad}" height="{h}" fill="none" stroke="#999"/>')
        for colour, c in zip(colours, campaigns):
            pts = [(pad + (w - 2 * pad) * x["minute"] / minutes, top + h - h * x[key] / hi)
                   for x in c.samples if x[key] is not None]
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="'
                         + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
            if i == 0:
                parts.append(f'<text x="{w - pad - 150}" y="{top + 16 + 14 * campaigns.index(c)}" fill="{colour}">'
                             f'LibTorch {c.oracle}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--campaign", action="append", required=True, help="ORACLE=PARITY_BINARY")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--sample-s", type=float, default=60)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    jobs = a.jobs or max(1, (os.cpu_count() or 1) // len(a.campaign))
    seconds = int(a.minutes * 60)
    campaigns = [Campaign(o, b, a.out / f"campaign-{o}", seconds, jobs)
                 for o, b in (c.split("=", 1) for c in a.campaign)]
    started, minute = time.time(), 0
    print(f"soak: {len(campaigns)} campaigns of {a.minutes:g} minutes, {jobs} jobs each, sampled every "
          f"{a.sample_s:g} s, into {a.out}", flush=True)
    while any(c.process.poll() is None for c in campaigns):
        time.sleep(max(0.0, started + (minute + 1) * a.sample_s - time.time()))
        minute += 1
        sampled = [c for c in campaigns if c.process.poll() is None]
        for c in sampled:
            c.sample(minute * a.sample_s / 60)
        if sampled:
            print(f"soak: minute {minute * a.sample_s / 60:g}: " + "; ".join(
                f"{c.oracle}: {c.samples[-1]['rss_mib']:.0f} MiB, {c.samples[-1]['fds']} fds, "
                f"{(c.samples[-1]['cases_per_s'] or 0):.0f} cases/s" for c in sampled), flush=True)
    window = max(1, min(WINDOW_MIN, int(len(campaigns[0].samples) / 3)))
    result = {"minutes": a.minutes, "sample_s": a.sample_s, "jobs": jobs, "window_samples": window, "campaigns": {}}
    failed = False
    for c in campaigns:
        problems = c.verdict(window)
        try:
            run = json.loads((c.out / "run.json").read_text())
        except (OSError, ValueError):
            run = {}
        if c.process.returncode not in (0, 1) or run.get("interrupted", True):
            problems.append(f"the campaign exited {c.process.returncode} (see {c.out}.log)")
        result["campaigns"][c.oracle] = {"samples": c.samples, "problems": problems, "cases": run.get("cases"),
                                         "seconds": run.get("seconds"), "exit": c.process.returncode,
                                         "unexpected_findings": run.get("unexpected_findings")}
        print(f"soak: LibTorch {c.oracle}: {run.get('cases')} cases in {run.get('seconds', 0):.0f} s, "
              f"{run.get('unexpected_findings')} unexpected findings: "
              + ("; ".join(problems) if problems else "flat memory, flat descriptors, steady throughput"))
        failed |= bool(problems)
    (a.out / "soak.json").write_text(json.dumps(result, indent=1) + "\n")
    chart(campaigns, a.out / "soak.svg")
    print(f"soak: {'FAILED' if failed else 'ok'}; samples in {a.out / 'soak.json'}, chart {a.out / 'soak.svg'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
