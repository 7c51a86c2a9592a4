#!/usr/bin/env python3
"""The HTML report in a real browser (headless Chromium).

A campaign with planted faults (PARITY_PLANT) gives real findings in three groups, one of them expected
(a --known ledger). One finding is then made hostile: markup in an error message, a known-divergence reason,
a grad_fn and the divergence text; another carries markup in its signature and kind, which are typed and must
be refused (left out, and said so); and the file gets a torn last line. The page must load with no console error (a CSP violation is one), run its own script (it
marks <html data-ready>), show every group with its first difference marked, apply a filter from the URL
fragment (ignoring a malformed one), and keep every hostile string as text: no <img>, no event handler, the
string readable verbatim.

The console check is itself checked: the same page with its script altered by one character must be refused
by the CSP, and the refusal must be seen.

usage: report_browser_test.py PARITY_BINARY OUT_DIR   (OUT_DIR keeps report.html and report.png to look at)
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

HOSTILE = ('</script><img src=x onerror="document.documentElement.setAttribute(\'data-pwned\',\'1\')">'
           '<script>document.documentElement.setAttribute(\'data-pwned\',\'2\')</script>\'"&amp;')
PLANTED_ENTRY = {
    "signature": "neg:*",
    "reason": "Planted on purpose (PARITY_PLANT=neg=error): the expected group of this test. " + HOSTILE,
    "libtorch_min": "1.13.0", "libtorch_max": "99.0.0", "expires": "2099-01-01"}
# The project's own ledger comes too, so that a real divergence of the oracle the campaign happens to meet (which
# depends on the op table, not on this test) is expected, as in any campaign, and not taken for a planted one.
LEDGER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports", "known_divergences.json")

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what, flush=True)


def run(cmd, env=None, timeout=300):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


class Dom(html.parser.HTMLParser):
    """What the checks need of a dumped DOM: elements by tag with attributes and the section they are in."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []       # (tag, attrs, section id or None)
        self.section = None
        self.depth = 0
        self.section_depth = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "group" in a.get("class", "").split():
            self.section, self.section_depth = a.get("id"), self.depth
        self.elements.append((tag, a, self.section))
        if tag not in ("meta", "link", "br", "input", "col", "img"):
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in ("meta", "link", "br", "input", "col", "img"):
            return
        self.depth -= 1
        if tag == "section" and self.section is not None and self.depth == self.section_depth:
            self.section = None

    def handle_data(self, data):
        self.text.append(data)

    def find(self, tag=None, cls=None, section=None):
        return [(t, a, s) for t, a, s in self.elements
                if (tag is None or t == tag) and (cls is None or cls in a.get("class", "").split())
                and (section is None or s == section)]


def chromium(browser, tmp, url, *extra):
    """Runs headless Chromium on url in a profile of its own; returns (stdout, console lines that are errors).
    A hang is a failed check, not a traceback."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", *extra, url]
    try:
        p = run(cmd, timeout=120)
    except subprocess.TimeoutExpired:
        check(False, "chromium finished within 120 s: " + " ".join(cmd))
        return "", []
    console = [line for line in p.stderr.splitlines()
               if "CONSOLE" in line or "Refused to" in line or "Uncaught" in line]
    return p.stdout, console


def load(browser, tmp, url):
    """The page's DOM after its script ran, and its console errors."""
    dom_text, console = chromium(browser, tmp, url, "--dump-dom")
    dom = Dom()
    dom.feed(dom_text)
    return dom, console


def html_attrs(dom):
    root = dom.find("html")
    return root[0][1] if root else {}


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    parity, out_dir = sys.argv[1], sys.argv[2]
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("FAIL: chromium is not installed (Debian package `chromium`; ci/setup.sh installs it)")
        return 1
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="parity-report-")
    try:
        return test(parity, browser, out_dir, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_ledger(tmp):
    """The project's ledger plus the planted entry, as a file of tmp."""
    with open(LEDGER) as f:
        ledger = json.load(f)
    ledger["entries"].append(PLANTED_ENTRY)
    known = os.path.join(tmp, "known.json")
    with open(known, "w") as f:
        json.dump(ledger, f)
    return known


def expected_groups(sections):
    """The page's expected groups, checked: every neg group (the planted error's, as a status or as a category
    where LibTorch raises too, and the hostile copy), never mul or transpose."""
    expected = [a for _, a, _ in sections if a.get("data-expected") == "1"]
    planted = [a for a in expected if a.get("data-op") == "neg"]
    neg = [a for _, a, _ in sections if a.get("data-op") == "neg"]
    check(len(planted) >= 2 and len(planted) == len(neg),
          "every neg group, the planted one and its hostile copy among them, is expected (%d of %d)"
          % (len(planted), len(neg)))
    check(not [a for a in expected if a.get("data-op") in ("mul", "transpose")],
          "the planted mul and transpose groups are not expected")
    return expected


def test(parity, browser, out_dir, tmp):
    run_dir = os.path.join(tmp, "run")
    known = write_ledger(tmp)
    env = dict(os.environ, PARITY_PLANT="mul=values,neg=error,transpose=values")
    p = run([parity, "fuzz", "--cases", "300", "--seed", "5", "--known", known, "--out", run_dir], env=env)
    check(p.returncode == 1, "the planted campaign exits 1 (unexpected findings), got %d:\n%s" % (p.returncode, p.stderr[-2000:]))
    findings_path = os.path.join(run_dir, "findings.jsonl")
    with open(findings_path) as f:
        records = [json.loads(line) for line in f]
    neg = [r for r in records if r["signature"].startswith("neg:status")]
    values = [r for r in records if r["signature"] == "mul:values"]
    if not neg or not values:
        print("FAIL: the planted campaign recorded no neg:status or mul:values finding; signatures: %s"
              % sorted({r["signature"] for r in records}))
        return 1

    # The hostile finding: a copy of a neg:status one under another category, so it forms its own group (which
    # the ledger's neg:* still matches). Signatures and kinds are typed (judge/signature.h), so markup
    # can only reach the free-text fields.
    hostile = json.loads(json.dumps(neg[0]))
    hostile["signature"] = "neg:status:shape"
    hostile["divergence"]["impl"] = HOSTILE
    step = hostile["divergence"]["step"]
    hostile["impl_trace"]["steps"][step]["message"] = HOSTILE
    for s in hostile["oracle_trace"]["steps"]:
        for o in s["observed"]:
            o["grad_fn"] = HOSTILE
    records.append(hostile)
    # Markup in the typed fields: not a signature nor a kind parity wrote, so the line is refused.
    forged = json.loads(json.dumps(neg[0]))
    forged["signature"] = "neg:status:argument" + HOSTILE
    forged["divergence"]["kind"] = "status" + HOSTILE
    with open(findings_path, "w") as f:
        for r in records + [forged]:
            f.write(json.dumps(r) + "\n")
        f.write(json.dumps(values[0])[:200])  # a torn last line: the campaign killed mid-write
    groups = {r["signature"] for r in records}

    page = os.path.join(out_dir, "report.html")
    p = run([parity, "report", run_dir, "-o", page], env=env)
    check(p.returncode == 0, "parity report exits 0, got %d: %s" % (p.returncode, p.stderr))
    check("torn line" in p.stderr, "parity report warns about the torn last line: " + p.stderr)
    check("left out" in p.stderr and "signature" in p.stderr,
          "parity report leaves out the line with a forged signature, and says so: " + p.stderr)
    with open(page, encoding="utf-8") as f:
        source = f.read()
    check("<img" not in source.replace("&lt;img", ""), "no <img in the page source")

    url = "file://" + os.path.abspath(page)
    dom, console = load(browser, tmp, url)
    check(not console, "the page logs no console error or CSP refusal: %s" % console)
    check(html_attrs(dom).get("data-ready") == str(len(groups)),
          "the page's script ran under its CSP and saw %d groups (html data-ready=%s)"
          % (len(groups), html_attrs(dom).get("data-ready")))
    check(not dom.find("img"), "no <img> element came from the data")
    check(not [e for e in dom.elements if any(k.startswith("on") for k in e[1])], "no element has an event handler")
    sections = dom.find("section", "group")
    check(len(sections) == len(groups), "one section per group: %d sections, %d groups" % (len(sections), len(groups)))
    for _, attrs, _ in sections:
        sid = attrs.get("id")
        marks = dom.find("mark", "first-diff", section=sid)
        check(len(marks) >= 2, "group %s marks the first difference on both sides (%d marks)" % (sid, len(marks)))
        check(len(dom.find("tr", "diverging", section=sid)) == 1, "group %s highlights its diverging trace row" % sid)
        check(len(dom.find("button", "copy", section=sid)) == 2, "group %s has the C++ and Python copy buttons" % sid)
        check(len(dom.find("pre", section=sid)) == 2, "group %s has both repros" % sid)
    text = "".join(dom.text)
    check(text.count(HOSTILE) >= 5, "the hostile string is shown verbatim as text (%d times)" % text.count(HOSTILE))
    options = [a.get("value") for t, a, _ in dom.find("option")]
    check(not [o for o in options if o and "<" in o], "no <option> value carries markup: %s" % options)
    expected = expected_groups(sections)

    # Filters from the fragment, applied by the page's script in the browser.
    def shown_groups(fragment):
        dom, console = load(browser, tmp, url + fragment)
        check(not console, "the page with %s logs no console error: %s" % (fragment, console))
        shown = [a for _, a, _ in dom.find("section", "group") if "hidden" not in a]
        check(html_attrs(dom).get("data-shown") == str(len(shown)),
              "with %s the counter agrees with the shown groups" % fragment)
        return shown
    shown = shown_groups("#op=mul")
    check(len(shown) >= 1 and all(a.get("data-op") == "mul" for a in shown),
          "#op=mul shows only mul groups: %s" % [a.get("data-op") for a in shown])
    shown = shown_groups("#unexpected=1")
    check(len(shown) == len(groups) - len(expected) and all(a.get("data-expected") == "0" for a in shown),
          "#unexpected=1 hides the expected groups: %s" % [a.get("id") for a in shown])
    shown = shown_groups("#category=argument&unexpected=1")
    check(not shown, "#category=argument&unexpected=1 shows nothing (argument errors are expected here)")
    # A malformed or unknown fragment is ignored: everything shows and the script still runs.
    shown = shown_groups("#op=%E0%A4%A&kind=nonsense")
    check(len(shown) == len(groups), "a malformed fragment filters nothing (%d shown)" % len(shown))

    # The console check can fail: one changed character in the script breaks its CSP hash.
    tampered = os.path.join(tmp, "tampered.html")
    with open(tampered, "w", encoding="utf-8") as f:
        f.write(source.replace("'use strict';", "'use strict'; ", 1))
    dom, console = load(browser, tmp, "file://" + tampered)
    check(any("Content Security Policy" in c or "Refused to" in c for c in console),
          "a script the CSP does not list is refused, and the refusal is seen: %s" % console)
    check("data-ready" not in html_attrs(dom), "the refused script did not run")

    shot = os.path.join(out_dir, "report.png")
    chromium(browser, tmp, url, "--hide-scrollbars", "--window-size=1400,2600", "--screenshot=" + shot)
    check(os.path.exists(shot) and os.path.getsize(shot) > 20000, "a screenshot was taken: " + shot)

    if failures:
        print("%d checks failed; the page is %s" % (len(failures), page))
        return 1
    print("ok: %d groups, page %s, screenshot %s" % (len(groups), page, shot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
