#!/usr/bin/env python3
"""Structure checks that the include rule alone does not make: the link graph, a size budget and the map's form.

Usage: python3 ci/check_structure.py [REPO_ROOT]      (default: the repository that holds this script)

1. Links follow the include rule. Every target_link_libraries() of CMakeLists.txt between two of parity's own
   targets must be allowed by ci/check_includes.py's RULES: the linking target's folders may include the linked
   target's folders. A link the rule does not allow is a dependency the code does not have (or should not).
2. A size budget. A source file over MAX_FILE_LINES lines, or a function over MAX_FUNCTION_LINES lines, fails,
   unless ci/size_budget.txt lists it. The list only shrinks: an entry that is no longer over the budget, or that
   has grown past the size the list records, fails too, so that a fix removes its line and nothing listed gets
   longer. A table is not a function: a body made mostly of `case` labels (a switch from an enum to its facts)
   is data, as are .def, .json and .in files, which are not checked.
3. The map stays a map: no paragraph of ARCHITECTURE.md's prose (consecutive non-blank lines outside code blocks
   and tables) is longer than MAX_PARAGRAPH_LINES lines.
Exit 1 on any error, 0 otherwise.
"""
import ast
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_includes  # noqa: E402  (the include rule: one table, read from there)

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 100
# A function whose body lines are at least this share of `case` labels is a table (a switch over an enum).
TABLE_CASE_SHARE = 0.5
BUDGET_FILE = "ci/size_budget.txt"
MAP_FILE = "ARCHITECTURE.md"
MAX_PARAGRAPH_LINES = 12
CODE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".inc", ".py")


# ---- 1. the link graph ---------------------------------------------------------------------------------------

def strip_cmake_comments(text):
    return "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in text.splitlines())


def cmake_commands(text, name):
    """The argument lists of every `name(...)` call (balanced parentheses, comments stripped)."""
    out = []
    for m in re.finditer(r"\b" + name + r"\s*\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        out.append(text[m.end():i - 1].split())
    return out


def target_folders(text):
    """parity's targets -> the set of source folders their sources lie in (from add_library/add_executable, the
    file(GLOB) variables they name, and target_sources)."""
    globs = {}
    for args in cmake_commands(text, "file"):
        if args and args[0] == "GLOB":
            patterns = [a for a in args[2:] if a != "CONFIGURE_DEPENDS"]
            globs[args[1]] = {os.path.dirname(p) for p in patterns}
    folders = {}

    def add(target, items):
        for item in items:
            var = re.fullmatch(r"\$\{(\w+)\}", item)
            if var and var.group(1) in globs:
                folders.setdefault(target, set()).update(globs[var.group(1)])
            elif re.search(r"\.(cpp|cu|cc)$", item) and not item.startswith("$"):
                folders.setdefault(target, set()).add(os.path.dirname(item))

    for kind in ("add_library", "add_executable"):
        for args in cmake_commands(text, kind):
            if args and args[0].startswith("parity"):
                folders.setdefault(args[0], set())
                add(args[0], args[1:])
    for args in cmake_commands(text, "target_sources"):
        if args and args[0] in folders:
            add(args[0], args[1:])
    return folders


def check_links(root, errors):
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        text = strip_cmake_comments(f.read())
    folders = target_folders(text)
    links = 0
    for args in cmake_commands(text, "target_link_libraries"):
        if not args or args[0] not in folders:
            continue
        source = args[0]
        for linked in args[1:]:
            if linked not in folders or linked == source:
                continue
            links += 1
            for folder in sorted(folders[source]):
                if folder not in check_includes.RULES:
                    errors.append(f"CMakeLists.txt: {source} has sources in {folder}/, which the include rule "
                                  f"(ci/check_includes.py) does not know")
                    continue
                allowed = check_includes.expand(folder)
                # A file entry (oracle/torch_backend.h) allows linking the target of its folder.
                reachable = {os.path.dirname(a) if check_includes.is_file_entry(a) else a for a in allowed}
                if not any(t in reachable for t in folders[linked]):
                    errors.append(f"CMakeLists.txt: {source} ({folder}/) links {linked} "
                                  f"({', '.join(sorted(f + '/' for f in folders[linked]))}), which {folder}/ may "
                                  f"not include (allowed: {', '.join(allowed)})")
    return links


# ---- 2. the size budget ----------------------------------------------------------------------------------------

def blank_out_comments_and_strings(text):
    """The C++ text with comments, string and character literals (raw strings included) replaced by spaces,
    newlines kept, so that braces and line numbers are the code's own."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c, nxt = text[i], text[i + 1:i + 2]
        if c == "/" and nxt == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif c == "/" and nxt == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c == "R" and nxt == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            paren = text.find("(", i + 2)
            delim = ")" + text[i + 2:paren] + '"'
            end = text.find(delim, paren)
            end = n if end < 0 else end + len(delim)
            blank(i, end)
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a number
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):  # a preprocessor line (with continuations)
            j = i
            while True:
                end = text.find("\n", j)
                if end < 0 or text[end - 1] != "\\":
                    break
                j = end + 1
            end = n if end < 0 else end
            blank(i, end)
            i = end
        else:
            i += 1
    return "".join(out)


CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*$")
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^;(){}]*$|\bextern\s*$")
# What may stand between a function's parameter list and its body.
AFTER_PARAMS = re.compile(r"\)\s*(const|override|final|noexcept(\([^()]*\))?|mutable|&|&&|\s|->\s*[\w:<>,*&\s]+)*"
                          r"(:\s*[^{};]*)?$", re.S)


def cpp_functions(text):
    """(name, first line, last line, body lines) of each function defined at namespace or class scope."""
    code = blank_out_comments_and_strings(text)
    functions = []
    stack = []  # per open brace: "scope" (namespace, class, extern), "function", or "other"
    start = 0  # where the text before the next brace begins (after the last ; { or })
    for i, c in enumerate(code):
        if c == ";":
            start = i + 1
        elif c == "{":
            head = code[start:i]
            at_scope = all(kind == "scope" for kind, _ in stack)
            if at_scope and SCOPE.search(head.strip()):
                cls = re.search(r"\b(?:class|struct|union)\s+(\w+)", head)
                stack.append(("scope", cls.group(1) if cls else None))
            elif at_scope and AFTER_PARAMS.search(head.rstrip()) and not CONTROL.search(head.split("(")[0]):
                call = re.search(r"([~\w:]+)\s*\(([^()]*)", head)
                name = call.group(1) if call else "?"
                if call and name.isupper():  # a test macro: TEST(Suite, Name) is named by its arguments
                    name += "(" + ",".join(a.strip() for a in call.group(2).split(",")) + ")"
                classes = [scope for kind, scope in stack if scope]
                if classes and "::" not in name:
                    name = classes[-1] + "::" + name
                first = code.count("\n", 0, start + len(head) - len(head.lstrip())) + 1
                stack.append(("function", (name, first, i)))
            else:
                stack.append(("other", None))
            start = i + 1
        elif c == "}":
            if stack:
                kind, info = stack.pop()
                if kind == "function":
                    name, first, body_start = info
                    last = code.count("\n", 0, i) + 1
                    body = [line.strip() for line in text[body_start:i].splitlines() if line.strip()]
                    functions.append((name, first, last, body))
            start = i + 1
    return functions


def is_table(body):
    cases = sum(1 for line in body if re.match(r"(case\b|default\s*:)", line))
    return body and cases / len(body) >= TABLE_CASE_SHARE


def python_functions(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [(node.name, node.lineno, node.end_lineno, None) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def tracked_sources(root):
    for folder, path in check_includes.find_sources(root):
        if path.endswith(CODE_SUFFIXES):
            yield path
    for dirpath, dirnames, filenames in os.walk(root):  # Python lives outside the C++ folders too (ci/, tests/)
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and not (rel == "." and check_includes.TOP_LEVEL_SKIP.match(d))
                             and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt")))
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield os.path.normpath(os.path.join(rel, name)).replace(os.sep, "/")


def offenders(root):
    """{key: size} of everything over the budget: "FILE" for a file, "FILE:FUNCTION" for a function."""
    found = {}
    for path in sorted(set(tracked_sources(root))):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            found[path] = lines
        functions = python_functions(text) if path.endswith(".py") else cpp_functions(text)
        for name, first, last, body in functions:
            length = last - first + 1
            if length > MAX_FUNCTION_LINES and not (body is not None and is_table(body)):
                key = f"{path}:{name}"
                found[key] = max(found.get(key, 0), length)
    return found


def read_budget(root, errors):
    budget = {}
    path = os.path.join(root, BUDGET_FILE)
    if not os.path.exists(path):
        return budget
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(\S+)\s+(\d+)", line)
            if not m:
                errors.append(f"{BUDGET_FILE}:{number}: expected 'FILE[:FUNCTION] LINES', got {line!r}")
                continue
            budget[m.group(1)] = int(m.group(2))
    return budget


def check_sizes(root, errors):
    found = offenders(root)
    budget = read_budget(root, errors)
    for key, size in sorted(found.items()):
        limit = MAX_FUNCTION_LINES if ":" in key else MAX_FILE_LINES
        what = "function" if ":" in key else "file"
        if key not in budget:
            errors.append(f"{key}: {what} of {size} lines, over the budget of {limit} (split it; {BUDGET_FILE} "
                          f"lists only what was over it before the budget existed)")
        elif size > budget[key]:
            errors.append(f"{key}: {what} of {size} lines, longer than the {budget[key]} {BUDGET_FILE} allows it "
                          f"(the list only shrinks)")
    for key in sorted(set(budget) - set(found)):
        errors.append(f"{BUDGET_FILE}: {key} is within the budget now (or gone): remove its line")
    return found, budget


# ---- 3. the map ------------------------------------------------------------------------------------------------

def check_map(root, errors):
    """Every prose paragraph of MAP_FILE within MAX_PARAGRAPH_LINES; the number of paragraphs checked."""
    path = os.path.join(root, MAP_FILE)
    if not os.path.exists(path):
        return 0
    paragraphs, start, length, in_code = 0, 0, 0, False

    def close():
        nonlocal paragraphs, length
        if length:
            paragraphs += 1
            if length > MAX_PARAGRAPH_LINES:
                errors.append(f"{MAP_FILE}:{start}: a paragraph of {length} lines, longer than the "
                              f"{MAX_PARAGRAPH_LINES} a map's paragraph may take (split it, or move the detail into "
                              f"the header it describes)")
        length = 0

    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                close()
                in_code = not in_code
            elif in_code or not line.strip() or line.startswith("|") or line.startswith("#"):
                close()
            else:
                start = number if not length else start
                length += 1
    close()
    return paragraphs


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    if "--list" in argv:  # what is over the budget now, in the budget file's format
        for key, size in sorted(offenders(root).items()):
            print(f"{key} {size}")
        return 0
    errors = []
    links = check_links(root, errors)
    found, budget = check_sizes(root, errors)
    paragraphs = check_map(root, errors)
    print(f"check_structure: {links} links between parity's targets checked against the include rule")
    print(f"check_structure: {len(found)} files and functions over the budget, {len(budget)} allowed by "
          f"{BUDGET_FILE}")
    print(f"check_structure: {paragraphs} paragraphs of {MAP_FILE} checked against {MAX_PARAGRAPH_LINES} lines")
    for message in errors:
        print(message)
    print(f"check_structure: {len(errors)} error(s)" if errors else "check_structure: OK")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
