#include "engine/evaluation_process.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <nlohmann/json.hpp>

#include "engine/process_outcome.h"
#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "judge/error_category.h"
#include "judge/trace_json.h"
#include "oracle/torch_backend.h"
#include "protocol/remote_backend.h"
#include "program/json.h"
#include "program/json_text.h"
#include "program/op_table.h"

namespace parity::engine {

namespace {

using nlohmann::json;
using judge::Divergence;
using judge::ErrorCategory;

// Forwards to a backend's session and records each step before it runs.
class TracingSession : public judge::Session {
 public:
  TracingSession(std::unique_ptr<judge::Session> inner, Progress* p) : inner_(std::move(inner)), progress_(p) {}
  // A protocol backend runs the step in will_run: the step is recorded from there on.
  void will_run(const program::Step& step, int index, const judge::StepReads& reads) override {
    progress_->step.store(index, std::memory_order_relaxed);
    inner_->will_run(step, index, reads);
  }
  void execute(const program::Step& step, int index) override {
    progress_->step.store(index, std::memory_order_relaxed);
    inner_->execute(step, index);
  }
  bool has_value(int id) const override { return inner_->has_value(id); }
  judge::TensorObs observe(int id, bool with_values, bool with_grad) override {
    return inner_->observe(id, with_values, with_grad);
  }
  std::vector<double> values(int id) const override { return inner_->values(id); }
  const void* storage_key(int id) const override { return inner_->storage_key(id); }
  const void* tensor_key(int id) const override { return inner_->tensor_key(id); }
  const void* base_key(int id) const override { return inner_->base_key(id); }
  const void* grad_storage_key(int id) const override { return inner_->grad_storage_key(id); }
  const void* grad_tensor_key(int id) override { return inner_->grad_tensor_key(id); }

 private:
  std::unique_ptr<judge::Session> inner_;
  Progress* progress_;
};

class TracingBackend : public judge::Backend {
 public:
  TracingBackend(judge::Backend& inner, Progress* p) : inner_(inner), progress_(p) {}
  std::string name() const override { return inner_.name(); }
  std::string version() const override { return inner_.version(); }
  std::unique_ptr<judge::Session> start() override {
    return std::make_unique<TracingSession>(inner_.start(), progress_);
  }

 private:
  judge::Backend& inner_;
  Progress* progress_;
};

struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the parent reads of every case travels as one string of space-separated numbers, `counts` (read with
// from_chars, no JSON value per number): enum values and indices into this same binary's known tag lists,
// range-checked on the way in (parse_counts). It is the step count n,
// then [op, impl status, impl category, oracle status, oracle category] for each of the n steps, then for each
// coverage dimension (kTagFields) its tag count and tags.
struct TagField {
  const char* key;
  std::vector<std::string> judge::CoverageTags::*tags;
  const std::vector<std::string>& (*known)();
};
constexpr TagField kTagFields[] = {
    {"layouts", &judge::CoverageTags::layouts, judge::layout_kinds},
    {"memory_formats", &judge::CoverageTags::memory_formats, judge::memory_format_names},
    {"dtypes", &judge::CoverageTags::dtypes, judge::dtype_names},
    {"situations", &judge::CoverageTags::situations, judge::all_situations},
    {"situation_pairs", &judge::CoverageTags::situation_pairs, judge::situation_pairs},
    {"backward_through", &judge::CoverageTags::backward_through, judge::backward_through_ops},
    {"role_pairs", &judge::CoverageTags::role_pairs, judge::role_pairs},
    {"role_triples", &judge::CoverageTags::role_triples, judge::role_triples},
    {"op_operands", &judge::CoverageTags::op_operands, judge::op_operand_names},
};
constexpr std::size_t kTagFieldCount = std::size(kTagFields);

// A tag's index in its field's known list: hashed, as role_triples() holds tens of thousands of keys.
std::optional<std::size_t> tag_index(std::size_t field, const std::string& tag) {
  using Index = std::unordered_map<std::string_view, std::size_t>;
  static const std::array<Index, kTagFieldCount> indices = [] {
    std::array<Index, kTagFieldCount> out;
    for (std::size_t f = 0; f < kTagFieldCount; ++f) {
      const auto& known = kTagFields[f].known();
      for (std::size_t i = 0; i < known.size(); ++i) out[f].emplace(known[i], i);
    }
    return out;
  }();
  const auto at = indices[field].find(tag);
  if (at == indices[field].end()) return std::nullopt;
  return at->second;
}

template <class E>
int code(E e) {
  return static_cast<int>(e);
}

std::string counts_text(const program::Program& program, const judge::Trace& impl, const judge::Trace& oracle) {
  judge::CoverageTags tags;
  try {
    tags = judge::coverage_tags(program, oracle);
  } catch (const std::exception& e) {
    // coverage_tags is meant to be total: this is a bug in parity, and the campaign cannot count without it.
    throw Fatal(std::string("computing what a case covered failed (a bug in judge/coverage.cpp): ") + e.what());
  }
  std::string out;
  auto put = [&](std::size_t v) {
    if (!out.empty()) out += ' ';
    out += std::to_string(v);
  };
  const std::size_t n = std::min({impl.steps.size(), oracle.steps.size(), program.steps.size()});
  put(n);
  for (std::size_t i = 0; i < n; ++i)
    for (int c : {code(program.steps[i].op), code(impl.steps[i].status), code(impl.steps[i].category),
                  code(oracle.steps[i].status), code(oracle.steps[i].category)})
      put(static_cast<std::size_t>(c));
  for (std::size_t field = 0; field < kTagFieldCount; ++field) {
    const TagField& f = kTagFields[field];
    put((tags.*f.tags).size());
    for (const std::string& t : tags.*f.tags) {
      const auto at = tag_index(field, t);
      if (!at) throw Fatal(std::string("judge/coverage.cpp made an unknown ") + f.key + " tag " + t);
      put(*at);
    }
  }
  return out;
}

// The answer. A failure is a JSON object: {"fatal": why} (the campaign cannot go on) or, for an exception that
// escaped the run loop, {"impl_version", "oracle_version", "escaped": {phase, step, message}}. A case that
// completed is the line "<impl version>\t<oracle version>\t<counts>", then, only when it diverged or traces were
// asked for, a newline and the JSON object {"divergence", "impl", "oracle"}. Nearly every case agrees, so the
// parent reads one line and no JSON.
// Side `side`'s protocol backend for `command`: one process for the evaluating process's life (a persistent
// worker's), started again after it was lost. A handshake that fails now, after the campaign's probe passed, ends
// the campaign: Fatal.
judge::Backend& protocol_backend(int side, const std::string& command, const EvalSides& sides) {
  static std::unique_ptr<protocol::RemoteBackend> backends[2];
  static std::string commands[2];
  if (!backends[side] || commands[side] != command) {
    backends[side] = std::make_unique<protocol::RemoteBackend>(command, sides.start_timeout);
    commands[side] = command;
  }
  try {
    backends[side]->capabilities();
  } catch (const protocol::ProtocolError& e) {
    throw Fatal(std::string("the ") + (side == 0 ? "--impl-cmd" : "--oracle-cmd") + " backend cannot be started: " +
                e.what());
  }
  return *backends[side];
}

std::string run_in_child(const program::Program& program, bool want_traces, judge::KeepValues keep,
                         reports::Oracle oracle, const EvalSides& sides, Progress* progress) {
  progress->phase = kStarting;
  std::unique_ptr<judge::Backend> own[2];
  judge::Backend* backends[2] = {nullptr, nullptr};
  if (sides.impl_cmd.empty()) {
    own[0] = impl_backend::make_impl_backend();
    if (!own[0]) throw Fatal("the impl backend is not available (impl_backend::make_impl_backend() returned null)");
    backends[0] = own[0].get();
  } else {
    backends[0] = &protocol_backend(0, sides.impl_cmd, sides);
  }
  if (sides.oracle_cmd.empty()) {
    switch (oracle) {
      case reports::Oracle::LibTorch: own[1] = oracle::make_torch_backend(); break;
      case reports::Oracle::ImplCpu: own[1] = impl_backend::make_impl_cpu_oracle(); break;
    }
    if (!own[1]) throw Fatal("the " + std::string(reports::oracle_name(oracle)) + " backend is not available");
    backends[1] = own[1].get();
  } else {
    backends[1] = &protocol_backend(1, sides.oracle_cmd, sides);
  }
  const std::string versions[2] = {backends[0]->version(), backends[1]->version()};
  for (const auto& v : versions)
    if (v.find_first_of("\t\n") != std::string::npos) throw Fatal("a backend's version has a tab or newline: " + v);

  judge::Trace traces[2];
  for (int side = 0; side < 2; ++side) {
    progress->step = -1;
    progress->phase = side == 0 ? kImpl : kOracle;
    TracingBackend traced(*backends[side], progress);
    try {
      traces[side] = judge::run(traced, program, keep);
    } catch (const std::exception& e) {
      // The run loop catches what steps raise; anything else broke the Session contract (observe threw), or is a
      // protocol backend that died or broke the protocol (SessionLost): a finding of its own kind.
      json escaped = {{"phase", side == 0 ? "impl" : "oracle"}, {"step", progress->step.load()}, {"message", e.what()}};
      if (const auto* lost = dynamic_cast<const judge::SessionLost*>(&e))
        escaped["kind"] = lost->kind == judge::SessionLost::Kind::Crash ? "crash" : "protocol";
      const json answer = {{"impl_version", versions[0]}, {"oracle_version", versions[1]}, {"escaped", escaped}};
      return answer.dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  progress->phase = kComparing;
  for (judge::Trace& t : traces) judge::forget_unobserved(t, sides.compared);
  auto d = judge::compare(traces[0], traces[1]);
  std::string out = versions[0] + '\t' + versions[1] + '\t' + counts_text(program, traces[0], traces[1]);
  if (want_traces || d) {
    const json rest = {{"divergence", d ? judge::to_json(*d) : json(nullptr)},
                       {"impl", judge::to_json(traces[0])},
                       {"oracle", judge::to_json(traces[1])}};
    out += '\n';
    out += rest.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return out;
}

}  // namespace

std::string evaluate_to_text(const program::Program& program, bool want_traces, judge::KeepValues keep,
                             reports::Oracle oracle, const EvalSides& sides, Progress& progress) {
  try {
    return run_in_child(program, want_traces, keep, oracle, sides, &progress);
  } catch (const Fatal& e) {
    return json{{"fatal", e.what()}}.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return json{{"fatal", std::string("cannot start the backends: ") + e.what()}}.dump(
        -1, ' ', false, json::error_handler_t::replace);
  }
}

std::string oracle_trace_to_text(const program::Program& program, Progress& progress) {
  try {
    auto torch = oracle::make_torch_backend();
    if (!torch) throw Fatal("the LibTorch backend is not available (oracle::make_torch_backend() returned null)");
    progress.phase = kOracle;
    progress.step = -1;
    TracingBackend traced(*torch, &progress);
    json out = {{"libtorch_version", torch->version()}};
    try {
      out["trace"] = judge::to_json(judge::run(traced, program));
    } catch (const std::exception& e) {
      out["escaped"] = e.what();
    }
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return json{{"fatal", std::string("cannot run LibTorch: ") + e.what()}}.dump(-1, ' ', false,
                                                                               json::error_handler_t::replace);
  }
}

namespace {

std::string describe_phase(int phase, int step, reports::Oracle oracle) {
  std::string at = step >= 0 ? " at step " + std::to_string(step) : "";
  switch (phase) {
    case kImpl: return "while running impl" + at;
    case kOracle: return "while running " + std::string(reports::oracle_name(oracle)) + at;
    case kComparing: return "while comparing the traces";
    default: return "while starting the backends";
  }
}

// A divergence for a child that died or hung, blamed on the side it was running; `signal` names what killed it.
Divergence death(judge::DivergenceKind kind, ErrorCategory category, const std::string& what, int phase, int step,
                 reports::Oracle oracle, std::string signal = {}) {
  Divergence d;
  d.kind = kind;
  d.signal = std::move(signal);
  d.step = (phase == kImpl || phase == kOracle) ? step : -1;
  std::string text = what + " " + describe_phase(phase, step, oracle);
  if (phase == kImpl) {
    d.impl = text;
    d.oracle = "not run (impl did not finish)";
    d.impl_category = category;
  } else if (phase == kOracle) {
    d.impl = "completed";
    d.oracle = text;
    d.oracle_category = category;
  } else {
    d.impl = d.oracle = text;
  }
  return d;
}

constexpr int kCategories = static_cast<int>(judge::kErrorCategoryCount);
constexpr int kStatuses = static_cast<int>(judge::StepObs::Status::Skipped) + 1;  // Skipped is the last

// Reads `counts` (counts_text) front to back, each number checked against its range.
class CountsReader {
 public:
  explicit CountsReader(std::string_view text) : rest_(text) {}
  std::size_t next(std::size_t below, const char* what) {
    if (rest_.empty()) throw program::JsonError(std::string("counts ends before its ") + what);
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), v);
    if (ec != std::errc() || v >= below)
      throw program::JsonError(std::string("counts: the ") + what + " \"" +
                               std::string(rest_.substr(0, rest_.find(' '))) + "\" is not a number below " +
                               std::to_string(below));
    rest_.remove_prefix(static_cast<std::size_t>(end - rest_.data()));
    if (!rest_.empty()) {
      if (rest_.front() != ' ') throw program::JsonError("counts: numbers are not separated by one space");
      rest_.remove_prefix(1);
    }
    return v;
  }
  template <class E>
  E next_code(int count, const char* what) {
    return static_cast<E>(next(static_cast<std::size_t>(count), what));
  }
  void finish() const {
    if (!rest_.empty()) throw program::JsonError("counts has numbers after its last coverage tag");
  }

 private:
  std::string_view rest_;
};

// The most tags a case can carry in each dimension: a layout kind and "offset" per operand of each step, a
// format per step, each situation once. More means the result is not what this binary's child wrote.
std::size_t max_tags(const TagField& f, const std::vector<StepOutcome>& steps) {
  // Situations, pairs, backward-through and the role and op-operand keys are each counted once per case.
  if (f.tags == &judge::CoverageTags::situations || f.tags == &judge::CoverageTags::situation_pairs ||
      f.tags == &judge::CoverageTags::backward_through || f.tags == &judge::CoverageTags::role_pairs ||
      f.tags == &judge::CoverageTags::role_triples || f.tags == &judge::CoverageTags::op_operands)
    return f.known().size();
  std::size_t operands = 0;
  for (const auto& s : steps) operands += static_cast<std::size_t>(program::spec(s.op).arity);
  return f.tags == &judge::CoverageTags::layouts ? 2 * operands : steps.size();
}

// The step outcomes and coverage tags of `counts`; the ops must be `program`'s when there is one.
void parse_counts(std::string_view counts, const program::Program* program, Evaluation& out) {
  CountsReader r(counts);
  const std::size_t n = r.next(program ? program->steps.size() + 1 : program::kMaxSteps + 1, "step count");
  if (program && n != program->steps.size())
    throw program::JsonError("the step outcomes do not match the program's " + std::to_string(program->steps.size()) +
                             " steps");
  const int ops = static_cast<int>(program::op_table().size());
  using Status = judge::StepObs::Status;
  out.steps.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    StepOutcome s;
    s.op = r.next_code<program::OpId>(ops, "op");
    s.impl = r.next_code<Status>(kStatuses, "status");
    s.impl_category = r.next_code<ErrorCategory>(kCategories, "category");
    s.oracle = r.next_code<Status>(kStatuses, "status");
    s.oracle_category = r.next_code<ErrorCategory>(kCategories, "category");
    if (program && s.op != program->steps[i].op)
      throw program::JsonError("step " + std::to_string(i) + "'s op is not the program's");
    out.steps.push_back(s);
  }
  for (const auto& f : kTagFields) {
    const auto& known = f.known();
    const std::size_t tags = r.next(max_tags(f, out.steps) + 1, f.key);
    for (std::size_t t = 0; t < tags; ++t) (out.coverage.*f.tags).push_back(known[r.next(known.size(), f.key)]);
  }
  r.finish();
}

// Reads run_in_child's answer.
void parse_result(const std::string& text, const program::Program* program, reports::Oracle oracle, Evaluation& out) {
  if (text.starts_with('{')) {
    json r = program::parse_json_text(text, "the evaluating process's answer");
    if (r.contains("fatal")) throw EvaluationError(r["fatal"].get<std::string>());
    out.impl_version = r.at("impl_version").get<std::string>();
    out.oracle_version = r.at("oracle_version").get<std::string>();
    const json& e = r.at("escaped");
    bool impl_side = e.at("phase").get<std::string>() == "impl";
    out.outcome = Evaluation::Outcome::Crash;
    const std::string message = e.at("message").get<std::string>();
    const std::string kind = e.value("kind", "");
    if (kind.empty())
      out.divergence = death(judge::DivergenceKind::Crash, ErrorCategory::Crash,
                             "exception escaped the run loop (" + message + ")", impl_side ? kImpl : kOracle,
                             e.at("step").get<int>(), oracle);
    else
      out.divergence = death(kind == "crash" ? judge::DivergenceKind::Crash : judge::DivergenceKind::Protocol,
                             ErrorCategory::Crash, "protocol backend failed (" + message + ")",
                             impl_side ? kImpl : kOracle, e.at("step").get<int>(), oracle);
    return;
  }
  const std::string_view all = text;
  const std::size_t line_end = std::min(all.find('\n'), all.size());
  const std::string_view line = all.substr(0, line_end);
  const std::size_t tab1 = line.find('\t'), tab2 = tab1 == line.npos ? line.npos : line.find('\t', tab1 + 1);
  if (tab2 == line.npos) throw program::JsonError("an answer that is neither JSON nor versions and counts");
  out.outcome = Evaluation::Outcome::Completed;
  out.impl_version = std::string(line.substr(0, tab1));
  out.oracle_version = std::string(line.substr(tab1 + 1, tab2 - tab1 - 1));
  parse_counts(line.substr(tab2 + 1), program, out);
  if (line_end == all.size()) return;
  const json r = program::parse_json_text(all.substr(line_end + 1), "the evaluating process's answer", 2);
  if (!r.at("divergence").is_null()) out.divergence = judge::divergence_from_json(r["divergence"]);
  out.impl = judge::trace_from_json(r.at("impl"));
  out.oracle = judge::trace_from_json(r.at("oracle"));
}

}  // namespace

Progress* map_shared_progress(int count) {
  void* m = ::mmap(nullptr, sizeof(Progress) * static_cast<std::size_t>(count), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw EvaluationError(std::string("cannot map shared memory: ") + std::strerror(errno));
  auto* slots = static_cast<Progress*>(m);
  for (int i = 0; i < count; ++i) new (slots + i) Progress{};
  return slots;
}

namespace {
Progress* g_oom_progress = nullptr;  // the evaluating process's slot, for the new-handler
}  // namespace

void enter_evaluating_process(std::size_t memory_limit_bytes, Progress* progress) {
#if defined(__GLIBC__)
  // A worker lives for millions of cases. glibc raises its mmap threshold each time a large block is freed, up to
  // 32 MiB; past the first big tensor, every tensor below that size comes from the heap, whose free space
  // fragments and is never given back: a worker grew 152 -> 221 MiB over an hour's soak. Setting the threshold
  // fixes it (mallopt turns the adjustment off), so large tensors are mapped and unmapped whole.
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLargeBlockBytes));
#endif
  if (memory_limit_bytes == 0 || !kAddressSpaceLimitSupported) return;
  rlimit limit{static_cast<rlim_t>(memory_limit_bytes), static_cast<rlim_t>(memory_limit_bytes)};
  ::setrlimit(RLIMIT_AS, &limit);
  g_oom_progress = progress;
  std::set_new_handler([] {
    if (g_oom_progress) g_oom_progress->out_of_memory = 1;
    ::_exit(kOutOfMemoryStatus);
  });
}

Evaluation evaluation_from_end(const ChildEnd& end, const program::Program* program, const EvalOptions& options,
                               const Progress& progress) {
  const int phase = progress.phase.load(), step = progress.step.load();
  const ProcessOutcome ended =
      outcome_of(end, progress.out_of_memory.load(), options.timeout, options.memory_limit_bytes);
  Evaluation out;
  switch (ended.kind) {
    case ProcessOutcome::Kind::Interrupted:
      out.outcome = Evaluation::Outcome::Interrupted;
      return out;
    case ProcessOutcome::Kind::Timeout:
      out.outcome = Evaluation::Outcome::Timeout;
      out.divergence = death(judge::DivergenceKind::Timeout, ErrorCategory::Timeout, ended.what, phase, step,
                             options.oracle);
      return out;
    case ProcessOutcome::Kind::OutOfMemory:
      out.outcome = Evaluation::Outcome::OutOfMemory;
      out.divergence = death(judge::DivergenceKind::OutOfMemory, ErrorCategory::OutOfMemory, ended.what, phase, step,
                             options.oracle);
      return out;
    case ProcessOutcome::Kind::Crash:
      out.outcome = Evaluation::Outcome::Crash;
      out.divergence = death(judge::DivergenceKind::Crash, ErrorCategory::Crash, ended.what, phase, step,
                             options.oracle, ended.signal);
      return out;
    case ProcessOutcome::Kind::Answered: break;
  }
  try {
    parse_result(end.output, program, options.oracle, out);
  } catch (const EvaluationError&) {
    throw;
  } catch (const std::exception& e) {
    // A process that ends its answer early (something called exit()) or garbles it: a crash.
    out = Evaluation{};
    out.outcome = Evaluation::Outcome::Crash;
    out.divergence = death(judge::DivergenceKind::Crash, ErrorCategory::Crash, unreadable_answer(e.what()).what,
                           phase, step, options.oracle);
  }
  return out;
}

}  // namespace parity::engine
