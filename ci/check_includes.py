#!/usr/bin/env python3
"""The include rule of every source folder, checked.

Usage: python3 ci/check_includes.py [REPO_ROOT]      (default: the repository that holds this script)

Every #include "..." of every C++/CUDA source under REPO_ROOT must name a folder (or a single file) that the
including file's folder may use, per RULES below; torch headers (<torch/...>, <ATen/...>, <c10/...>) only in
TORCH_FOLDERS. A source file in a folder RULES does not know is an error (a renamed folder must be renamed here
too), and so is a folder of RULES that exists but gave no file to check. Exit 1 on any error, 0 otherwise.
ARCHITECTURE.md states the same rules in prose.
"""
import os
import re
import sys

# ---- The rules: folder -> what its sources may #include "...". ---------------------------------------------
# Folders are repository-relative and exact: a subfolder is its own entry (a file in impl/foo/ is in no folder of
# this table, hence an error, until impl/foo is added). An allowed entry is a folder, a single file (a path with
# an extension: that file only), "*" (every folder of this table) or "!folder" (minus that one, after "*").
IMPL_CORE = ("impl", "impl/autograd", "impl/ops", "impl/kernels", "impl/cpu", "impl/cuda")  # the library under test
ORACLE_API = "oracle/torch_backend.h"  # the oracle's public header; the rest of oracle/ is private to it

RULES = {
    "impl":              IMPL_CORE,  # Tensor, Layout, Storage, dtypes, memory formats: knows no harness
    "impl/autograd":     IMPL_CORE,  # meta, nodes, saved variables, engine, grad mode
    "impl/ops":          IMPL_CORE,  # the ops of impl/ops.h and their derivatives
    "impl/kernels":      ("impl/kernels", "impl/reduced_float.h", "impl/scalar_type.h"),  # both devices: C++17, nvcc too
    "impl/cpu":          IMPL_CORE,  # the CPU executor of impl/kernels
    "impl/cuda":         IMPL_CORE,  # CUDA storage, transfers and the launcher of impl/kernels
    "impl_backend":      IMPL_CORE + ("impl_backend", "judge", "program"),  # impl as a judge::Backend
    "program":           ("program",),  # the program language: op and attribute tables, programs, JSON
    "judge":             ("judge", "program"),  # run loop, traces, compare, signatures, coverage: no backend
    "generators":        ("generators", "generators/recipes", "program"),  # RapidCheck generators, shrinking
    "generators/recipes": ("generators/recipes", "generators", "program"),  # one file per recipe
    "files":             ("files", "program/splitmix.h"),  # reading and writing files safely: regular files only
    "reports":           ("reports", "files", "judge", "program"),  # findings, run summary, repros, HTML report
    "oracle":            ("oracle", "judge", "program"),  # the LibTorch Backend: the only torch includer
    "protocol":          ("protocol", "files", "reports", "judge", "program"),  # backends in other processes, and serving one
    "properties":        ("properties", "cli/claims", "judge", "program", "generators", "reports",
                          "impl_backend", ORACLE_API),  # named properties on both backends, differential suite
    "engine":            ("engine", "files", "judge", "program", "generators", "reports", "protocol",
                          "impl_backend", ORACLE_API),  # campaign engine: evaluation, isolation, shrinking driver, campaign loop
    "cli/claims":        ("cli/claims", "judge", "program"),  # seed claims, run through judge/backend.h
    "cli":               ("*", "!tests", "!bench"),  # the parity command: anything but tests and bench
    "bench":             ("bench", "files", "judge", "program", "generators", "reports", "engine", "impl_backend",
                          ORACLE_API),  # impl vs LibTorch per step; campaign throughput
    "tests":             ("*",),  # unit and tooling tests: anything
}
TORCH_FOLDERS = ("oracle",)
TESTS = "tests"  # its subfolders (tests/impl, tests/judge, ...) mirror the source folders and share its rule  # the only folders whose sources may include torch headers
TORCH_PREFIXES = ("torch/", "ATen/", "c10/", "caffe2/")

SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".inc", ".def", ".h.in")
# Not sources: build trees and run outputs (.gitignore's /build*/, /out*/, /runs/), hidden folders.
TOP_LEVEL_SKIP = re.compile(r"^(build.*|out.*|runs|__pycache__|node_modules)$")
# ------------------------------------------------------------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def expand(folder):
    """The allowed entries of a folder, "*" and "!x" resolved."""
    allowed = []
    for entry in RULES[folder]:
        if entry == "*":
            allowed += [f for f in RULES if f not in allowed]
        elif entry.startswith("!"):
            allowed = [f for f in allowed if f != entry[1:]]
        elif entry not in allowed:
            allowed.append(entry)
    return allowed


def is_file_entry(entry):
    return os.path.splitext(entry)[1] != ""


def directives(text):
    """(line number, '<' or '"', target) of each #include, skipping those inside comments and string literals
    (raw strings included: reports/repro.cpp prints a repro whose text holds #include <torch/torch.h>)."""
    out = []
    state, raw_end = None, None  # None, "block" (/* */) or "raw" (R"delim( ... )delim")
    for number, line in enumerate(text.splitlines(), 1):
        if state is None:
            m = INCLUDE.match(line)
            if m:
                out.append((number, m.group(1), m.group(2).strip()))
                continue
        i, n = 0, len(line)
        while i < n:
            if state == "block":
                end = line.find("*/", i)
                if end < 0:
                    break
                state, i = None, end + 2
            elif state == "raw":
                end = line.find(raw_end, i)
                if end < 0:
                    break
                state, i = None, end + len(raw_end)
            else:
                c, nxt = line[i], line[i + 1:i + 2]
                if c == "/" and nxt == "/":
                    break
                if c == "/" and nxt == "*":
                    state, i = "block", i + 2
                elif c == "R" and nxt == '"' and re.search(r"(^|[^A-Za-z0-9_])(u8|[uUL])?$", line[:i]):
                    paren = line.find("(", i + 2)
                    if paren < 0:
                        break
                    state, raw_end, i = "raw", ")" + line[i + 2:paren] + '"', paren + 1
                elif c in "\"'" and not (c == "'" and i > 0 and line[i - 1].isdigit()):  # 1'000 is a number
                    i += 1
                    while i < n and line[i] != c:
                        i += 2 if line[i] == "\\" else 1
                    i += 1
                else:
                    i += 1
    return out


def find_sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".")
                             and not (rel_dir == "" and TOP_LEVEL_SKIP.match(d))
                             and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt")))
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield rel_dir, (rel_dir + "/" + name) if rel_dir else name


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    if not os.path.isdir(root):
        print(f"check_includes: {root} is not a folder", file=sys.stderr)
        return 2
    for folder in RULES:  # the table itself must be consistent
        for entry in RULES[folder]:
            target = entry.lstrip("!")
            if target != "*" and not is_file_entry(target) and target not in RULES:
                print(f"check_includes: RULES[{folder!r}] names {target!r}, which is not a folder of RULES")
                return 2

    errors = []  # (folder or None, message)
    files = {f: 0 for f in RULES}
    includes = {f: 0 for f in RULES}
    for folder, path in find_sources(root):
        # tests/ mirrors the source folders: each of its subfolders follows the rule of tests/ itself.
        if folder.startswith(TESTS + "/"):
            folder = TESTS
        if folder not in RULES:
            errors.append((None, f"{path}: folder {folder or '(repository root)'} is not in the include table "
                                 f"of ci/check_includes.py (a new or renamed folder? add its rule)"))
            continue
        files[folder] += 1
        allowed = expand(folder)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            found = directives(f.read())
        for line, kind, target in found:
            includes[folder] += 1
            if kind == "<":
                if target.startswith(TORCH_PREFIXES) and folder not in TORCH_FOLDERS:
                    errors.append((folder, f"{path}:{line}: folder {folder} may not include <{target}> "
                                           f"(torch headers only in: {', '.join(TORCH_FOLDERS)})"))
                continue
            # "x.h" beside the including file, else repository-relative (generated headers do not exist here).
            beside = os.path.normpath(os.path.join(folder, target)).replace(os.sep, "/")
            resolved = beside if os.path.isfile(os.path.join(root, beside)) else os.path.normpath(target)
            resolved = resolved.replace(os.sep, "/")
            target_folder = os.path.dirname(resolved)
            if target_folder.startswith(TESTS + "/"):
                target_folder = TESTS
            if target.startswith(TORCH_PREFIXES) and folder not in TORCH_FOLDERS:
                errors.append((folder, f"{path}:{line}: folder {folder} may not include \"{target}\" "
                                       f"(torch headers only in: {', '.join(TORCH_FOLDERS)})"))
            elif target_folder not in allowed and resolved not in allowed:
                why = "" if target_folder in RULES else f" (its folder {target_folder or '(root)'} is not in the table)"
                errors.append((folder, f"{path}:{line}: folder {folder} may not include {target}{why} "
                                       f"(allowed: {', '.join(allowed)})"))

    width = max(len(f) for f in RULES)
    for folder in RULES:
        exists = os.path.isdir(os.path.join(root, folder))
        bad = sum(1 for f, _ in errors if f == folder)
        if not exists:
            print(f"{folder:<{width}}  absent (not checked)")
        elif files[folder] == 0:
            print(f"{folder:<{width}}  FAIL  exists but has no source file to check")
            errors.append((folder, f"{folder}/: folder exists but no source file was checked (moved, or renamed?)"))
        elif bad:
            print(f"{folder:<{width}}  FAIL  {bad} violation(s) in {includes[folder]} includes of "
                  f"{files[folder]} files")
        else:
            print(f"{folder:<{width}}  OK  {includes[folder]} includes checked in {files[folder]} files")
    for _, message in errors:
        print(message)
    print(f"check_includes: {len(errors)} error(s)" if errors else "check_includes: layering OK")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
