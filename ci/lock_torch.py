#!/usr/bin/env python3
"""Resolves a PyPI oracle's pins into the lock file that ci/setup.sh installs from.

Usage: python3 ci/lock_torch.py VERSION      (e.g. 2.15: reads ci/torch-2.15.txt, writes ci/torch-2.15.lock)

ci/torch-VERSION.txt names what parity wants (torch and numpy, pinned). This asks pip, once, for the whole
closure those pins resolve to on this machine's Python, and writes every package as `name==version
--hash=sha256:...`. The lock is what makes the install fit a small disk: ci/setup.sh installs it one package at a
time, so that pip holds one download at a time rather than all of them (3.5 GB) until the end, and it leaves out
the packages in UNUSED, which neither the C++ oracle nor the Python repros load. Run this after editing the .txt
(ci/setup.sh refuses a lock whose pins disagree with it) and commit both files.
"""
import json
import os
import subprocess
import sys
import tempfile

# Packages torch depends on that parity never loads, each with its reason. Left out of the lock, not installed.
UNUSED = {
    # torch.compile's kernel compiler, about 1 GB unpacked; `import torch` only probes for it.
    "triton": "used only by torch.compile",
}


def read_pins(path):
    pins = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, version = line.partition("==")
                if not version:
                    sys.exit(f"lock_torch: {path}: '{line}' is not pinned as name==version")
                pins[name.strip().lower()] = version.strip()
    return pins


def resolve(requirements):
    """pip's resolution of the requirements file, as (name, version, sha256) in pip's install order."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--dry-run", "--ignore-installed", "--report", report, "-r", requirements], check=True)
        with open(report, encoding="utf-8") as f:
            installs = json.load(f)["install"]
    resolved = []
    for item in installs:
        hashes = item["download_info"].get("archive_info", {}).get("hashes", {})
        if "sha256" not in hashes:
            sys.exit(f"lock_torch: pip gave no sha256 for {item['metadata']['name']}; a lock needs one per package")
        resolved.append((item["metadata"]["name"], item["metadata"]["version"], hashes["sha256"]))
    return resolved


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    requirements = os.path.join(root, "ci", f"torch-{sys.argv[1]}.txt")
    if not os.path.isfile(requirements):
        sys.exit(f"lock_torch: no {requirements}: write the oracle's pins there first")
    read_pins(requirements)  # refuses an unpinned line before asking pip
    resolved = resolve(requirements)
    lock = requirements[:-len(".txt")] + ".lock"
    with open(lock, "w", encoding="utf-8") as f:
        f.write(f"# Made by `python3 ci/lock_torch.py {sys.argv[1]}` from ci/torch-{sys.argv[1]}.txt with Python "
                f"{sys.version_info.major}.{sys.version_info.minor}; do not edit.\n")
        for name, reason in sorted(UNUSED.items()):
            f.write(f"# Left out: {name}, {reason}.\n")
        for name, version, sha256 in resolved:
            if name.lower() not in UNUSED:
                f.write(f"{name}=={version} --hash=sha256:{sha256}\n")
    print(f"lock_torch: wrote {os.path.relpath(lock, root)} ({len(resolved)} packages resolved)")


if __name__ == "__main__":
    main()
