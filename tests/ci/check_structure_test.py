#!/usr/bin/env python3
"""ci/check_structure.py on small trees made here: each rule must catch what it is for and pass what it allows.

Usage: python3 tests/ci/check_structure_test.py CHECK_STRUCTURE_PY
"""
import os
import subprocess
import sys
import tempfile
import textwrap

CHECK = os.path.abspath(sys.argv[1])
failures = []

CMAKE = textwrap.dedent("""\
    file(GLOB PARITY_PROGRAM_SRC CONFIGURE_DEPENDS program/*.cpp)
    add_library(parity_program STATIC ${PARITY_PROGRAM_SRC})
    file(GLOB PARITY_GEN_SRC CONFIGURE_DEPENDS generators/*.cpp)
    add_library(parity_generators STATIC ${PARITY_GEN_SRC})
    target_link_libraries(parity_generators PUBLIC parity_program)
    add_library(parity_reports STATIC reports/finding.cpp)
    target_link_libraries(parity_reports PUBLIC parity_program {extra})  # a comment: parity_generators
    """)


def function(name, lines, body_line="  x += 1;"):
    return f"int {name}(int x) {{\n" + "\n".join([body_line] * (lines - 2)) + "\n}\n"


def tree(files, extra_link=""):
    root = tempfile.mkdtemp(prefix="check-structure-")
    files = dict(files)
    files.setdefault("CMakeLists.txt", CMAKE.replace("{extra}", extra_link))
    files.setdefault("program/a.cpp", "int a() { return 1; }\n")
    files.setdefault("generators/g.cpp", "int g() { return 1; }\n")
    files.setdefault("reports/finding.cpp", "int f() { return 1; }\n")
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    return root


def run(root):
    r = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def expect(name, root, rc, *needles):
    got_rc, out = run(root)
    missing = [n for n in needles if n not in out]
    if got_rc != rc or missing:
        failures.append(f"{name}: rc {got_rc} (wanted {rc}), missing {missing}\n{out}")


expect("a tree within the rules passes", tree({}), 0, "check_structure: OK")
expect("a link the include rule forbids", tree({}, extra_link="parity_generators"), 1,
       "parity_reports (reports/) links parity_generators")
expect("a long function", tree({"program/a.cpp": function("long_one", 101)}), 1,
       "program/a.cpp:long_one: function of 101 lines")
expect("a function at the budget", tree({"program/a.cpp": function("just_fits", 100)}), 0)
expect("a class member is named by its class",
       tree({"program/a.cpp": "struct Holder {\n" + function("member", 120) + "};\n"}), 1,
       "program/a.cpp:Holder::member: function of 120 lines")
expect("a switch table is data", tree({"program/a.cpp": function("table", 150, "  case 1: return 2;")}), 0)
expect("braces in strings and comments do not count",
       tree({"program/a.cpp": 'int s() {\n  const char* t = "{{{";  // }}\n  return 0;\n}\n' + function("f", 99)}), 0)
expect("a long file", tree({"program/a.cpp": "int x;\n" * 801}), 1, "program/a.cpp: file of 801 lines")
expect("a listed offender passes",
       tree({"program/a.cpp": function("long_one", 120), "ci/size_budget.txt": "program/a.cpp:long_one 120\n"}), 0)
expect("a listed offender may not grow",
       tree({"program/a.cpp": function("long_one", 121), "ci/size_budget.txt": "program/a.cpp:long_one 120\n"}), 1,
       "longer than the 120")
expect("a listed entry within the budget must go",
       tree({"program/a.cpp": function("long_one", 50), "ci/size_budget.txt": "program/a.cpp:long_one 120\n"}), 1,
       "is within the budget now (or gone): remove its line")
expect("a long Python function",
       tree({"ci/tool.py": "def f():\n" + "    x = 1\n" * 101}), 1, "ci/tool.py:f: function of 102 lines")
expect("a map of short paragraphs",
       tree({"ARCHITECTURE.md": "# map\n\n" + "prose\n" * 12 + "\n```text\n" + "code\n" * 40 + "```\n| a |\n" * 3}),
       0, "paragraphs of ARCHITECTURE.md checked")
expect("a map with a long paragraph", tree({"ARCHITECTURE.md": "# map\n\nshort\n\n" + "prose\n" * 13}), 1,
       "ARCHITECTURE.md:5: a paragraph of 13 lines")

for f in failures:
    print("FAIL", f)
print(f"check_structure_test: {len(failures)} failure(s)" if failures else "check_structure_test: OK")
sys.exit(1 if failures else 0)
