#include "reports/known_divergences.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <regex>

#include "files/input_file.h"
#include "program/json.h"
#include "program/json_text.h"
#include "reports/error.h"

namespace parity::reports {

namespace {

using nlohmann::json;

bool valid_date(const std::string& s) {
  static const std::regex re(R"(\d{4}-\d{2}-\d{2})");
  if (!std::regex_match(s, re)) return false;
  using namespace std::chrono;
  year_month_day d{year{std::stoi(s.substr(0, 4))}, month{static_cast<unsigned>(std::stoi(s.substr(5, 2)))},
                   day{static_cast<unsigned>(std::stoi(s.substr(8, 2)))}};
  return d.ok();
}

bool valid_version(const std::string& s) {
  static const std::regex re(R"(\d+(\.\d+)*([a-zA-Z+.-][0-9A-Za-z+._-]*)?)");
  return std::regex_match(s, re);
}

std::string quote(const std::string& s) { return json(s.substr(0, 60)).dump(-1, ' ', true, json::error_handler_t::replace); }

std::string string_field(const json& e, const char* key, const std::string& where, bool required) {
  auto it = e.find(key);
  if (it == e.end() || it->is_null()) {
    if (required) throw ReportError(where + ": missing field \"" + key + "\"");
    return {};
  }
  if (!it->is_string()) throw ReportError(where + ": field \"" + key + "\" must be a string");
  return it->get<std::string>();
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative wildcard matching with backtracking to the last '*': linear in practice, no recursion.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

int compare_versions(std::string_view a, std::string_view b) {
  auto next = [](std::string_view& s) -> long long {
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) {
      s = {};
      return 0;
    }
    long long v = 0;
    std::size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v < 1000000000) v = v * 10 + (s[i++] - '0');
    s.remove_prefix(i);
    if (!s.empty() && s[0] == '.') s.remove_prefix(1);
    else s = {};
    return v;
  };
  while (!a.empty() || !b.empty()) {
    long long x = next(a), y = next(b);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::string today_utc() {
  using namespace std::chrono;
  year_month_day d{floor<days>(system_clock::now())};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(d.year()), static_cast<unsigned>(d.month()),
                static_cast<unsigned>(d.day()));
  return buf;
}

KnownDivergences KnownDivergences::load(const std::filesystem::path& path) {
  const std::string text = files::read_text_file(path, std::uintmax_t{16} << 20);
  json j;
  try {
    j = program::parse_json_text(text, path.string());
  } catch (const program::JsonError& e) {
    throw ReportError(e.what());
  }
  return from_json(j, path.string());
}

KnownDivergences KnownDivergences::from_json(const json& j, const std::string& origin) {
  if (!j.is_object()) throw ReportError(origin + ": must be a JSON object {\"schema_version\": 1, \"entries\": [...]}");
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer())
    throw ReportError(origin + ": missing or non-integer field \"schema_version\"");
  if (version->get<std::int64_t>() != program::kSchemaVersion)
    throw ReportError(origin + ": schema_version " + std::to_string(version->get<std::int64_t>()) +
                      " is not supported (expected " + std::to_string(program::kSchemaVersion) + ")");
  auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_array()) throw ReportError(origin + ": field \"entries\" must be an array");
  KnownDivergences out;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const json& e = (*entries)[i];
    std::string where = origin + ": entry " + std::to_string(i);
    if (!e.is_object()) throw ReportError(where + ": must be an object");
    for (const auto& [key, value] : e.items())
      if (key != "signature" && key != "reason" && key != "libtorch_min" && key != "libtorch_max" && key != "expires")
        throw ReportError(where + ": unknown field " + quote(key) +
                          " (known: signature, reason, libtorch_min, libtorch_max, expires)");
    KnownDivergence k;
    k.signature = string_field(e, "signature", where, true);
    if (k.signature.empty()) throw ReportError(where + ": field \"signature\" is empty");
    where += " (" + quote(k.signature) + ")";
    k.reason = string_field(e, "reason", where, true);
    if (k.reason.empty()) throw ReportError(where + ": field \"reason\" is empty: say why this divergence is expected");
    for (const char* key : {"libtorch_min", "libtorch_max"}) {
      std::string v = string_field(e, key, where, false);
      if (v.empty()) continue;
      if (!valid_version(v))
        throw ReportError(where + ": field \"" + key + "\" is " + quote(v) + "; expected a version like 1.13.1");
      (std::string_view(key) == "libtorch_min" ? k.libtorch_min : k.libtorch_max) = v;
    }
    if (k.libtorch_min && k.libtorch_max && compare_versions(*k.libtorch_min, *k.libtorch_max) > 0)
      throw ReportError(where + ": libtorch_min " + *k.libtorch_min + " is above libtorch_max " + *k.libtorch_max);
    k.expires = string_field(e, "expires", where, true);
    if (!valid_date(k.expires))
      throw ReportError(where + ": field \"expires\" is " + quote(k.expires) + "; expected a date YYYY-MM-DD");
    // The first entry in force matches: a second of the same signature over versions the first covers too would
    // never match there, and a ledger edited in two places would say two reasons for one divergence.
    for (std::size_t m = 0; m < out.entries_.size(); ++m) {
      const KnownDivergence& other = out.entries_[m];
      const bool below =
          other.libtorch_max && k.libtorch_min && compare_versions(*other.libtorch_max, *k.libtorch_min) < 0;
      const bool above =
          other.libtorch_min && k.libtorch_max && compare_versions(*k.libtorch_max, *other.libtorch_min) < 0;
      if (other.signature == k.signature && !below && !above)
        throw ReportError(where + ": entry " + std::to_string(m) + " has this signature too, for LibTorch versions " +
                          "this entry covers as well: keep one entry per signature and version range");
    }
    out.entries_.push_back(std::move(k));
  }
  return out;
}

bool KnownDivergences::applies(const KnownDivergence& k, std::string_view libtorch_version, std::string_view today) {
  if (today > k.expires) return false;
  if (k.libtorch_min && compare_versions(libtorch_version, *k.libtorch_min) < 0) return false;
  if (k.libtorch_max && compare_versions(libtorch_version, *k.libtorch_max) > 0) return false;
  return true;
}

const KnownDivergence* KnownDivergences::match(const judge::Signature& signature,
                                               std::string_view libtorch_version, std::string_view today) const {
  const std::string text = signature.to_string();  // what the entries' patterns are written against
  for (const auto& k : entries_)
    if (applies(k, libtorch_version, today) && glob_match(k.signature, text)) return &k;
  return nullptr;
}

std::vector<const KnownDivergence*> KnownDivergences::expired(std::string_view today) const {
  std::vector<const KnownDivergence*> out;
  for (const auto& k : entries_)
    if (today > k.expires) out.push_back(&k);
  return out;
}

}  // namespace parity::reports
