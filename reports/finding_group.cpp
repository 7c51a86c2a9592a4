#include "reports/finding_group.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "program/json.h"
#include "reports/json_fields.h"

namespace parity::reports {

using nlohmann::json;

namespace {

bool smaller(std::uint64_t case_a, const program::Program& a, const FindingGroup::Smallest& b) {
  return std::tuple(a.steps.size(), case_a) < std::tuple(b.program.steps.size(), b.case_index);
}

}  // namespace

void FindingGroup::add_case(std::uint64_t case_index) {
  first_case = count == 0 ? case_index : std::min(first_case, case_index);
  ++count;
}

void FindingGroup::offer(std::uint64_t case_index, const program::Program& p) {
  if (!smallest || smaller(case_index, p, *smallest)) smallest = Smallest{case_index, p};
}

void FindingGroup::merge(const FindingGroup& o) {
  if (o.count == 0) return;
  first_case = count == 0 ? o.first_case : std::min(first_case, o.first_case);
  count += o.count;
  if (o.expected && !expected) {
    expected = true;
    known_reason = o.known_reason;
  }
  if (o.smallest) offer(o.smallest->case_index, o.smallest->program);
}

json to_json(const FindingGroups& groups) {
  std::vector<const FindingGroups::value_type*> order;
  for (const auto& g : groups) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return std::tuple(a->second.expected, b->second.count) < std::tuple(b->second.expected, a->second.count);
  });
  json out = json::array();
  for (const auto* g : order) {
    const FindingGroup& f = g->second;
    json smallest = nullptr;
    if (f.smallest)
      smallest = {{"case_index", program::uint64_to_json(f.smallest->case_index)},
                  {"steps", f.smallest->program.steps.size()},
                  {"program", program::to_json(f.smallest->program)}};
    out.push_back({{"signature", g->first.to_string()},
                   {"count", program::uint64_to_json(f.count)},
                   {"expected", f.expected},
                   {"known_reason", f.known_reason},
                   {"first_case", program::uint64_to_json(f.first_case)},
                   {"smallest", std::move(smallest)}});
  }
  return out;
}

FindingGroups finding_groups_from_json(const json& j) {
  constexpr std::string_view kWhat = "run summary: groups";
  if (!j.is_array()) throw program::JsonError("run summary: field \"groups\" must be an array");
  FindingGroups out;
  for (const json& g : j) {
    if (!g.is_object()) throw program::JsonError("run summary: every group must be an object");
    const std::string text = json_typed<std::string>(g, "signature", kWhat);
    const std::string what = "run summary: group \"" + text.substr(0, 80) + "\"";
    const auto sig = judge::Signature::parse(text);
    if (!sig) throw program::JsonError(what + ": field \"signature\" is not a signature");
    FindingGroup f;
    f.count = json_u64(g, "count", what);
    f.expected = json_typed<bool>(g, "expected", what);
    f.known_reason = json_typed<std::string>(g, "known_reason", what);
    f.first_case = json_u64(g, "first_case", what);
    const json& s = json_field(g, "smallest", what);
    if (!s.is_null()) {
      if (!s.is_object()) throw program::JsonError(what + ": field \"smallest\" must be an object or null");
      FindingGroup::Smallest smallest;
      smallest.case_index = json_u64(s, "case_index", what + ".smallest");
      const json& program = json_field(s, "program", what + ".smallest");
      try {
        smallest.program = program::program_from_json(program);
      } catch (const program::JsonError& e) {
        throw program::JsonError(what + ".smallest: " + e.what());
      }
      f.smallest = std::move(smallest);
    }
    if (!out.emplace(*sig, std::move(f)).second) throw program::JsonError(what + " is listed twice");
  }
  return out;
}

}  // namespace parity::reports
