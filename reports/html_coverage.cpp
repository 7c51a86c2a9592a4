#include "reports/html_coverage.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "judge/coverage.h"
#include "program/op_table.h"
#include "reports/html_report.h"

namespace parity::reports {

namespace {

// The most-met keys a table shows beyond its goals: run.json has them all.
constexpr std::size_t kMostMetShown = 15;
constexpr std::size_t kStarvedShown = 12;

std::string starved_line(const Coverage& c) {
  const auto starved = reports::starved(c);
  std::string cov = "Coverage: " + (starved.empty() ? std::string("every op, layout kind, memory format, error "
                                                                  "category and autograd situation was exercised.")
                                                    : std::to_string(starved.size()) + " items never exercised: ");
  for (std::size_t i = 0; i < starved.size() && i < kStarvedShown; ++i) cov += (i ? ", " : "") + starved[i];
  if (starved.size() > kStarvedShown) cov += ", \u2026 (run.json lists them all)";
  return "<p class=\"coverage\">" + html_escape(cov) + "</p>";
}

// One table: each goal with its count (0 marked), then the keys met most that are no goal.
std::string role_table(const std::string& title, const Coverage::Counts& counts,
                       const std::vector<std::string>& goals) {
  std::string rows;
  for (const std::string& g : goals) {
    const auto at = counts.find(g);
    const std::uint64_t n = at == counts.end() ? 0 : at->second;
    rows += "<tr><td class=\"mono\">" + html_escape(g) + "</td><td>" + std::to_string(n) + "</td><td>" +
            (n ? "goal" : "goal, never met") + "</td></tr>";
  }
  const std::set<std::string> goal_set(goals.begin(), goals.end());
  std::vector<std::pair<std::uint64_t, std::string>> others;
  for (const auto& [key, n] : counts)
    if (n && !goal_set.contains(key)) others.emplace_back(n, key);
  std::sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < others.size() && i < kMostMetShown; ++i)
    rows += "<tr><td class=\"mono\">" + html_escape(others[i].second) + "</td><td>" +
            std::to_string(others[i].first) + "</td><td></td></tr>";
  return "<h3>" + html_escape(title) + " (" + std::to_string(others.size()) + " met beyond the goals)</h3>" +
         "<table><tr><th>events in order, each @ the role of its tensor</th><th>cases</th><th></th></tr>" + rows +
         "</table>";
}

// One row per operand situation: how many of the ops that can meet it did, and the first few that never did
// (what coverage guidance aims its mutations at).
std::string op_operand_table(const Coverage::Counts& counts) {
  struct Row {
    std::size_t met = 0, keys = 0;
    std::vector<std::string> never;
  };
  std::vector<Row> rows(judge::kOperandClassCount);
  const auto& keys = judge::op_operand_keys();
  const auto& names = judge::op_operand_names();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto c = static_cast<std::size_t>(keys[i].operand_class);
    const auto at = counts.find(names[i]);
    ++rows[c].keys;
    if (at != counts.end() && at->second) ++rows[c].met;
    else rows[c].never.emplace_back(program::spec(keys[i].op).name);
  }
  std::string out;
  for (std::size_t c = 0; c < rows.size(); ++c) {
    std::string never;
    for (std::size_t i = 0; i < rows[c].never.size() && i < kStarvedShown; ++i)
      never += (i ? ", " : "") + rows[c].never[i];
    if (rows[c].never.size() > kStarvedShown) never += ", \u2026";
    out += "<tr><td class=\"mono\">" +
           html_escape(std::string(judge::to_string(static_cast<judge::OperandClass>(c)))) + "</td><td>" +
           std::to_string(rows[c].met) + " of " + std::to_string(rows[c].keys) + "</td><td class=\"mono\">" +
           html_escape(never) + "</td></tr>";
  }
  return "<table><tr><th>operand situation</th><th>ops that met it</th><th>never met</th></tr>" + out + "</table>";
}

}  // namespace

std::string render_coverage(const Coverage& c) {
  return starved_line(c) + "<details><summary class=\"coverage\">Combinations met on one storage, by role</summary>" +
         role_table("Pairs", c.role_pairs, judge::role_pair_goals()) +
         role_table("Triples", c.role_triples, judge::role_triple_goals()) + "</details>" +
         "<details><summary class=\"coverage\">Ops by the situations of their operands</summary>" +
         op_operand_table(c.op_operands) + "</details>";
}

}  // namespace parity::reports
