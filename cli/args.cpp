#include "cli/args.h"

#include <charconv>
#include <cmath>
#include <iostream>

#include "program/spelling.h"

namespace parity::cli {

namespace {

std::string shown(const std::string& s) { return "\"" + s.substr(0, 60) + (s.size() > 60 ? "...\"" : "\""); }

}  // namespace

Args::Args(const std::string& command, const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags)
    : command_(command) {
  bool only_positional = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (only_positional || a.size() < 2 || a[0] != '-') {
      positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    std::string name = a, value;
    bool inline_value = false;
    if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    }
    const FlagSpec* spec = nullptr;
    for (const auto& f : flags)
      if (f.name == name || (!f.short_name.empty() && f.short_name == name)) spec = &f;
    if (!spec) {
      std::vector<std::string> names;
      for (const auto& f : flags) names.push_back(f.name);
      throw UsageError("unknown flag " + shown(name) + " for `" + command_ + "`" + program::did_you_mean(name, names) +
                       " (see `" + command_ + " --help`)");
    }
    name = spec->name;
    if (values_.contains(name)) throw UsageError(name + " is given twice");
    if (spec->takes_value) {
      if (!inline_value) {
        if (i + 1 >= argv.size()) throw UsageError(name + " needs a value (see `" + command_ + " --help`)");
        value = argv[++i];
      }
    } else if (inline_value) {
      throw UsageError(name + " takes no value");
    }
    values_[name] = value;
  }
}

std::optional<std::string> Args::value(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::uint64_t> Args::uint64(const std::string& flag, std::uint64_t min, std::uint64_t max) const {
  auto v = value(flag);
  if (!v) return std::nullopt;
  std::uint64_t n = parse_uint64(*v, flag);
  if (n < min || n > max)
    throw UsageError(flag + " must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                     std::to_string(n));
  return n;
}

std::optional<double> Args::number(const std::string& flag, double min, double max) const {
  auto v = value(flag);
  if (!v) return std::nullopt;
  double d = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), d);
  if (v->empty() || ec != std::errc() || ptr != v->data() + v->size() || !std::isfinite(d))
    throw UsageError(flag + " needs a number, got " + shown(*v));
  if (d < min || d > max)
    throw UsageError(flag + " must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + *v);
  return d;
}

std::uint64_t parse_uint64(const std::string& text, const std::string& what) {
  std::uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec == std::errc::result_out_of_range)
    throw UsageError(what + " needs a non-negative integer below 2^64, got " + shown(text));
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw UsageError(what + " needs a non-negative integer, got " + shown(text));
  return n;
}

std::int64_t parse_int64(const std::string& text, const std::string& what) {
  std::int64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw UsageError(what + " needs an integer, got " + shown(text));
  return n;
}

bool print_help_if_asked(const std::vector<std::string>& argv, std::string_view help) {
  for (const auto& a : argv)
    if (a == "--help" || a == "-h") {
      std::cout << help;
      return true;
    }
  return false;
}

}  // namespace parity::cli
