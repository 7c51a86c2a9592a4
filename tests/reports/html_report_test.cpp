// reports/html_report: what the page shows and how it escapes, without a browser (tests/reports/report_browser_test.py
// loads it in Chromium). Strings from findings are data: they must never become markup.
#include "reports/html_report.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <string>

#include "program/program_builder.h"

namespace parity::reports {
namespace {

const std::string kHostile = "</script><img src=x onerror=alert(1)>\"'&";

// A signature written as findings.jsonl writes it.
judge::Signature sig(std::string_view text) { return judge::Signature::parse(text).value(); }

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

judge::TensorObs obs(int value, std::vector<double> values) {
  judge::TensorObs o;
  o.value = value;
  o.alias_of = value;
  o.sizes = {static_cast<std::int64_t>(values.size())};
  o.strides = {1};
  o.contiguous = o.non_overlapping_dense = true;
  o.values = std::move(values);
  return o;
}

// rand -> mul: impl's mul is off by one in element 1.
Finding values_finding(std::uint64_t case_index) {
  Finding f;
  f.parity_commit = "abc";
  f.libtorch_version = "1.13.0";
  f.case_index = case_index;
  f.signature = sig("mul:values");
  program::ProgramBuilder b;
  int x = b.rand({2});
  b.step(program::OpId::Mul, {x, x});
  f.program = b.program();
  f.original_program_size = 5;
  f.divergence = {1, 1, judge::DivergenceKind::Values, "element 1 of 2 = 5", "element 1 of 2 = 4", judge::Divergence::Severity::Major, {}, {}};
  judge::Trace impl{"impl", {}}, oracle{"libtorch", {}};
  impl.steps.resize(2);
  oracle.steps.resize(2);
  impl.steps[0].observed = oracle.steps[0].observed = {obs(0, {1, 2})};
  impl.steps[1].observed = {obs(1, {1, 5})};
  oracle.steps[1].observed = {obs(1, {1, 4})};
  f.impl_trace = impl;
  f.oracle_trace = oracle;
  return f;
}

ReportInput input(std::vector<Finding> findings) {
  ReportInput in;
  for (std::size_t i = 0; i < findings.size(); ++i) in.finding_indices.push_back(i);
  in.findings = std::move(findings);
  in.findings_path = "run/findings.jsonl";
  return in;
}

TEST(HtmlReport, EscapesForTextAndAttributes) {
  EXPECT_EQ(html_escape(kHostile), "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;");
  EXPECT_EQ(html_escape(std::string("a\0b", 3)), "a\xEF\xBF\xBD" "b");
}

TEST(HtmlReport, HostileStringsStayText) {
  Finding f = values_finding(3);
  // Signatures and kinds are typed (judge/signature.h): no text of a finding's reaches the page through them.
  f.divergence.impl = kHostile;
  f.expected = true;
  f.known_reason = kHostile;
  f.impl_trace->steps[1].observed[0].grad_fn = kHostile;
  f.oracle_trace->steps[0].status = judge::StepObs::Status::Error;
  f.oracle_trace->steps[0].message = kHostile;
  f.planted_faults = {kHostile};
  ReportInput in = input({f});
  in.warnings.push_back(kHostile);
  in.findings_path = kHostile;
  RunSummary summary;
  summary.libtorch_version = summary.parity_commit = summary.device = kHostile;
  summary.planted_faults = {kHostile};
  in.summary = summary;
  const std::string html = html_report(in);
  EXPECT_EQ(count(html, "<img"), 0u);
  EXPECT_EQ(count(html, "onerror=alert(1)>"), 0u);
  EXPECT_EQ(count(html, "</script>"), 1u);  // the page's own
  EXPECT_GE(count(html, html_escape(kHostile)), 11u);  // each of the 11 hostile fields above, at least once
}

// findings.jsonl lost a group's findings (a torn file, a shard copied without it): run.json still has the group,
// its count and its smallest program, which the page shows without traces.
TEST(HtmlReport, GroupsKnownOnlyFromRunJsonKeepTheirProgram) {
  ReportInput in = input({values_finding(3)});
  RunSummary summary;
  summary.groups[sig("mul:values")].add_case(3);
  summary.groups[sig("neg:status:argument")].add_case(8);
  summary.groups[sig("neg:status:argument")].add_case(5);
  summary.groups[sig("neg:status:argument")].offer(8, values_finding(8).program);
  summary.groups[sig("sum:strides")].add_case(9);  // counted, never recorded
  in.summary = summary;
  const std::string html = html_report(in);
  EXPECT_EQ(count(html, "<section class=\"group"), 3u);
  EXPECT_NE(html.find("2 cases, first seen in case 5"), std::string::npos);
  EXPECT_NE(html.find("run.json keeps its smallest program (case 8), without traces"), std::string::npos);
  EXPECT_NE(html.find("run.json only counts it"), std::string::npos);
  EXPECT_NE(html.find("data-op=\"neg\" data-kind=\"status\""), std::string::npos);
  EXPECT_EQ(count(html, "<table class=\"traces\">"), 1u);  // only the recorded finding has traces
  EXPECT_EQ(count(html, "class=\"copy\""), 4u);             // repros of both groups with a program
}

TEST(HtmlReport, ReplayLineCarriesThePlantedFaults) {
  Finding f = values_finding(3);
  f.planted_faults = {"mul=values", "neg=error"};
  ReportInput in = input({f});
  in.findings_path = "my runs/findings.jsonl";
  EXPECT_NE(html_report(in).find("PARITY_PLANT=mul=values,neg=error parity replay &#39;my runs/findings.jsonl&#39; --index 0"),
            std::string::npos);
}

TEST(HtmlReport, GroupsByFindingSignatureAndShowsTheSmallestProgram) {
  Finding big = values_finding(2), small = values_finding(9), other = values_finding(4);
  big.program.steps.push_back(big.program.steps[1]);
  other.signature = sig("mul:strides");
  ReportInput in = input({big, small, other});
  RunSummary summary;
  summary.cases = 100;
  summary.groups[sig("mul:values")].count = 7;  // cases beyond the recorded ones
  summary.groups[sig("mul:values")].first_case = 1;
  in.summary = summary;
  const std::string html = html_report(in);
  EXPECT_EQ(count(html, "<section class=\"group"), 2u);
  // The group with more cases comes first; its page shows run.json's count and first case, and case 9's program.
  EXPECT_LT(html.find(">mul:values<"), html.find(">mul:strides<"));
  EXPECT_NE(html.find("7 cases, first seen in case 1; shown: case 9"), std::string::npos);
  EXPECT_NE(html.find("parity replay run/findings.jsonl --index 1"), std::string::npos);
}

TEST(HtmlReport, MarksTheFirstDifferenceOnBothSides) {
  const std::string html = html_report(input({values_finding(3)}));
  EXPECT_EQ(count(html, "<tr class=\"diverging\">"), 1u);
  EXPECT_EQ(count(html, "<mark class=\"first-diff\" title=\"first difference\"><span class=\"fld\" data-field=\"values\">"), 2u);
  EXPECT_NE(html.find("values [1, 5]"), std::string::npos);
  EXPECT_NE(html.find("values [1, 4]"), std::string::npos);
}

// A tensor too large to keep whole is shown as its summary, marked as the first difference like values.
TEST(HtmlReport, ShowsASummarisedTensorsSummary) {
  Finding f = values_finding(3);
  for (judge::Trace* t : {&*f.impl_trace, &*f.oracle_trace}) {
    std::vector<double> values(5000, t->backend == "impl" ? 1.0 : 0.0);
    judge::TensorObs& o = t->steps[1].observed[0];
    o.sizes = {5000};
    o.summary = judge::summarise_if_large(values);
    o.values.clear();
  }
  const std::string html = html_report(input({f}));
  EXPECT_EQ(count(html, "<mark class=\"first-diff\" title=\"first difference\"><span class=\"fld\" data-field=\"values\">"), 2u);
  EXPECT_NE(html.find("values: 5000 elements (summarised): min 1, max 1, sum 5000"), std::string::npos);
  EXPECT_NE(html.find("values: 5000 elements (summarised): min 0, max 0, sum 0"), std::string::npos);
}

// The CSP names the SHA-256 of the page's one script and one style: anything else is refused by the browser.
TEST(HtmlReport, ContentSecurityPolicyAllowsOnlyThePagesOwnScriptAndStyle) {
  const std::string html = html_report(input({values_finding(3)}));
  auto between = [&](const std::string& open, const std::string& close) {
    auto a = html.find(open) + open.size();
    return html.substr(a, html.find(close, a) - a);
  };
  auto sha = [](const std::string& text) {
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(text.data(), text.size(), d, &n, EVP_sha256(), nullptr);
    std::string b64(4 * ((n + 2) / 3) + 1, '\0');
    b64.resize(static_cast<std::size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), d, static_cast<int>(n))));
    return b64;
  };
  const std::string csp = between("http-equiv=\"Content-Security-Policy\" content=\"", "\"");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'sha256-" + sha(between("<script>", "</script>")) + "'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("style-src 'sha256-" + sha(between("<style>", "</style>")) + "'"), std::string::npos) << csp;
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_EQ(count(html, "style=\""), 0u);  // inline style attributes would need 'unsafe-inline'
  EXPECT_EQ(count(html, "http://") + count(html, "https://"), 0u);  // nothing to fetch
}

TEST(HtmlReport, AGreenRunSaysSo) {
  ReportInput in = input({});
  RunSummary summary;
  summary.cases = 42;
  in.summary = summary;
  EXPECT_NE(html_report(in).find("impl agreed with LibTorch on all 42 cases"), std::string::npos);
}

// A campaign judged by impl on the CPU names its sides so: impl's device against impl on the CPU, never LibTorch's
// values in the repros (PyTorch judged neither side).
TEST(HtmlReport, ARunJudgedByImplOnTheCpuNamesItsSides) {
  Finding f = values_finding(3);
  f.device = "cuda";
  f.oracle = Oracle::ImplCpu;
  ReportInput in = input({f});
  RunSummary summary;
  summary.cases = 42;
  summary.device = "cuda";
  summary.oracle = Oracle::ImplCpu;
  in.summary = summary;
  const std::string html = html_report(in);
  EXPECT_NE(html.find("<th>impl (cuda on the device)</th><th>impl on the CPU (the oracle)</th>"), std::string::npos);
  EXPECT_NE(html.find("impl (cuda on the device) against impl on the CPU"), std::string::npos);
  EXPECT_NE(html.find("<dt>oracle</dt><dd>impl on the CPU (--oracle impl-cpu)</dd>"), std::string::npos);
  EXPECT_NE(html.find("which judged neither side here"), std::string::npos);
  // The oracle trace's value 4 is impl's: the repros carry no expectation taken from it.
  EXPECT_EQ(html_report(input({values_finding(3)})).find("which judged neither side"), std::string::npos);
  in.summary->findings = 0;
  in.findings.clear();
  EXPECT_NE(html_report(in).find("impl agreed with impl on the CPU on all 42 cases"), std::string::npos);
}

}  // namespace
}  // namespace parity::reports
