#include "reports/html_report.h"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "judge/observation.h"
#include "program/json.h"
#include "program/op_table.h"
#include "reports/build_info.h"
#include "reports/html_coverage.h"
#include "reports/repro.h"
#include "reports/schema_version.h"

namespace parity::reports {

namespace {

using judge::Divergence;
using judge::StepObs;
using judge::TensorObs;

// Values shown per tensor; the rest are elided (the first difference is always shown).
constexpr std::size_t kShownValues = 12;

constexpr std::string_view kStyle = R"css(
:root { --fg:#1d232b; --muted:#5b6572; --bg:#ffffff; --panel:#f5f7fa; --line:#dde2e8; --accent:#2656c9;
  --bad:#b42318; --bad-bg:#fdecea; --ok:#1a7f37; --ok-bg:#e8f5ec; --warn:#8a5a00; --warn-bg:#fff4d6;
  --diff-row:#fff8e1; --mark:#ffd6d1; --code:#f0f2f5; }
@media (prefers-color-scheme: dark) {
  :root { --fg:#e6e9ee; --muted:#9aa4b1; --bg:#14171c; --panel:#1c2027; --line:#2d333c; --accent:#7aa2ff;
    --bad:#ff8a80; --bad-bg:#3a1f1d; --ok:#7ee2a0; --ok-bg:#183022; --warn:#ffd27a; --warn-bg:#3a3018;
    --diff-row:#2e2a1a; --mark:#6b2a24; --code:#1f242c; }
}
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg); font:15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width:1480px; margin:0 auto; padding:24px 28px 64px; }
h1 { font-size:24px; margin:0 0 4px; }
h2 { font-size:18px; margin:0; word-break:break-all; }
h3 { font-size:14px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); margin:20px 0 8px; }
a { color:var(--accent); }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size:13px; }
.verdict { display:inline-block; padding:6px 12px; border-radius:6px; font-weight:600; margin:8px 0 16px; }
.verdict.bad { color:var(--bad); background:var(--bad-bg); }
.verdict.good { color:var(--ok); background:var(--ok-bg); }
.verdict.warn { color:var(--warn); background:var(--warn-bg); }
.notice { border-left:4px solid var(--warn); background:var(--warn-bg); padding:8px 12px; margin:8px 0; border-radius:4px; }
.notice.planted { border-color:var(--bad); background:var(--bad-bg); }
.facts { display:grid; grid-template-columns:repeat(auto-fill, minmax(210px, 1fr)); gap:10px; margin:0 0 12px; }
.facts div { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:8px 12px; }
.facts dt { font-size:12px; color:var(--muted); }
.facts dd { margin:0; font-weight:600; overflow-wrap:anywhere; }
.coverage { color:var(--muted); font-size:13px; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; vertical-align:top; padding:6px 8px; border-bottom:1px solid var(--line); }
th { font-size:12px; color:var(--muted); font-weight:600; }
#filters { display:flex; flex-wrap:wrap; gap:14px; align-items:center; background:var(--panel);
  border:1px solid var(--line); border-radius:6px; padding:10px 12px; margin:8px 0 12px; }
#filters label { font-size:13px; color:var(--muted); }
#filters select { margin-left:4px; max-width:280px; }
#shown { margin-left:auto; font-size:13px; color:var(--muted); }
.badge { display:inline-block; font-size:12px; font-weight:600; padding:1px 8px; border-radius:10px; margin-left:6px; vertical-align:middle; }
.badge.unexpected { color:var(--bad); background:var(--bad-bg); }
.badge.expected { color:var(--muted); background:var(--panel); border:1px solid var(--line); }
.badge.flaky { color:var(--warn); background:var(--panel); border:1px dashed var(--warn); }
.badge.minor { color:var(--warn); background:var(--warn-bg); }
section.group { border:1px solid var(--line); border-radius:8px; padding:16px 20px; margin:20px 0; }
section.group.is-expected { opacity:.92; }
.meta { color:var(--muted); font-size:13px; margin:6px 0 0; }
.divergence { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:10px 14px; margin-top:12px; }
.divergence .sides { display:grid; grid-template-columns:1fr 1fr; gap:12px; margin-top:6px; }
.divergence .side { word-break:break-word; }
.divergence .label { font-size:12px; color:var(--muted); display:block; }
ol.program { margin:0; padding-left:0; list-style:none; counter-reset:none; }
ol.program li { padding:2px 8px; border-radius:4px; white-space:pre-wrap; word-break:break-word; }
ol.program li.diverging { background:var(--diff-row); font-weight:600; }
ol.program .ng { color:var(--muted); }
table.traces { table-layout:fixed; }
table.traces col.step { width:150px; }
table.traces tr.diverging td { background:var(--diff-row); }
table.traces td { font-size:12.5px; overflow-wrap:anywhere; }
.status.error { color:var(--bad); }
.status > mark.first-diff { display:block; padding:2px 6px; }
.status.skipped { color:var(--muted); }
.obs { margin-top:4px; }
.obs .vid { font-weight:700; margin-right:6px; }
.fld { display:inline-block; padding:0 5px; margin:1px 3px 1px 0; border-radius:3px; background:var(--code); }
.grad { margin-top:2px; }
mark.first-diff { background:var(--mark); color:inherit; outline:2px solid var(--bad); border-radius:3px; padding:0 3px; }
mark.first-diff > .fld { background:none; margin:0; padding:0; }
.repro { position:relative; margin-top:8px; }
.repro summary { cursor:pointer; font-weight:600; }
.repro pre { background:var(--code); border:1px solid var(--line); border-radius:6px; padding:12px; overflow:auto; max-height:420px; margin:6px 0 0; }
button.copy { position:absolute; right:8px; top:0; font-size:12px; padding:2px 10px; border:1px solid var(--line);
  border-radius:4px; background:var(--bg); color:var(--fg); cursor:pointer; }
button.copy:hover { border-color:var(--accent); }
footer { margin-top:40px; color:var(--muted); font-size:12px; }
[hidden] { display:none !important; }
)css";

// Filters (op, observation kind, error category, unexpected only), mirrored in the URL's fragment so a filtered
// view can be shared ("report.html#op=mul&unexpected=1"); copy buttons; and a data-ready mark on <html> that
// tests read to know the script ran under the page's CSP. No data is ever parsed as HTML here.
constexpr std::string_view kScript = R"js(
(function () {
  'use strict';
  var groups = Array.prototype.slice.call(document.querySelectorAll('section.group'));
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr[data-group]'));
  var form = document.getElementById('filters');
  var shown = document.getElementById('shown');
  var keys = ['op', 'kind', 'category'];
  function current() {
    var f = {};
    if (!form) return f;
    keys.forEach(function (k) { f[k] = form.elements[k].value; });
    f.unexpected = form.elements.unexpected.checked;
    return f;
  }
  function matches(el, f) {
    if (f.op && el.dataset.op !== f.op) return false;
    if (f.kind && el.dataset.kind !== f.kind) return false;
    if (f.category && (' ' + el.dataset.category + ' ').indexOf(' ' + f.category + ' ') < 0) return false;
    if (f.unexpected && el.dataset.expected === '1') return false;
    return true;
  }
  function apply(updateHash) {
    var f = current(), n = 0;
    groups.forEach(function (g) { var ok = matches(g, f); g.hidden = !ok; if (ok) n++; });
    rows.forEach(function (r) { r.hidden = !matches(r, f); });
    if (shown) shown.textContent = 'showing ' + n + ' of ' + groups.length + ' groups';
    document.documentElement.setAttribute('data-shown', String(n));
    if (updateHash) {
      var parts = [];
      keys.forEach(function (k) { if (f[k]) parts.push(k + '=' + encodeURIComponent(f[k])); });
      if (f.unexpected) parts.push('unexpected=1');
      try { history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname); } catch (e) {}
    }
  }
  // A fragment without '=' is an anchor (#g3); a hand-typed one may be malformed: such parts are ignored.
  function fromHash() {
    var h = location.hash.slice(1);
    if (!form || h.indexOf('=') < 0) return false;
    form.reset();
    h.split('&').forEach(function (p) {
      var i = p.indexOf('='), k = p.slice(0, i), v;
      try { v = decodeURIComponent(p.slice(i + 1)); } catch (e) { return; }
      if (k === 'unexpected') { form.elements.unexpected.checked = v === '1'; return; }
      if (keys.indexOf(k) < 0) return;
      var sel = form.elements[k];
      for (var j = 0; j < sel.options.length; j++) if (sel.options[j].value === v) sel.value = v;
    });
    return true;
  }
  if (form) {
    form.addEventListener('change', function () { apply(true); });
    form.addEventListener('submit', function (e) { e.preventDefault(); });
    window.addEventListener('hashchange', function () { if (fromHash()) apply(false); });
  }
  fromHash();
  apply(false);
  function flash(button, text) {
    button.textContent = text;
    setTimeout(function () { button.textContent = 'Copy'; }, 1600);
  }
  function selectFallback(pre, button) {
    var range = document.createRange();
    range.selectNodeContents(pre);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) {}
    flash(button, ok ? 'Copied' : 'Selected: press Ctrl+C');
  }
  Array.prototype.forEach.call(document.querySelectorAll('button.copy'), function (button) {
    button.addEventListener('click', function () {
      var pre = document.getElementById(button.getAttribute('data-copy'));
      if (!pre) return;
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(pre.textContent).then(function () { flash(button, 'Copied'); },
                                                            function () { selectFallback(pre, button); });
      } else {
        selectFallback(pre, button);
      }
    });
  });
  document.documentElement.setAttribute('data-ready', String(groups.length));
})();
)js";

std::string sha256_base64(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL could not compute a SHA-256 digest for the report's CSP");
  std::string out(4 * ((length + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), digest, static_cast<int>(length));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string esc(std::string_view s) { return html_escape(s); }

std::string plural(std::uint64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

using program::render_ints;
using program::render_number;

// The element the divergence names ("element 7 of 12 = ..."), so that it is shown even when elided.
std::optional<std::size_t> diverging_element(const Divergence& d) {
  constexpr std::string_view kPrefix = "element ";
  if (d.oracle.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::size_t i = 0;
  const char* begin = d.oracle.data() + kPrefix.size();
  auto [end, ec] = std::from_chars(begin, d.oracle.data() + d.oracle.size(), i);
  if (ec != std::errc()) return std::nullopt;
  return i;
}

std::string values_text(const std::vector<double>& v, std::optional<std::size_t> keep) {
  std::string s = "[";
  const std::size_t n = std::min(v.size(), kShownValues);
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + render_number(v[i]);
  if (v.size() > n) {
    if (keep && *keep >= n && *keep < v.size()) s += ", \u2026 [" + std::to_string(*keep) + "]=" + render_number(v[*keep]);
    s += ", \u2026 (" + std::to_string(v.size()) + " in all)";
  }
  return s + "]";
}

// The observation field a divergence kind names: the kind's own name, but for the minor kinds of strides.
std::string field_of_kind(judge::DivergenceKind kind) {
  if (kind == judge::DivergenceKind::StridesSize1) return "strides";
  if (kind == judge::DivergenceKind::GradStridesSize1) return "grad_strides";
  return std::string(judge::to_string(kind));
}

// Builds an observation's fields, wrapping the one named `marked` (if any) in the first-difference mark.
class Fields {
 public:
  explicit Fields(std::string marked) : marked_(std::move(marked)) {}
  void add(const std::string& key, const std::string& text) {
    std::string span = "<span class=\"fld\" data-field=\"" + esc(key) + "\">" + esc(text) + "</span>";
    if (key == marked_) span = "<mark class=\"first-diff\" title=\"first difference\">" + span + "</mark>";
    html_ += span;
  }
  std::string take() { return std::move(html_); }

 private:
  std::string marked_;
  std::string html_;
};

std::string render_obs(const TensorObs& o, const std::string& marked, std::optional<std::size_t> keep) {
  Fields f(marked);
  f.add("sizes", render_ints(o.sizes));
  f.add("dtype", std::string(program::to_string(o.dtype)));
  f.add("device", o.device);
  f.add("strides", "strides " + render_ints(o.strides));
  f.add("offset", "offset " + std::to_string(o.offset));
  f.add("alias", o.alias_of == o.value ? "own storage" : "shares storage with v" + std::to_string(o.alias_of));
  // Shown only when it says something: a value that is an earlier one, or what differs.
  if (o.same_as != o.value || marked == "identity")
    f.add("identity", o.same_as == o.value ? "its own tensor" : "is v" + std::to_string(o.same_as));
  f.add("view", !o.is_view ? "not a view"
                : o.base == judge::kBaseNotAValue ? "view of an op's temporary"
                                                    : "view of v" + std::to_string(o.base));
  f.add("version", "version " + std::to_string(o.version));
  f.add("requires_grad", std::string("requires_grad=") + (o.requires_grad ? "true" : "false"));
  f.add("is_leaf", o.is_leaf ? "leaf" : "non-leaf");
  // Rare, so shown only when set or when it is what differs.
  if (o.retains_grad || marked == "retains_grad")
    f.add("retains_grad", std::string("retains_grad=") + (o.retains_grad ? "true" : "false"));
  f.add("grad_fn", "grad_fn " + (o.grad_fn.empty() ? std::string("None") : o.grad_fn));
  std::string layout;
  for (auto [on, name] : {std::pair{o.contiguous, "contiguous"}, std::pair{o.channels_last, "channels_last"},
                          std::pair{o.channels_last_3d, "channels_last_3d"},
                          std::pair{o.non_overlapping_dense, "non-overlapping dense"}})
    if (on) layout += (layout.empty() ? "" : ", ") + std::string(name);
  f.add("contiguity", layout.empty() ? "no dense layout" : layout);
  f.add("values", !o.values_defined ? "values undefined (uninitialised memory)"
                  : o.summary        ? "values: " + judge::render(*o.summary)
                                     : "values " + values_text(o.values, marked == "values" ? keep : std::nullopt));
  std::string html = f.take();
  const bool grad_marked = marked.rfind("grad_", 0) == 0;
  if (o.grad) {
    Fields g(marked);
    g.add("grad_sizes", "grad " + render_ints(o.grad->sizes));
    g.add("grad_dtype", std::string(program::to_string(o.grad->dtype)));
    g.add("grad_strides", "strides " + render_ints(o.grad->strides));
    g.add("grad_alias", o.grad->alias_of < 0 ? "own storage" : "shares storage with v" + std::to_string(o.grad->alias_of));
    if (o.grad->same_as >= 0 || o.grad->replaced > 0 || marked == "grad_identity")
      g.add("grad_identity", (o.grad->same_as < 0 ? std::string("") : "is v" + std::to_string(o.grad->same_as) + ", ") +
                                 "replaced " + std::to_string(o.grad->replaced) + "×");
    g.add("grad_values", o.grad->summary
                             ? "values: " + judge::render(*o.grad->summary)
                             : "values " + values_text(o.grad->values, marked == "grad_values" ? keep : std::nullopt));
    std::string inner = g.take();
    if (marked == "grad_defined") inner = "<mark class=\"first-diff\" title=\"first difference\">" + inner + "</mark>";
    html += "<div class=\"grad\">" + inner + "</div>";
  } else if (grad_marked) {
    html += "<div class=\"grad\"><mark class=\"first-diff\" title=\"first difference\">"
            "<span class=\"fld\" data-field=\"grad_defined\">grad undefined</span></mark></div>";
  }
  return "<div class=\"obs\" data-value=\"" + std::to_string(o.value) + "\"><span class=\"vid\">v" +
         std::to_string(o.value) + "</span>" + html + "</div>";
}

std::string render_status(const StepObs& s, bool marked) {
  std::string cls, text;
  switch (s.status) {
    case StepObs::Status::Ok: cls = "ok", text = "ok"; break;
    case StepObs::Status::Skipped: cls = "skipped", text = "skipped (an input was not produced)"; break;
    case StepObs::Status::Error:
      cls = "error", text = "error(" + std::string(judge::to_string(s.category)) + "): " + s.message;
      break;
  }
  if (marked) return "<div class=\"status " + cls + "\"><mark class=\"first-diff\" title=\"first difference\">" +
                    esc(text) + "</mark></div>";
  return "<div class=\"status " + cls + "\">" + esc(text) + "</div>";
}

std::string render_cell(const judge::Trace* t, std::size_t i, const Divergence& d) {
  if (!t) return "<span class=\"status skipped\">no trace (the case crashed or timed out)</span>";
  if (i >= t->steps.size()) return "<span class=\"status skipped\">not reached</span>";
  const StepObs& s = t->steps[i];
  const bool here = d.step == static_cast<int>(i);
  using Kind = judge::DivergenceKind;
  const bool outcome = here && (d.value < 0 || d.kind == Kind::Status || d.kind == Kind::ErrorCategory);
  std::string html = render_status(s, outcome && d.kind != Kind::ObservedSet);
  for (const std::string& v : s.schema_violations) {
    const std::string text = esc("schema: " + v);
    html += here && d.kind == Kind::Schema
                ? "<div class=\"status error\"><mark class=\"first-diff\" title=\"first difference\">" + text + "</mark></div>"
                : "<div class=\"status error\">" + text + "</div>";
  }
  const std::string marked = here && d.value >= 0 ? field_of_kind(d.kind) : "";
  const auto keep = diverging_element(d);
  std::string obs;
  for (const TensorObs& o : s.observed) obs += render_obs(o, o.value == d.value ? marked : "", keep);
  if (here && d.kind == Kind::ObservedSet) {
    std::string ids;
    for (const TensorObs& o : s.observed) ids += (ids.empty() ? "" : ", ") + std::string("v") + std::to_string(o.value);
    obs = "<div class=\"obs\"><mark class=\"first-diff\" title=\"first difference\">observed: " +
          esc(ids.empty() ? "nothing" : ids) + "</mark></div>" + obs;
  }
  return html + obs;
}

// "v3 = mul(v1, v2)   dim=0, keepdim=false   [no_grad]": the op table's attributes as the program JSON names them.
std::string step_text(const program::Step& s, const nlohmann::json& step_json, std::size_t index) {
  const program::OpSpec& op = program::spec(s.op);
  std::string text = op.no_value ? "" : "v" + std::to_string(index) + " = ";
  text += std::string(op.name) + "(";
  for (std::size_t k = 0; k < s.inputs.size(); ++k) text += (k ? ", " : "") + std::string("v") + std::to_string(s.inputs[k]);
  text += ")";
  std::string attrs;
  if (auto it = step_json.find("attrs"); it != step_json.end())
    for (const auto& [key, value] : it->items()) {
      std::string v = value.is_object() && value.contains("value") ? value["value"].dump() : value.dump();
      attrs += (attrs.empty() ? "" : ", ") + key + "=" + v;
    }
  if (!attrs.empty()) text += "   " + attrs;
  return text;
}

std::string render_program(const program::Program& p, int diverging_step) {
  const nlohmann::json j = program::to_json(p);
  std::string html = "<ol class=\"program mono\">";
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const bool here = diverging_step == static_cast<int>(i);
    html += std::string("<li") + (here ? " class=\"diverging\"" : "") + ">" + esc(step_text(p.steps[i], j["steps"][i], i));
    if (!p.steps[i].grad_enabled) html += "<span class=\"ng\">   [no_grad]</span>";
    html += "</li>";
  }
  return html + "</ol>";
}

std::string op_at(const program::Program& p, int step) {
  if (step < 0 || static_cast<std::size_t>(step) >= p.steps.size()) return "program";
  return std::string(program::spec(p.steps[static_cast<std::size_t>(step)].op).name);
}

// The error categories either side raised at the divergence (for the category filter).
std::set<std::string> categories_of(const Divergence& d) {
  std::set<std::string> c;
  if (d.impl_category) c.insert(std::string(judge::to_string(*d.impl_category)));
  if (d.oracle_category) c.insert(std::string(judge::to_string(*d.oracle_category)));
  return c;
}

// One section of the page: a signature, from the recorded findings and from run.json's groups (which count the
// cases not recorded, and keep the smallest program even when findings.jsonl lost it).
struct Group {
  judge::Signature signature;
  std::vector<std::size_t> members;         // indices into ReportInput::findings
  const Finding* shown = nullptr;           // the recorded finding with the smallest program, if any
  std::size_t shown_record = 0;             // its record index in findings.jsonl
  const program::Program* program = nullptr;  // shown's program, or run.json's smallest
  std::uint64_t shown_case = 0;
  std::uint64_t count = 0;
  std::uint64_t first_case = 0;
  bool expected = false;
  std::string known_reason;
  std::string op, kind;  // for the filters: the signature's
  std::set<std::string> categories;

  int diverging_step() const { return shown ? shown->divergence.step : -1; }
};

std::vector<Group> make_groups(const ReportInput& in) {
  std::map<judge::Signature, Group> by_sig;
  for (std::size_t i = 0; i < in.findings.size(); ++i) {
    const Finding& f = in.findings[i];
    Group& g = by_sig[f.signature];
    g.signature = f.signature;
    if (!g.shown || std::tuple(f.program.steps.size(), f.case_index) <
                        std::tuple(g.shown->program.steps.size(), g.shown->case_index)) {
      g.shown = &f;
      g.shown_record = in.finding_indices.at(i);
    }
    g.first_case = g.members.empty() ? f.case_index : std::min(g.first_case, f.case_index);
    g.members.push_back(i);
    g.expected = g.expected || f.expected;
    if (f.expected) g.known_reason = f.known_reason;
  }
  if (in.summary)
    for (const auto& [sig, sg] : in.summary->groups) {
      Group& g = by_sig[sig];
      g.signature = sig;
      g.count = std::max<std::uint64_t>(g.members.size(), sg.count);
      g.first_case = g.members.empty() ? sg.first_case : std::min(g.first_case, sg.first_case);
      if (!g.shown && sg.smallest) {
        g.program = &sg.smallest->program;
        g.shown_case = sg.smallest->case_index;
      }
      if (sg.expected && !g.expected) {
        g.expected = true;
        g.known_reason = sg.known_reason;
      }
    }
  std::vector<Group> out;
  for (auto& [sig, g] : by_sig) {
    g.count = std::max<std::uint64_t>(g.count, g.members.size());
    g.op = g.signature.op;
    g.kind = std::string(judge::to_string(g.signature.kind));
    if (g.shown) {
      g.program = &g.shown->program;
      g.shown_case = g.shown->case_index;
      g.categories = categories_of(g.shown->divergence);
    }
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const Group& a, const Group& b) {
    return std::tuple(a.expected, b.count) < std::tuple(b.expected, a.count);
  });
  return out;
}

std::string fact(std::string_view label, const std::string& value) {
  return "<div><dt>" + esc(label) + "</dt><dd>" + esc(value) + "</dd></div>";
}

// What judged the run's impl side: run.json says, or, without it, the findings do.
Oracle oracle_of(const ReportInput& in) {
  if (in.summary) return in.summary->oracle;
  return in.findings.empty() ? Oracle::LibTorch : in.findings.front().oracle;
}

// The summary's one-line verdict: a drift run's differences between releases, or a campaign's divergences.
std::string verdict_text(const RunSummary& r, std::size_t groups, std::size_t unexpected_groups) {
  if (r.drift) {
    const std::string releases = r.libtorch_version + " and " + r.drift->other_libtorch_version;
    if (r.findings > 0)
      return plural(r.findings, "difference") + " in " + plural(groups, "group") + " between LibTorch " + releases;
    return "LibTorch " + releases + " agreed on all " + std::to_string(r.cases) + " cases";
  }
  if (r.unexpected_findings > 0)
    return plural(r.unexpected_findings, "unexpected divergence") + " in " + plural(unexpected_groups, "group");
  if (r.findings > 0)
    return "no unexpected divergences (" + std::to_string(r.expected_findings) +
           " expected, all in the known-divergences ledger)";
  return "impl agreed with " + std::string(oracle_name(r.oracle)) + " on all " + std::to_string(r.cases) + " cases";
}

std::string render_summary(const ReportInput& in, const std::vector<Group>& groups) {
  std::string html;
  std::size_t unexpected_groups = 0;
  for (const auto& g : groups) unexpected_groups += g.expected ? 0 : 1;
  const Finding* any = in.findings.empty() ? nullptr : &in.findings.front();
  if (in.summary) {
    const RunSummary& r = *in.summary;
    std::string cls = r.unexpected_findings > 0 ? "bad" : (r.findings > 0 || r.interrupted ? "warn" : "good");
    const std::string verdict = verdict_text(r, groups.size(), unexpected_groups);
    html += "<p class=\"verdict " + cls + "\">" + esc(verdict) + "</p>";
    if (!r.planted_faults.empty()) {
      html += "<p class=\"notice planted\"><strong>Planted faults.</strong> This campaign ran with impl deliberately "
              "broken (PARITY_PLANT=" + esc(program::join(r.planted_faults, ", ")) +
              "), to test parity itself: divergences they cause are not bugs "
              "of impl.</p>";
    }
    if (r.interrupted) html += "<p class=\"notice\">The campaign was interrupted before its budget was spent.</p>";
    html += "<dl class=\"facts\">";
    html += fact("LibTorch", r.libtorch_version);
    if (r.drift) html += fact("against", "LibTorch " + r.drift->other_libtorch_version + " (" + r.drift->other_parity + ")");
    html += fact("cases", std::to_string(r.cases));
    char rate[128];
    std::snprintf(rate, sizeof rate, "%.1f/s over %.1f s (%s)", r.cases_per_second, r.seconds,
                  reports::describe_isolation(r.isolation, r.jobs).c_str());
    html += fact("speed", rate);
    html += fact("groups", std::to_string(groups.size()) + " (" + std::to_string(unexpected_groups) + " unexpected)");
    html += fact("findings", std::to_string(r.unexpected_findings) + " unexpected, " +
                                 std::to_string(r.expected_findings) + " expected");
    html += fact("crashes / timeouts / out of memory", std::to_string(r.crashes) + " / " + std::to_string(r.timeouts) +
                                                           " / " + std::to_string(r.out_of_memory));
    if (r.flaky_findings > 0)
      html += fact("flaky", std::to_string(r.flaky_findings) +
                                " findings did not diverge on every confirming run (recorded unshrunk)");
    if (r.resumed > 0) html += fact("resumed", std::to_string(r.resumed) + " times (parity fuzz --resume)");
    if (r.unshrunk_findings > 0)
      html += fact("unshrunk", std::to_string(r.unshrunk_findings) +
                                   " findings recorded as found: the shrinking budget was spent");
    html += fact("seed", std::to_string(r.seed));
    html += fact("parity commit", r.parity_commit);
    html += fact("generator", "version " + std::to_string(r.generator_version) + ", up to " +
                                  std::to_string(r.max_steps) + " steps");
    html += fact("device", r.device);
    if (r.oracle != Oracle::LibTorch)
      html += fact("oracle",
                   std::string(oracle_name(r.oracle)) + " (--oracle " + std::string(to_string(r.oracle)) + ")");
    if (r.backends) {
      auto side = [](const RunSummary::Side& s) {
        return s.library + " " + s.version +
               (s.command.empty() ? " (in process)" : " (protocol " + std::to_string(s.protocol) + ": " + s.command + ")");
      };
      html += fact("library under test", side(r.backends->impl));
      html += fact("judged by", side(r.backends->oracle));
      std::string words;
      for (const std::string& name : r.backends->not_compared)
        if (auto o = judge::parse_observation(name)) words += (words.empty() ? "" : ", ") + std::string(judge::describe(*o));
      if (!words.empty()) html += fact("not compared", words + " (a side does not observe them)");
      if (!r.backends->ops_left_out.empty())
        html += fact("ops left out", std::to_string(r.backends->ops_left_out.size()) + ": " +
                                         program::join(r.backends->ops_left_out, ", "));
    }
    html += "</dl>";
    if (r.drift) return html;  // a drift run counts no coverage: both sides are LibTorch
    html += render_coverage(r.coverage);
  } else {
    html += "<p class=\"verdict warn\">" + esc(plural(in.findings.size(), "recorded finding") + " in " +
                                               plural(groups.size(), "group") + "; no run summary") +
            "</p>";
    if (any) {
      html += "<dl class=\"facts\">";
      html += fact("LibTorch", any->libtorch_version);
      html += fact("seed", std::to_string(any->seed));
      html += fact("parity commit", any->parity_commit);
      html += fact("generator", "version " + std::to_string(any->generator_version));
      html += fact("device", any->device);
      html += "</dl>";
    }
  }
  return html;
}

std::string options(const std::set<std::string>& values, std::string_view all) {
  std::string html = "<option value=\"\">" + esc(all) + "</option>";
  for (const auto& v : values) html += "<option value=\"" + esc(v) + "\">" + esc(v) + "</option>";
  return html;
}

std::string group_attributes(const Group& g) {
  return "data-op=\"" + esc(g.op) + "\" data-kind=\"" + esc(g.kind) + "\" data-category=\"" +
         esc(program::join(g.categories, " ")) +
         "\" data-expected=\"" + (g.expected ? "1" : "0") + "\"";
}

std::string verdict_badge(const Group& g) {
  return g.expected ? "<span class=\"badge expected\">expected</span>" : "<span class=\"badge unexpected\">unexpected</span>";
}

std::string render_overview(const std::vector<Group>& groups) {
  if (groups.empty()) return "";
  std::set<std::string> ops, kinds, categories;
  for (const auto& g : groups) {
    ops.insert(g.op);
    kinds.insert(g.kind);
    categories.insert(g.categories.begin(), g.categories.end());
  }
  std::string html = "<h3>Groups</h3><form id=\"filters\">";
  html += "<label>op<select name=\"op\">" + options(ops, "all ops") + "</select></label>";
  html += "<label>observation<select name=\"kind\">" + options(kinds, "all kinds") + "</select></label>";
  html += "<label>error category<select name=\"category\">" + options(categories, "all categories") + "</select></label>";
  html += "<label><input type=\"checkbox\" name=\"unexpected\" value=\"1\"> unexpected only</label>";
  html += "<span id=\"shown\">" + esc(plural(groups.size(), "group")) + "</span></form>";
  html += "<table class=\"overview\"><thead><tr><th>signature</th><th>cases</th><th>verdict</th><th>first case</th>"
          "<th>smallest program</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    html += "<tr data-group=\"g" + std::to_string(i) + "\" " + group_attributes(g) + ">";
    html += "<td class=\"mono\"><a href=\"#g" + std::to_string(i) + "\">" + esc(g.signature.to_string()) + "</a></td>";
    html += "<td>" + std::to_string(g.count) + "</td><td>" + verdict_badge(g) + "</td>";
    html += "<td>" + std::to_string(g.first_case) + "</td>";
    html += "<td>" + esc(g.program ? plural(g.program->steps.size(), "step") + " (case " + std::to_string(g.shown_case) + ")"
                                   : std::string("not recorded")) +
            "</td></tr>";
  }
  return html + "</tbody></table>";
}

std::string render_repro(const std::string& id, std::string_view title, const std::string& code, bool open) {
  return std::string("<details class=\"repro\"") + (open ? " open" : "") + "><summary>" + esc(title) +
         "</summary><button type=\"button\" class=\"copy\" data-copy=\"" + id + "\">Copy</button><pre id=\"" + id +
         "\"><code>" + esc(code) + "</code></pre></details>";
}

// A word for the shell: as is when it holds nothing the shell reads, single-quoted otherwise.
std::string shell_word(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./=:,+@%").find(c) != std::string_view::npos;
  });
  if (plain) return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The command that replays the shown finding; a planted one only diverges again with the same faults.
std::string replay_command(const ReportInput& in, const Group& g) {
  const std::string faults = program::join(g.shown->planted_faults, ",");
  return (faults.empty() ? "" : "PARITY_PLANT=" + shell_word(faults) + " ") + "parity replay " +
         shell_word(in.findings_path) + " --index " + std::to_string(g.shown_record);
}

// What the two sides of a finding are: impl and LibTorch for a campaign, impl's device and impl on the CPU for one
// judged by impl-cpu, two LibTorch releases for a drift run.
struct Sides {
  std::string left = "impl", right = "LibTorch (the oracle)";
};

Sides sides_of(const ReportInput& in) {
  if (oracle_of(in) == Oracle::ImplCpu) return {"impl (cuda on the device)", "impl on the CPU (the oracle)"};
  if (in.summary && in.summary->backends) {  // a protocol backend on either side: the libraries' own names
    const RunSummary::Backends& b = *in.summary->backends;
    return {b.impl.library + " " + b.impl.version, b.oracle.library + " " + b.oracle.version + " (the oracle)"};
  }
  if (!in.summary || !in.summary->drift) return {};
  return {"LibTorch " + in.summary->libtorch_version, "LibTorch " + in.summary->drift->other_libtorch_version};
}

std::string render_traces(const Finding& f, const Sides& sides) {
  const Divergence& d = f.divergence;
  std::string html = "<h3>Traces</h3><table class=\"traces\"><colgroup><col class=\"step\"><col><col></colgroup>"
                     "<thead><tr><th>step</th><th>" + esc(sides.left) + "</th><th>" + esc(sides.right) +
                     "</th></tr></thead><tbody>";
  const judge::Trace* impl = f.impl_trace ? &*f.impl_trace : nullptr;
  const judge::Trace* oracle = f.oracle_trace ? &*f.oracle_trace : nullptr;
  for (std::size_t i = 0; i < f.program.steps.size(); ++i) {
    const bool here = d.step == static_cast<int>(i);
    html += std::string("<tr") + (here ? " class=\"diverging\"" : "") + "><td class=\"mono\">" +
            esc(std::to_string(i) + " " + op_at(f.program, static_cast<int>(i))) + "</td><td class=\"mono\">" +
            render_cell(impl, i, d) + "</td><td class=\"mono\">" + render_cell(oracle, i, d) + "</td></tr>";
  }
  return html + "</tbody></table>";
}

std::string render_group(const ReportInput& in, const Group& g, std::size_t index) {
  const Finding* f = g.shown;
  const Sides sides = sides_of(in);
  const std::string id = "g" + std::to_string(index);
  std::string html = "<section class=\"group" + std::string(g.expected ? " is-expected" : "") + "\" id=\"" + id +
                     "\" " + group_attributes(g) + ">";
  html += "<h2 class=\"mono\"><a href=\"#" + id + "\">" + esc(g.signature.to_string()) + "</a>" + verdict_badge(g);
  if (f && f->divergence.severity == Divergence::Severity::Minor) html += "<span class=\"badge minor\">minor</span>";
  if (f && f->reproducible && f->reproducible->flaky())
    html += "<span class=\"badge flaky\" title=\"diverged on " + std::to_string(f->reproducible->diverged) + " of " +
            std::to_string(f->reproducible->runs) + " confirming runs\">flaky " +
            std::to_string(f->reproducible->diverged) + "/" + std::to_string(f->reproducible->runs) + "</span>";
  html += "</h2>";
  std::string meta = plural(g.count, "case") + ", first seen in case " + std::to_string(g.first_case);
  if (f && f->reproducible && f->reproducible->flaky())
    meta += "; shown: case " + std::to_string(f->case_index) + ", not shrunk (flaky: it diverged on " +
            std::to_string(f->reproducible->diverged) + " of " + std::to_string(f->reproducible->runs) +
            " confirming runs)";
  else if (f)
    meta += "; shown: case " + std::to_string(f->case_index) + ", shrunk from " +
            std::to_string(f->original_program_size) + " to " + plural(f->program.steps.size(), "step") + " in " +
            plural(static_cast<std::size_t>(f->shrink_evaluations), "evaluation");
  if (g.members.size() > 1) {
    meta += "; recorded cases:";
    for (std::size_t m : g.members) meta += " " + std::to_string(in.findings[m].case_index);
  }
  html += "<p class=\"meta\">" + esc(meta) + "</p>";
  if (g.expected) html += "<p class=\"notice\"><strong>Known divergence.</strong> " + esc(g.known_reason) + "</p>";
  if (!f) {
    html += "<p class=\"notice\">" +
            esc(g.program ? "No finding of this group could be read from findings.jsonl: run.json keeps its smallest "
                            "program (case " + std::to_string(g.shown_case) + "), without traces."
                          : std::string("No finding of this group was recorded: run.json only counts it.")) +
            "</p>";
  }

  if (f) {
    const Divergence& d = f->divergence;
    std::string where = d.step >= 0 ? "step " + std::to_string(d.step) + " (" + op_at(f->program, d.step) + ")" : "the program";
    if (d.value >= 0) where += ", value v" + std::to_string(d.value);
    html += "<div class=\"divergence\"><strong>First difference</strong> at " + esc(where) + ": <code>" + esc(judge::to_string(d.kind)) +
            "</code><div class=\"sides\"><div class=\"side\"><span class=\"label\">" + esc(sides.left) + "</span><code>" +
            esc(d.impl) + "</code></div><div class=\"side\"><span class=\"label\">" + esc(sides.right) + "</span><code>" +
            esc(d.oracle) +
            "</code></div></div></div>";
  }
  if (!g.program) return html + "</section>";
  html += "<h3>Minimal program</h3>" + render_program(*g.program, g.diverging_step());
  if (f) html += render_traces(*f, sides);

  html += "<h3>Repro</h3>";
  if (f && in.summary && in.summary->drift)
    html += "<p class=\"meta\">The repros print the values of whichever LibTorch runs them: build and run them "
            "against each release to see both sides.</p>";
  else if (f && f->oracle == Oracle::ImplCpu)
    html += "<p class=\"meta\">Replay it on both (a CUDA device needed): <code>" + esc(replay_command(in, g)) +
            "</code>. The repros run the program on PyTorch, which judged neither side here: they print what it "
            "computes.</p>";
  else if (f)
    html += "<p class=\"meta\">Replay it on both: <code>" + esc(replay_command(in, g)) +
            "</code>. The repros run the program on LibTorch alone and print the oracle's side of every value.</p>";
  // A drift finding's sides are two releases of LibTorch: its repros only show values.
  const ReproSides repro = !f ? ReproSides{}
                           : in.summary && in.summary->drift
                               ? ReproSides{.judge = repro_expectations(f->oracle, f->oracle_trace)}
                               : finding_repro_sides(*f);
  html += render_repro(id + "-cpp", "C++ (LibTorch)", reports::cpp_repro(*g.program, repro), true);
  html += render_repro(id + "-py", "Python (PyTorch)", reports::python_repro(*g.program, repro), false);
  return html + "</section>";
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\0': out += "\xEF\xBF\xBD"; break;  // U+FFFD: HTML has no NUL
      default: out += c;
    }
  }
  return out;
}

std::string html_report(const ReportInput& in) {
  const std::vector<Group> groups = make_groups(in);
  const std::string csp = "default-src 'none'; script-src 'sha256-" + sha256_base64(kScript) +
                          "'; style-src 'sha256-" + sha256_base64(kStyle) +
                          "'; img-src 'none'; base-uri 'none'; form-action 'none'";
  std::size_t unexpected = 0;
  for (const auto& g : groups) unexpected += g.expected ? 0 : 1;
  std::string title = "parity report: " + std::to_string(groups.size()) + " groups, " + std::to_string(unexpected) +
                      " unexpected";
  if (in.summary) title += " (seed " + std::to_string(in.summary->seed) + ")";

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Not escaped: the policy is parity's own text (keywords and base64), and must read as written.
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + csp + "\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<meta name=\"generator\" content=\"parity " + esc(parity_commit()) + ", report schema " +
          std::to_string(kReportSchemaVersion) + "\">\n";
  html += "<title>" + esc(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";
  const Sides sides = sides_of(in);
  html += "<header><h1>parity report</h1><p class=\"meta\">" + esc(sides.left) + " against " +
          esc(in.summary && (in.summary->drift || in.summary->backends) ? sides.right
                                                                        : std::string(oracle_name(oracle_of(in)))) +
          ": each group is one signature "
          "(op : observation kind [: error category or signal]); the first differing observation is marked.</p></header>\n";
  for (const auto& w : in.warnings) html += "<p class=\"notice\">" + esc(w) + "</p>\n";
  html += "<section id=\"summary\">" + render_summary(in, groups) + "</section>\n";
  html += render_overview(groups) + "\n";
  for (std::size_t i = 0; i < groups.size(); ++i) html += render_group(in, groups[i], i) + "\n";
  html += "<footer>Made by <code>parity report</code> (commit " + esc(parity_commit()) +
          ") from findings.jsonl and run.json, report schema " + std::to_string(kReportSchemaVersion) +
          " (reports/schema/). The page is self-contained: it loads nothing.</footer>\n";
  html += "</main>\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace parity::reports
