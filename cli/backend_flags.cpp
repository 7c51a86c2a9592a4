#include "cli/backend_flags.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "cli/setting_flag.h"
#include "impl_backend/backend.h"
#include "oracle/torch_backend.h"
#include "program/op_table.h"
#include "protocol/remote_backend.h"

namespace parity::cli {

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The names of `flag` as ops; a name parity does not know is a UsageError that lists them.
std::vector<program::OpId> op_names(const Args& args, const std::string& flag) {
  std::vector<program::OpId> out;
  if (auto v = args.value(flag))
    for (const std::string& name : split_commas(*v)) {
      const auto op = program::find_op(name);
      if (!op)
        throw UsageError(flag + " names \"" + name.substr(0, 40) + "\", which is no op" + program::op_name_hint(name) +
                         " (`parity list` lists them)");
      out.push_back(*op);
    }
  return out;
}

std::optional<protocol::Capabilities> probe_side(const std::string& command, const std::string& flag,
                                                 std::chrono::milliseconds start) {
  if (command.empty()) return std::nullopt;
  try {
    std::fprintf(stderr, "parity: starting the %s backend `%s`\n", flag.c_str(), command.c_str());
    return protocol::probe(command, start);
  } catch (const protocol::ProtocolError& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

reports::RunSummary::Side side_of(const std::optional<protocol::Capabilities>& c, const std::string& command,
                                  reports::RunSummary::Side in_process) {
  if (!c) return in_process;
  return {command, c->library, c->version, c->protocol};
}

BackendChoice choose(const engine::EvalSides& given, generators::Selection selection, bool narrowed,
                     const reports::RunSummary::Side& in_process_oracle) {
  BackendChoice out;
  out.sides = given;
  const auto impl = probe_side(given.impl_cmd, "--impl-cmd", given.start_timeout);
  const auto oracle = probe_side(given.oracle_cmd, "--oracle-cmd", given.start_timeout);
  if (!impl && !oracle) {
    out.selection = std::move(selection);
    return out;
  }
  const std::size_t n = program::op_table().size();
  if (selection.ops.empty()) selection.ops.assign(n, true);
  judge::Observations compared;
  std::vector<std::string> left_out;
  for (const auto* c : {&impl, &oracle}) {
    if (!*c) continue;
    out.cuda = out.cuda && (*c)->has_device(program::Device::CUDA);
    compared = compared & (*c)->observations;
    if (!selection.dtypes.empty() || narrowed) {
      std::erase_if(selection.dtypes, [&](program::DType d) { return !(*c)->has_dtype(d); });
    } else {
      selection.dtypes = (*c)->dtypes;
    }
    narrowed = true;
    for (std::size_t i = 0; i < n; ++i) selection.ops[i] = selection.ops[i] && (*c)->ops[i];
  }
  if (selection.dtypes.empty()) throw UsageError("the two sides have no dtype in common, or --dtypes left none");
  for (const program::OpSpec& op : program::op_table())
    if (!selection.ops[static_cast<std::size_t>(op.id)]) left_out.push_back(std::string(op.name));
  out.sides.compared = compared;
  out.selection = std::move(selection);
  reports::RunSummary::Backends record;
  record.impl = side_of(impl, given.impl_cmd, {"", "impl", impl_backend::make_impl_backend()->version(), 0});
  record.oracle = side_of(oracle, given.oracle_cmd, in_process_oracle);
  for (judge::Observation o : compared.missing()) record.not_compared.push_back(std::string(judge::to_string(o)));
  record.ops_left_out = std::move(left_out);
  out.record = std::move(record);
  return out;
}

}  // namespace

void BackendChoice::require_cuda(bool needed, const std::string& command) const {
  if (needed && !cuda)
    throw UsageError(command + ": the work has cuda steps, and a protocol backend does not declare the cuda device");
}

reports::RunSummary::Side in_process_oracle(reports::Oracle oracle) {
  switch (oracle) {
    case reports::Oracle::LibTorch: return {"", "LibTorch", oracle::torch_version(), 0};
    case reports::Oracle::ImplCpu: return {"", "impl on the CPU", impl_backend::make_impl_backend()->version(), 0};
  }
  return {};
}

void print_sides(const reports::RunSummary::Backends& b) {
  auto side = [](const reports::RunSummary::Side& s) {
    return s.library + " " + s.version + (s.command.empty() ? " (in process)" : " (protocol " + std::to_string(s.protocol) + ": " + s.command + ")");
  };
  std::fprintf(stderr, "parity: library under test: %s\nparity: judged by: %s\n", side(b.impl).c_str(), side(b.oracle).c_str());
  if (!b.not_compared.empty()) {
    std::string words;
    for (const std::string& name : b.not_compared)
      if (auto o = judge::parse_observation(name)) words += (words.empty() ? "" : ", ") + std::string(judge::describe(*o));
    std::fprintf(stderr, "parity: not compared: %s (a side does not observe them)\n", words.c_str());
  }
  if (!b.ops_left_out.empty())
    std::fprintf(stderr, "parity: %zu ops left out of the programs (a side does not declare them)\n", b.ops_left_out.size());
}

std::vector<FlagSpec> backend_flag_specs(bool generating) {
  std::vector<FlagSpec> flags = {{"--impl-cmd"}, {"--oracle-cmd"}, {"--backend-start-ms"}};
  if (generating) flags.insert(flags.end(), {{"--ops"}, {"--skip-ops"}, {"--dtypes"}});
  return flags;
}

std::string backend_flags_help(bool generating) {
  std::string help =
      "  --impl-cmd CMD   the library under test: a backend program speaking parity's backend protocol\n"
      "                   (docs/backend-protocol.md), started with `bash -c CMD`; default: impl, in process\n"
      "  --oracle-cmd CMD the judge, as a protocol backend (backends/python/torch_backend.py makes any pip-\n"
      "                   installed PyTorch one); default: this build's LibTorch, in process\n"
      "  --backend-start-ms T  how long a protocol backend may take to answer its handshake (default 30000)\n";
  if (generating)
    help +=
        "  --ops A,B,...    programs use only these ops (and what a protocol backend declares)\n"
        "  --skip-ops A,... programs never use these ops\n"
        "  --dtypes A,...   programs ask only for these dtypes (float32, float64, float16, bfloat16, int64,\n"
        "                   int32, bool)\n";
  return help;
}

BackendChoice choose_backends(const Args& args, const std::string& command, bool generating,
                              const reports::RunSummary::Side& in_process_oracle) {
  engine::EvalSides sides;
  if (auto c = args.value("--impl-cmd")) {
    if (c->empty()) throw UsageError("--impl-cmd needs a command (see `" + command + " --help`)");
    sides.impl_cmd = *c;
  }
  if (auto c = args.value("--oracle-cmd")) {
    if (c->empty()) throw UsageError("--oracle-cmd needs a command (see `" + command + " --help`)");
    sides.oracle_cmd = *c;
  }
  if (auto t = uint64_in(args, engine::kBackendStartMsRange)) sides.start_timeout = std::chrono::milliseconds(*t);
  generators::Selection selection;
  bool narrowed = false;
  if (generating) {
    const auto only = op_names(args, "--ops"), skip = op_names(args, "--skip-ops");
    if (!only.empty() || !skip.empty()) {
      selection.ops.assign(program::op_table().size(), only.empty());
      for (program::OpId op : only) selection.ops[static_cast<std::size_t>(op)] = true;
      for (program::OpId op : skip) selection.ops[static_cast<std::size_t>(op)] = false;
      const bool factory = std::any_of(program::op_table().begin(), program::op_table().end(), [&](const auto& op) {
        return op.kind == program::OpKind::Factory && selection.ops[static_cast<std::size_t>(op.id)];
      });
      if (!factory) throw UsageError("--ops/--skip-ops leave no factory (rand, zeros, ...): no program could make a tensor");
    }
    if (auto v = args.value("--dtypes")) {
      for (const std::string& name : split_commas(*v)) {
        const auto d = program::parse_dtype(name);
        if (!d) throw UsageError("--dtypes names \"" + name.substr(0, 40) + "\", which is no dtype (float32, float64, float16, bfloat16, int64, int32, bool)");
        selection.dtypes.push_back(*d);
      }
      if (selection.dtypes.empty()) throw UsageError("--dtypes needs at least one dtype");
      narrowed = true;
    }
  }
  return choose(sides, std::move(selection), narrowed, in_process_oracle);
}

BackendChoice choose_backends(const engine::EvalSides& sides, const generators::Selection& selection,
                              const reports::RunSummary::Side& in_process_oracle) {
  BackendChoice c = choose(sides, selection, !selection.dtypes.empty(), in_process_oracle);
  if (!(c.selection == selection) && !selection.everything())
    throw UsageError("the campaign's backends no longer declare every op and dtype its journal selected");
  return c;
}

}  // namespace parity::cli
