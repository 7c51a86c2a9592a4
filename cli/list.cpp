// `parity list`: the op table, as programs name it.
#include <cstdio>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "program/op_table.h"

namespace parity::cli {

namespace {

std::string_view kind_name(program::OpKind k) {
  switch (k) {
    case program::OpKind::Factory: return "factory";
    case program::OpKind::Copy: return "copy";
    case program::OpKind::View: return "view";
    case program::OpKind::Arithmetic: return "arithmetic";
    case program::OpKind::Reduction: return "reduction";
    case program::OpKind::InPlace: return "inplace";
    case program::OpKind::Autograd: return "autograd";
  }
  return "?";
}

}  // namespace

int list_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, "usage: parity list\n\nPrints the op table, one op a line: name, kind, arity (tensor "
                                "operands), attributes.\n"))
    return 0;
  Args args("parity list", argv, {});
  if (!args.positional().empty()) throw UsageError("`parity list` takes no arguments");
  for (const auto& op : program::op_table()) {
    std::string attrs;
    for (auto a : op.attrs) attrs += (attrs.empty() ? "" : ",") + std::string(program::attr_name(a));
    std::printf("%-16s %-11s %d  %s\n", std::string(op.name).c_str(), std::string(kind_name(op.kind)).c_str(),
                op.arity, attrs.empty() ? "-" : attrs.c_str());
  }
  return 0;
}

}  // namespace parity::cli
