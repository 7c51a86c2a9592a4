// Command-line arguments of one subcommand: declared flags only, numbers parsed strictly. Anything else is a
// UsageError, which `parity` reports as one line and exit code 2.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace parity::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FlagSpec {
  std::string name;  // "--seconds"
  bool takes_value = true;
  std::string short_name = {};  // "-o": the same flag, stored under `name`
};

class Args {
 public:
  // Parses `--flag value`, `--flag=value`, bare switches and positional arguments. `command` names the
  // subcommand in messages ("parity fuzz").
  Args(const std::string& command, const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags);

  bool has(const std::string& flag) const { return values_.contains(flag); }
  std::optional<std::string> value(const std::string& flag) const;
  const std::vector<std::string>& positional() const { return positional_; }

  std::optional<std::uint64_t> uint64(const std::string& flag, std::uint64_t min, std::uint64_t max) const;
  std::optional<double> number(const std::string& flag, double min, double max) const;

 private:
  std::string command_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// `--help` or `-h` anywhere among a command's arguments: prints `help` to stdout and returns true.
bool print_help_if_asked(const std::vector<std::string>& argv, std::string_view help);

// Strict parsers: the whole text must be the number. Throw UsageError mentioning `what`.
std::uint64_t parse_uint64(const std::string& text, const std::string& what);
std::int64_t parse_int64(const std::string& text, const std::string& what);

}  // namespace parity::cli
