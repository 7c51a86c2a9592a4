// `parity claims`: the seed claims (properties/claims), each run on LibTorch and on impl, with LibTorch's
// verdict and whether impl agrees. Each side of each claim runs in a child process with a time limit, as
// `parity fuzz` runs its cases: the parent never runs a backend, and a crash or hang is a verdict, not the end.
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/memory_limit.h"
#include "cli/render.h"
#include "engine/evaluate.h"
#include "engine/evaluation_process.h"
#include "engine/isolation.h"
#include "engine/process_outcome.h"
#include "impl_backend/backend.h"
#include "judge/trace_json.h"
#include "oracle/torch_backend.h"
#include "program/json.h"
#include "program/json_text.h"
#include "protocol/remote_backend.h"
#include "cli/backend_flags.h"
#include "cli/claims/claim.h"
#include "cli/claims/evaluate.h"

namespace parity::cli {

namespace {

using nlohmann::json;

const std::string kHelp = std::string(R"(usage: parity claims [--json | --markdown] [--only ID] [--timeout-ms T] [--memory-mb M] [--against OTHER_PARITY] [--impl-cmd CMD] [--oracle-cmd CMD]

Checks the factual claims of the tutorials in shared/seeds (what aliases, what requires grad, which gradient
a snippet computes, what raises, which memory format survives). Each claim is a small program and a check
(cli/claims/seed_claims.cpp). LibTorch decides whether a claim holds or is refuted, and shows the
observed value that decides; impl agrees when it reaches the same verdict with the same observed value.

options:
  --json           one JSON object with a "claims" array (id, source, statement, both verdicts, agreement)
  --markdown       a Markdown table, to paste into a report
  --only ID        check one claim
  --timeout-ms T   time limit of one claim on one backend (default 10000)
  --memory-mb M    address-space limit of one claim on one backend in MiB (default 4096; 0: none); a claim
                   that exceeds it did not run (out_of_memory). Not applied in an AddressSanitizer build (its
                   shadow memory takes terabytes of address space), which says so on stderr
                   when the flag is given
  --against P      also show each claim's verdict on the LibTorch of another parity build (its parity binary,
                   e.g. build-torch-2.15/parity, which runs `claims --json`): a column per release, and the
                   claims whose verdict differs between them
)") + backend_flags_help(false) + R"(
exit status: 0 impl agrees with LibTorch on every claim, 1 it disagrees on one or more (or a claim's program
did not run as intended on LibTorch), 2 bad usage or setup.
)";

constexpr std::string_view kDeepcopyNote =
    "LibTorch has no deepcopy: its side of copy.deepcopy is built from LibTorch calls following Python's "
    "Tensor.__deepcopy__ (torch/_tensor.py, 1.13).";

// ---- one side of one claim in a child process ----------------------------------------------------------------

// The trace of `p` on one backend, or why there is none (crash, time limit, escaped exception).
struct SideRun {
  std::optional<judge::Trace> trace;
  std::string failure;
};

std::string side_result(const program::Program& p, bool libtorch) {
  json result;
  try {
    auto backend = libtorch ? oracle::make_torch_backend() : impl_backend::make_impl_backend();
    if (!backend) {
      result = {{"fatal", std::string(libtorch ? "the LibTorch" : "the impl") + " backend is not available"}};
    } else {
      try {
        result = {{"trace", judge::to_json(judge::run(*backend, p))}};
      } catch (const std::exception& e) {
        result = {{"escaped", e.what()}};
      }
    }
  } catch (const std::exception& e) {
    result = {{"fatal", std::string("cannot start the backend: ") + e.what()}};
  }
  return result.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The limits of one side of one claim, as `parity fuzz` puts on one case.
struct Limits {
  std::chrono::milliseconds timeout{10000};
  std::size_t memory_bytes = engine::kDefaultMemoryLimitBytes;
};

SideRun run_side(const program::Program& p, bool libtorch, const Limits& limits) {
  static engine::Progress* const progress = engine::map_shared_progress(1);
  progress->reset();
  const engine::ChildEnd end = engine::run_isolated(
      [&] {
        engine::enter_evaluating_process(limits.memory_bytes, progress);
        return side_result(p, libtorch);
      },
      limits.timeout);
  SideRun out;
  const engine::ProcessOutcome ended =
      engine::outcome_of(end, progress->out_of_memory.load(), limits.timeout, limits.memory_bytes);
  if (ended.kind != engine::ProcessOutcome::Kind::Answered) {
    out.failure = ended.describe();
    return out;
  }
  const std::string& text = end.output;
  try {
    json r = program::parse_json_text(text, "the child's answer");
    if (r.contains("fatal")) throw engine::EvaluationError(r["fatal"].get<std::string>());
    if (r.contains("escaped")) {
      out.failure = "an exception escaped the run: " + r["escaped"].get<std::string>();
      return out;
    }
    out.trace = judge::trace_from_json(r.at("trace"));
  } catch (const engine::EvaluationError&) {
    throw;
  } catch (const std::exception& e) {
    out.failure = engine::unreadable_answer(e.what()).describe();
  }
  return out;
}

// A protocol backend's side: in this process, since the backend is a process of its own (isolated, and started
// once for every claim); an answer later than the claim's time limit loses it.
SideRun run_remote(const program::Program& p, protocol::RemoteBackend& backend) {
  SideRun out;
  try {
    out.trace = judge::run(backend, p);
  } catch (const judge::SessionLost& e) {
    out.failure = std::string("the protocol backend failed: ") + e.what();
  } catch (const protocol::ProtocolError& e) {
    out.failure = std::string("the protocol backend cannot be started: ") + e.what();
  } catch (const std::exception& e) {
    out.failure = "an exception escaped the run: " + std::string(e.what());
  }
  return out;
}

claims::SideResult judge_side(const claims::Claim& c, bool libtorch, const Limits& limits,
                              protocol::RemoteBackend* remote) {
  SideRun run = remote ? run_remote(c.program, *remote) : run_side(c.program, libtorch, limits);
  if (!run.trace) return claims::no_trace(run.failure);
  return claims::judge(c, *run.trace);
}

// ---- another release's verdicts ------------------------------------------------------------------------------

// What another build's LibTorch says of each claim (`OTHER claims --json`), by claim id.
struct OtherRelease {
  std::string libtorch_version;
  std::map<std::string, json> libtorch;  // the "libtorch" object of each claim: holds, observed, ran_as_intended
};

OtherRelease other_release(const std::string& parity, const std::optional<std::string>& only, const Limits& limits) {
  std::string command = "'" + parity + "' claims --json --timeout-ms " + std::to_string(limits.timeout.count()) +
                        " --memory-mb " + std::to_string(limits.memory_bytes >> 20);
  if (only) command += " --only '" + *only + "'";
  if (parity.find('\'') != std::string::npos || (only && only->find('\'') != std::string::npos))
    throw UsageError("--against and --only must not contain a single quote");
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw UsageError("cannot run " + parity);
  std::string text;
  char chunk[1 << 16];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) text.append(chunk, n);
  const int status = ::pclose(pipe);
  // 0 and 1 are verdicts (impl's agreement on that build); anything else is a failure to run.
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
    throw UsageError(parity + " claims --json failed (exit status " +
                     std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  OtherRelease out;
  try {
    const json j = program::parse_json_text(text, parity + " claims --json");
    out.libtorch_version = j.at("libtorch_version").get<std::string>();
    for (const json& c : j.at("claims")) out.libtorch[c.at("id").get<std::string>()] = c.at("libtorch");
  } catch (const std::exception& e) {
    throw UsageError(parity + " claims --json printed no claims: " + std::string(e.what()).substr(0, 200));
  }
  return out;
}

// A claim's verdict on the other release ("holds", "refuted", "BROKEN"), or "-" when that build lacks the claim.
std::string other_cell(const OtherRelease& o, const std::string& id) {
  auto it = o.libtorch.find(id);
  if (it == o.libtorch.end()) return "-";
  if (!it->second.value("ran_as_intended", false)) return "BROKEN";
  return it->second.value("holds", false) ? "holds" : "refuted";
}

// ---- rendering -----------------------------------------------------------------------------------------------

std::string verdict_word(const claims::Verdict& v) { return v.holds ? "holds" : "refuted"; }

std::string sources_of(const claims::Claim& c) {
  std::string s = c.source;
  for (const auto& a : c.also_in) s += ", " + a;
  return s;
}

bool uses_deepcopy(const claims::Claim& c) {
  return std::any_of(c.program.steps.begin(), c.program.steps.end(),
                     [](const program::Step& s) { return s.op == program::OpId::Deepcopy; });
}

struct Row {
  const claims::Claim* claim;
  claims::ClaimResult result;
};

struct Counts {
  std::size_t claims = 0, holding = 0, refuted = 0, disagreements = 0, broken = 0;
  std::vector<std::string> broken_ids;
  bool deepcopy = false;
};

Counts count(const std::vector<Row>& rows) {
  Counts n;
  for (const Row& r : rows) {
    ++n.claims;
    if (!r.result.libtorch.ran_as_intended()) {
      ++n.broken;
      n.broken_ids.push_back(r.claim->id);
    } else if (r.result.libtorch.verdict.holds) {
      ++n.holding;
    } else {
      ++n.refuted;
    }
    if (!r.result.agrees) ++n.disagreements;
    n.deepcopy = n.deepcopy || uses_deepcopy(*r.claim);
  }
  return n;
}

std::string footer(const Counts& n) {
  std::string s = std::to_string(n.claims) + (n.claims == 1 ? " claim: " : " claims: ") +
                  std::to_string(n.holding) + " hold on LibTorch, " + std::to_string(n.refuted) +
                  " refuted on LibTorch; impl disagrees on " + std::to_string(n.disagreements) + ".";
  if (n.broken) {
    s += " " + std::to_string(n.broken) + " did not run as intended on LibTorch (broken claims):";
    for (const auto& id : n.broken_ids) s += " " + id;
    s += ".";
  }
  return s;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string libtorch_cell(const claims::SideResult& s) {
  return s.ran_as_intended() ? verdict_word(s.verdict) : "BROKEN";
}

// The claims whose LibTorch verdict differs between the two releases.
std::vector<std::string> changed_between(const std::vector<Row>& rows, const OtherRelease& other) {
  std::vector<std::string> ids;
  for (const Row& r : rows)
    if (other_cell(other, r.claim->id) != libtorch_cell(r.result.libtorch)) ids.push_back(r.claim->id);
  return ids;
}

std::string changed_line(const std::vector<Row>& rows, const OtherRelease& other) {
  const auto ids = changed_between(rows, other);
  std::string s = "LibTorch " + oracle::torch_version() + " and " + other.libtorch_version + ": ";
  if (ids.empty()) return s + "every claim has the same verdict.";
  s += std::to_string(ids.size()) + (ids.size() == 1 ? " claim differs:" : " claims differ:");
  for (const auto& id : ids) s += " " + id;
  return s + ".";
}

void print_table(const std::vector<Row>& rows, const Counts& n, const OtherRelease* other) {
  std::size_t id_width = 2, source_width = 6;
  for (const Row& r : rows) {
    id_width = std::max(id_width, r.claim->id.size());
    source_width = std::max(source_width, r.claim->source.size());
  }
  const std::string this_release = "libtorch " + oracle::torch_version();
  const std::string other_release = other ? "libtorch " + other->libtorch_version : "";
  const std::size_t lt_width = std::max<std::size_t>(8, this_release.size());
  std::cout << pad("id", id_width) << "  " << pad("source", source_width) << "  " << pad(other ? this_release : "libtorch", lt_width) << "  ";
  if (other) std::cout << pad(other_release, std::max<std::size_t>(8, other_release.size())) << "  ";
  std::cout << pad("impl", 10) << "  observed (libtorch)\n";
  for (const Row& r : rows) {
    const auto& lt = r.result.libtorch;
    const auto& im = r.result.impl;
    std::cout << pad(r.claim->id, id_width) << "  " << pad(r.claim->source, source_width) << "  "
              << pad(libtorch_cell(lt), lt_width) << "  ";
    if (other) {
      const std::string cell = other_cell(*other, r.claim->id);
      std::cout << pad(cell + (cell != libtorch_cell(lt) ? " *" : ""), std::max<std::size_t>(8, other_release.size()))
                << "  ";
    }
    std::cout << pad(r.result.agrees ? "agrees" : "DISAGREES", 10) << "  " << one_line(lt.verdict.observed) << "\n";
    if (!r.result.agrees)
      std::cout << pad("", id_width + source_width + 4) << "impl: " << verdict_word(im.verdict) << ": "
                << one_line(im.verdict.observed) << "\n";
  }
  std::cout << "\n" << footer(n) << "\n";
  if (other)
    std::cout << changed_line(rows, *other) << (changed_between(rows, *other).empty() ? "" : " (* marks them)")
              << "\n";
  if (n.deepcopy) std::cout << "note: " << kDeepcopyNote << "\n";
}

std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : one_line(text)) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

void print_markdown(const std::vector<Row>& rows, const Counts& n, const OtherRelease* other) {
  if (other)
    std::cout << "| id | source | claim | LibTorch " << oracle::torch_version() << " | LibTorch " << other->libtorch_version
              << " | observed on LibTorch " << oracle::torch_version() << " | impl |\n"
              << "|---|---|---|---|---|---|---|\n";
  else
    std::cout << "| id | source | claim | LibTorch | observed on LibTorch | impl |\n"
              << "|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const auto& lt = r.result.libtorch;
    const auto& im = r.result.impl;
    std::string impl_cell = r.result.agrees ? "agrees"
                                            : "**disagrees**: " + verdict_word(im.verdict) + ", " + im.verdict.observed;
    std::cout << "| `" << r.claim->id << "` | " << md_cell(sources_of(*r.claim)) << " | " << md_cell(r.claim->statement)
              << " | " << (lt.ran_as_intended() ? verdict_word(lt.verdict) : "**broken**") << " | ";
    if (other) {
      const std::string cell = other_cell(*other, r.claim->id);
      std::cout << (cell != libtorch_cell(lt) ? "**" + cell + "**" : cell) << " | ";
    }
    std::cout << md_cell(lt.verdict.observed) << " | " << md_cell(impl_cell) << " |\n";
  }
  std::cout << "\n" << footer(n) << "\n";
  if (other) std::cout << "\n" << changed_line(rows, *other) << "\n";
  if (n.deepcopy) std::cout << "\nNote: " << kDeepcopyNote << "\n";
}

using ordered = nlohmann::ordered_json;  // keys in the order written: id first

ordered side_json(const claims::SideResult& s) {
  ordered j = {{"holds", s.verdict.holds}, {"observed", s.verdict.observed}, {"ran_as_intended", s.ran_as_intended()}};
  if (!s.ran_as_intended()) j["problem"] = s.problem;
  return j;
}

void print_json(const std::vector<Row>& rows, const Counts& n, const OtherRelease* other) {
  ordered out;
  out["libtorch_version"] = oracle::torch_version();
  ordered list = ordered::array();
  for (const Row& r : rows)
    list.push_back({{"id", r.claim->id},
                    {"source", r.claim->source},
                    {"also_in", r.claim->also_in},
                    {"statement", r.claim->statement},
                    {"libtorch", side_json(r.result.libtorch)},
                    {"impl", side_json(r.result.impl)},
                    {"agrees", r.result.agrees}});
  if (other)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto it = other->libtorch.find(rows[i].claim->id);
      list[i]["other_libtorch"] = it == other->libtorch.end() ? ordered(nullptr) : ordered::parse(it->second.dump());
    }
  out["claims"] = std::move(list);
  if (other) {
    out["other_libtorch_version"] = other->libtorch_version;
    out["changed_between_releases"] = changed_between(rows, *other);
  }
  out["summary"] = {{"claims", n.claims},
                    {"holding", n.holding},
                    {"refuted", n.refuted},
                    {"impl_disagreements", n.disagreements},
                    {"broken_on_libtorch", n.broken_ids}};
  out["notes"] = ordered::array();
  if (n.deepcopy) out["notes"].push_back(kDeepcopyNote);
  std::cout << out.dump(2, ' ', false, ordered::error_handler_t::replace) << "\n";
}

}  // namespace

int claims_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  std::vector<FlagSpec> flags = {{"--json", false}, {"--markdown", false}, {"--only"}, {"--timeout-ms"},
                                 {"--memory-mb"}, {"--against"}};
  for (FlagSpec& f : backend_flag_specs(false)) flags.push_back(std::move(f));
  Args args("parity claims", argv, flags);
  if (!args.positional().empty())
    throw UsageError("`parity claims` takes no positional arguments (see `parity claims --help`)");
  if (args.has("--json") && args.has("--markdown")) throw UsageError("--json and --markdown exclude each other");
  Limits limits;
  if (auto t = args.uint64("--timeout-ms", 1, 24ull * 3600 * 1000)) limits.timeout = std::chrono::milliseconds(*t);
  limits.memory_bytes = memory_limit_bytes(args, "parity claims");
  const BackendChoice backends = choose_backends(args, "parity claims", false, in_process_oracle(reports::Oracle::LibTorch));
  if (backends.record) print_sides(*backends.record);
  // Protocol sides, each one process for every claim.
  std::unique_ptr<protocol::RemoteBackend> remote[2];
  for (int side = 0; side < 2; ++side) {
    const std::string& command = side == 0 ? backends.sides.oracle_cmd : backends.sides.impl_cmd;
    if (command.empty()) continue;
    remote[side] = std::make_unique<protocol::RemoteBackend>(command, backends.sides.start_timeout);
    remote[side]->set_answer_timeout(limits.timeout);
  }

  std::vector<const claims::Claim*> selected;
  const auto only = args.value("--only");
  for (const auto& c : claims::seed_claims())
    if (!only || c.id == *only) selected.push_back(&c);
  if (only && selected.empty()) throw UsageError("no claim has the id \"" + one_line(*only, 60) + "\"");

  std::vector<Row> rows;
  for (const claims::Claim* c : selected) {
    claims::SideResult lt = judge_side(*c, /*libtorch=*/true, limits, remote[0].get());
    claims::SideResult im = judge_side(*c, /*libtorch=*/false, limits, remote[1].get());
    rows.push_back({c, claims::combine(std::move(lt), std::move(im))});
  }
  std::optional<OtherRelease> other;
  if (auto against = args.value("--against")) other = other_release(*against, only, limits);
  const OtherRelease* o = other ? &*other : nullptr;
  const Counts n = count(rows);
  if (args.has("--json")) print_json(rows, n, o);
  else if (args.has("--markdown")) print_markdown(rows, n, o);
  else print_table(rows, n, o);
  return n.disagreements == 0 && n.broken == 0 ? 0 : 1;
}

}  // namespace parity::cli
