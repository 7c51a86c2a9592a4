// `parity list`: the op table, as programs name it; `--traits` prints every op's traits as a Markdown table,
// `--version-gates` impl's table of behaviours that differ between PyTorch releases, `--derivatives` impl's table
// of backward nodes.
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "impl/autograd/derivatives.h"
#include "impl/version_gate.h"
#include "program/internal_assert.h"
#include "program/op_table.h"
#include "program/step_schema.h"

namespace parity::cli {

namespace {

std::string_view name(program::ResultIs r) {
  using program::ResultIs;
  switch (r) {
    case ResultIs::Fresh: return "fresh";
    case ResultIs::View: return "view";
    case ResultIs::ViewOrCopy: return "view or copy";
    case ResultIs::ExpandedView: return "expanded view";
    case ResultIs::Alias: return "alias";
    case ResultIs::Operand: return "operand 0";
    case ResultIs::OperandIfNoOp: return "operand 0 if no-op";
    case ResultIs::Grad: return "operand 0's .grad";
    case ResultIs::UnsafeAlias: return "unsafe alias";
    case ResultIs::Nothing: return "nothing";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this ResultIs");
}

std::string_view name(program::Saves s) {
  using program::Saves;
  switch (s) {
    case Saves::Nothing: return "";
    case Saves::Self: return "self";
    case Saves::Result: return "result";
    case Saves::Operands: return "operands";
    case Saves::Others: return "others";
    case Saves::Operand1: return "operand 1";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this Saves");
}

std::string operand_rule(const program::Operand0& o) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (o.dtypes == program::kFloating) add("floating");
  else if (o.dtypes == program::kNotBool) add("not bool");
  if (o.min_rank > 0) add("rank >= " + std::to_string(o.min_rank));
  if (o.max_rank < 64) add("rank <= " + std::to_string(o.max_rank));
  if (o.some_dim_nonempty) add("a non-empty dim");
  if (o.requires_grad) add("requires grad");
  if (o.single_element) add("one element");
  if (o.leaf) add("leaf");
  return out;
}

// "rounds": its float32 result may differ in the last bits; "amplifies": it turns such differences of its operand
// into large ones (the generator feeds it no operand carrying them).
std::string rounding(const program::OpSpec& op) {
  if (op.rounds && op.amplifies_rounding) return "rounds, amplifies";
  if (op.rounds) return "rounds";
  return op.amplifies_rounding ? "amplifies" : "";
}

void print_traits() {
  std::printf("| op | kind | arity | in-place of | result | saves | writes | rounding | multi-output | operand 0 | "
              "run-time refusal | overlap rule |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& op : program::op_table()) {
    const char* writes = !op.is_inplace()                                  ? ""
                         : op.writes == program::Writes::Constant ? "constant"
                         : op.writes == program::Writes::Operand1 ? "operand 1"
                         : op.writes == program::Writes::ConstantWhere ? "constant where operand 1"
                         : op.writes == program::Writes::Result ? "result of operands 1.."
                                                                  : "computed";
    std::printf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", std::string(op.name).c_str(),
                std::string(program::to_string(op.kind)).c_str(), op.arity,
                op.inplace_of ? std::string(program::spec(*op.inplace_of).name).c_str() : "",
                std::string(name(op.result)).c_str(), std::string(name(op.saves)).c_str(), writes,
                rounding(op).c_str(), op.multi_output ? "yes" : "",
                operand_rule(op.operand0).c_str(), op.refuses ? "yes" : "", op.overlaps ? "yes" : "");
  }
}

// A Markdown table cell: "|" escaped.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// One row per gate.
void print_version_gates() {
  std::printf("| gate | what | before | since | from |\n|---|---|---|---|---|\n");
  for (const impl::VersionGateRow& r : impl::version_gates())
    std::printf("| `%s` | %s | %s | %s | %s (%s) |\n", std::string(r.name).c_str(), cell(r.what).c_str(),
                cell(r.before).c_str(), cell(r.after).c_str(), r.since.str().c_str(), cell(r.where).c_str());
}

// One row per backward node, as derivatives.yaml lists them: the node, the ops that record it, what it saves (in
// save order), its formula.
void print_derivatives() {
  std::printf("| node | recorded by | saves | formula |\n|---|---|---|---|\n");
  for (const impl::autograd::DerivativeRow& r : impl::autograd::derivatives()) {
    std::string saved;
    for (std::string_view s : r.saved) saved += (saved.empty() ? "" : ", ") + std::string(s);
    std::printf("| `%s` | %s | %s | %s |\n", std::string(r.name).c_str(), cell(r.ops).c_str(), saved.c_str(),
                cell(r.formula).c_str());
  }
}

}  // namespace

int list_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, "usage: parity list [--traits | --schema | --version-gates | --derivatives]\n\nPrints the op table, one op a line: "
                                "name, kind, arity (tensor operands), attributes.\n"
                                "  --traits  every op's traits (what its result is, what it saves, ...) as a Markdown "
                                "table\n"
                                "  --schema  the JSON Schema of steps' per-op parts, generated from the table; after "
                                "changing the table:\n"
                                "            parity list --schema > reports/schema/ops.schema.json\n"
                                "  --version-gates  the behaviours impl follows per PyTorch release "
                                "(impl/version_gates.def), as a Markdown table\n"
                                "  --derivatives  impl's backward nodes (impl/autograd/derivatives.def): the ops that "
                                "record each,\n"
                                "            what it saves and its formula, as a Markdown table\n"))
    return 0;
  Args args("parity list", argv, {{"--traits", false}, {"--schema", false}, {"--version-gates", false}, {"--derivatives", false}});
  if (!args.positional().empty()) throw UsageError("`parity list` takes no arguments");
  if (args.has("--traits") + args.has("--schema") + args.has("--version-gates") + args.has("--derivatives") > 1)
    throw UsageError("--traits, --schema, --version-gates and --derivatives exclude each other");
  if (args.has("--derivatives")) {
    print_derivatives();
    return 0;
  }
  if (args.has("--version-gates")) {
    print_version_gates();
    return 0;
  }
  if (args.has("--schema")) {
    std::cout << program::step_schema_text();
    return 0;
  }
  if (args.has("--traits")) {
    print_traits();
    return 0;
  }
  for (const auto& op : program::op_table()) {
    std::string attrs;
    for (auto a : op.attrs) attrs += (attrs.empty() ? "" : ",") + std::string(program::attr_name(a));
    std::printf("%-16s %-11s %d  %s\n", std::string(op.name).c_str(), std::string(program::to_string(op.kind)).c_str(),
                op.arity, attrs.empty() ? "-" : attrs.c_str());
  }
  return 0;
}

}  // namespace parity::cli
