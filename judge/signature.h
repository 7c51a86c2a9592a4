// A divergence's signature: what groups findings as one bug, however often a campaign hits it. Written as
// "<op>:<kind>[:<detail>]" in findings.jsonl, run.json and the known-divergences ledger
// (reports/schema/common.schema.json, signature); to_string and parse are the only code that knows that text.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "judge/divergence_kind.h"
#include "judge/error_category.h"

namespace parity::judge {

// Each side's error category where both refused (error_category; grad_fn when reading it raised on both);
// an absent one is written "none".
struct SideCategories {
  std::optional<ErrorCategory> impl;
  std::optional<ErrorCategory> oracle;
  bool operator==(const SideCategories&) const = default;
};

// The signal that killed a crashed process, as <signal.h> names it: "SIGSEGV".
struct Signal {
  std::string name;  // "SIG" and capitals or digits
  bool operator==(const Signal&) const = default;
};

struct Signature {
  static constexpr std::string_view kProgramOp = "program";  // the divergence is not tied to a step

  std::string op;  // the first differing step's op name ([a-z0-9_]+), or kProgramOp
  DivergenceKind kind = DivergenceKind::Values;
  // Status: the category of the side that raised, if either did ("neg:status:argument"); Message and
  // ExceptionType: the category both raised in ("permute:message:shape", "select:exception_type:index_range").
  // ErrorCategory (always) and GradFn (when both raised): each side's ("...:impl=shape,oracle=index_range").
  // Crash: the signal that killed the process, when one did ("neg:crash:SIGSEGV").
  // Every other kind: nothing.
  std::variant<std::monostate, ErrorCategory, SideCategories, Signal> detail;

  std::string to_string() const;
  // The signature to_string wrote, or nullopt for any other text (unknown kind or category, a detail the
  // kind does not take, a missing or empty part, anything extra). parse(s)->to_string() == s.
  static std::optional<Signature> parse(std::string_view);

  bool operator==(const Signature&) const = default;
};

// Ordered as their text, so that maps of signatures list in the order run.json always had.
bool operator<(const Signature&, const Signature&);

}  // namespace parity::judge
