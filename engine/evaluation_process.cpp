#include "engine/evaluation_process.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <nlohmann/json.hpp>

#include "impl_backend/backend.h"
#include "oracle/torch_backend.h"
#include "program/backend.h"
#include "program/json.h"

namespace parity::engine {

namespace {

using nlohmann::json;
using program::Divergence;
using program::ErrorCategory;

// Forwards to a backend's session and records each step before it runs.
class TracingSession : public program::Session {
 public:
  TracingSession(std::unique_ptr<program::Session> inner, Progress* p) : inner_(std::move(inner)), progress_(p) {}
  void execute(const program::Step& step, int index) override {
    progress_->step.store(index, std::memory_order_relaxed);
    inner_->execute(step, index);
  }
  bool has_value(int id) const override { return inner_->has_value(id); }
  program::TensorObs observe(int id, bool with_values, bool with_grad) override {
    return inner_->observe(id, with_values, with_grad);
  }
  const void* storage_key(int id) const override { return inner_->storage_key(id); }
  const void* tensor_key(int id) const override { return inner_->tensor_key(id); }
  const void* base_key(int id) const override { return inner_->base_key(id); }
  const void* grad_storage_key(int id) const override { return inner_->grad_storage_key(id); }

 private:
  std::unique_ptr<program::Session> inner_;
  Progress* progress_;
};

class TracingBackend : public program::Backend {
 public:
  TracingBackend(program::Backend& inner, Progress* p) : inner_(inner), progress_(p) {}
  std::string name() const override { return inner_.name(); }
  std::string version() const override { return inner_.version(); }
  std::unique_ptr<program::Session> start() override {
    return std::make_unique<TracingSession>(inner_.start(), progress_);
  }

 private:
  program::Backend& inner_;
  Progress* progress_;
};

json outcomes_to_json(const program::Trace& a, const program::Trace& b) {
  json out = json::array();
  for (std::size_t i = 0; i < a.steps.size() && i < b.steps.size(); ++i)
    out.push_back({program::to_string(a.steps[i].status), program::to_string(a.steps[i].category),
                   program::to_string(b.steps[i].status), program::to_string(b.steps[i].category)});
  return out;
}

struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The coverage tags travel as one array of strings per dimension, checked by the parent (parse_coverage).
struct TagField {
  const char* key;
  std::vector<std::string> program::CoverageTags::*tags;
  const std::vector<std::string>& (*known)();
};
constexpr TagField kTagFields[] = {
    {"layouts", &program::CoverageTags::layouts, program::layout_kinds},
    {"memory_formats", &program::CoverageTags::memory_formats, program::memory_format_names},
    {"situations", &program::CoverageTags::situations, program::all_situations},
};

json coverage_to_json(const program::Program& program, const program::Trace& oracle) {
  program::CoverageTags tags;
  try {
    tags = program::coverage_tags(program, oracle);
  } catch (const std::exception& e) {
    // coverage_tags is meant to be total: this is a bug in parity, and the campaign cannot count without it.
    throw Fatal(std::string("computing what a case covered failed (a bug in program/coverage.cpp): ") + e.what());
  }
  json out = json::object();
  for (const auto& f : kTagFields) out[f.key] = tags.*f.tags;
  return out;
}

json run_in_child(const program::Program& program, bool want_traces, Progress* progress) {
  progress->phase = kStarting;
  auto impl = impl_backend::make_impl_backend();
  if (!impl) throw Fatal("the impl backend is not available (impl_backend::make_impl_backend() returned null)");
  auto torch = oracle::make_torch_backend();
  if (!torch) throw Fatal("the LibTorch backend is not available (oracle::make_torch_backend() returned null)");
  json result = {{"impl_version", impl->version()}, {"oracle_version", torch->version()}};

  program::Trace traces[2];
  program::Backend* backends[2] = {impl.get(), torch.get()};
  for (int side = 0; side < 2; ++side) {
    progress->step = -1;
    progress->phase = side == 0 ? kImpl : kOracle;
    TracingBackend traced(*backends[side], progress);
    try {
      traces[side] = program::run(traced, program);
    } catch (const std::exception& e) {
      // The run loop catches what steps raise; anything else broke the Session contract (observe threw).
      result["escaped"] = {{"phase", side == 0 ? "impl" : "oracle"}, {"step", progress->step.load()},
                           {"message", e.what()}};
      return result;
    }
  }
  progress->phase = kComparing;
  auto d = program::compare(traces[0], traces[1]);
  result["divergence"] = d ? program::to_json(*d) : json(nullptr);
  result["steps"] = outcomes_to_json(traces[0], traces[1]);
  result["coverage"] = coverage_to_json(program, traces[1]);
  if (want_traces || d) {
    result["impl"] = program::to_json(traces[0]);
    result["oracle"] = program::to_json(traces[1]);
  }
  return result;
}

}  // namespace

std::string evaluate_to_text(const program::Program& program, bool want_traces, Progress& progress) {
  json result;
  try {
    result = run_in_child(program, want_traces, &progress);
  } catch (const Fatal& e) {
    result = {{"fatal", e.what()}};
  } catch (const std::exception& e) {
    result = {{"fatal", std::string("cannot start the backends: ") + e.what()}};
  }
  return result.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

std::string describe_phase(int phase, int step) {
  std::string at = step >= 0 ? " at step " + std::to_string(step) : "";
  switch (phase) {
    case kImpl: return "while running impl" + at;
    case kOracle: return "while running LibTorch" + at;
    case kComparing: return "while comparing the traces";
    default: return "while starting the backends";
  }
}

// A divergence for a child that died or hung, blamed on the side it was running.
Divergence death(program::DivergenceKind kind, ErrorCategory category, const std::string& what, int phase, int step) {
  Divergence d;
  d.kind = kind;
  d.step = (phase == kImpl || phase == kOracle) ? step : -1;
  std::string text = what + " " + describe_phase(phase, step);
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

program::StepObs::Status parse_status(const json& j) {
  std::string s = j.get<std::string>();
  for (auto st : {program::StepObs::Status::Ok, program::StepObs::Status::Error, program::StepObs::Status::Skipped})
    if (program::to_string(st) == s) return st;
  throw program::JsonError("unknown status " + s);
}

ErrorCategory parse_category(const json& j) {
  auto c = program::parse_error_category(j.get<std::string>());
  if (!c) throw program::JsonError("unknown error category");
  return *c;
}

// The most tags a case can carry in each dimension: a layout kind and "offset" per operand of each step, a
// format per step, each situation once. More means the result is not what this binary's child wrote.
std::size_t max_tags(const TagField& f, const program::Program& program) {
  if (f.tags == &program::CoverageTags::situations) return program::all_situations().size();
  std::size_t operands = 0;
  for (const auto& s : program.steps) operands += s.inputs.size();
  return f.tags == &program::CoverageTags::layouts ? 2 * operands : program.steps.size();
}

program::CoverageTags parse_coverage(const json& j, const program::Program& program) {
  if (!j.is_object()) throw program::JsonError("coverage is not an object");
  program::CoverageTags tags;
  for (const auto& f : kTagFields) {
    const json& a = j.at(f.key);
    if (!a.is_array() || a.size() > max_tags(f, program))
      throw program::JsonError(std::string("coverage.") + f.key + " is not an array of at most " +
                               std::to_string(max_tags(f, program)) + " tags");
    const auto& known = f.known();
    for (const json& t : a) {
      if (!t.is_string() || std::find(known.begin(), known.end(), t.get<std::string>()) == known.end())
        throw program::JsonError(std::string("coverage.") + f.key + " has an unknown tag " + t.dump());
      (tags.*f.tags).push_back(t.get<std::string>());
    }
  }
  return tags;
}

void parse_result(const std::string& text, const program::Program& program, Evaluation& out) {
  json r = json::parse(text);
  if (r.contains("fatal")) throw EvaluationError(r["fatal"].get<std::string>());
  out.impl_version = r.value("impl_version", "");
  out.oracle_version = r.value("oracle_version", "");
  if (r.contains("escaped")) {
    const json& e = r["escaped"];
    bool impl_side = e["phase"].get<std::string>() == "impl";
    out.outcome = Evaluation::Outcome::Crash;
    out.divergence = death(program::DivergenceKind::Crash, ErrorCategory::Crash, "exception escaped the run loop (" +
                           e["message"].get<std::string>() + ")", impl_side ? kImpl : kOracle, e["step"].get<int>());
    return;
  }
  out.outcome = Evaluation::Outcome::Completed;
  if (!r.at("divergence").is_null()) out.divergence = program::divergence_from_json(r["divergence"]);
  const json& steps = r.at("steps");
  if (!steps.is_array() || steps.size() != program.steps.size())
    throw program::JsonError("the step outcomes do not match the program's " + std::to_string(program.steps.size()) +
                             " steps");
  for (const json& s : steps) {
    if (!s.is_array() || s.size() != 4) throw program::JsonError("a step outcome is not [status, category] x 2");
    out.steps.push_back({parse_status(s[0]), parse_status(s[2]), parse_category(s[1]), parse_category(s[3])});
  }
  out.coverage = parse_coverage(r.at("coverage"), program);
  if (r.contains("impl")) out.impl = program::trace_from_json(r["impl"]);
  if (r.contains("oracle")) out.oracle = program::trace_from_json(r["oracle"]);
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
  if (memory_limit_bytes == 0) return;
  rlimit limit{static_cast<rlim_t>(memory_limit_bytes), static_cast<rlim_t>(memory_limit_bytes)};
  ::setrlimit(RLIMIT_AS, &limit);
  g_oom_progress = progress;
  std::set_new_handler([] {
    if (g_oom_progress) g_oom_progress->out_of_memory = 1;
    ::_exit(kOutOfMemoryStatus);
  });
}

Evaluation evaluation_from_end(const ChildEnd& end, const program::Program& program, const EvalOptions& options,
                               const Progress& progress) {
  const int phase = progress.phase.load(), step = progress.step.load();
  Evaluation out;
  switch (end.how) {
    case ChildEnd::How::Interrupted:
      out.outcome = Evaluation::Outcome::Interrupted;
      return out;
    case ChildEnd::How::Timeout:
      out.outcome = Evaluation::Outcome::Timeout;
      out.divergence = death(program::DivergenceKind::Timeout, ErrorCategory::Timeout, end.describe(options.timeout),
                             phase, step);
      return out;
    case ChildEnd::How::Signal:
    case ChildEnd::How::Exit:
      if (progress.out_of_memory.load()) {
        out.outcome = Evaluation::Outcome::OutOfMemory;
        out.divergence = death(program::DivergenceKind::OutOfMemory, ErrorCategory::OutOfMemory,
                               "an allocation failed under the memory limit of " +
                                   std::to_string(options.memory_limit_bytes >> 20) + " MiB",
                               phase, step);
        return out;
      }
      out.outcome = Evaluation::Outcome::Crash;
      out.divergence = death(program::DivergenceKind::Crash, ErrorCategory::Crash, end.describe(options.timeout),
                             phase, step);
      return out;
    case ChildEnd::How::Finished: break;
  }
  try {
    parse_result(end.output, program, out);
  } catch (const EvaluationError&) {
    throw;
  } catch (const std::exception& e) {
    // A process that ends its answer early (something called exit()) or garbles it: a crash.
    out = Evaluation{};
    out.outcome = Evaluation::Outcome::Crash;
    out.divergence = death(program::DivergenceKind::Crash, ErrorCategory::Crash,
                           "ended without a complete result (" + std::string(e.what()).substr(0, 200) + ")", phase,
                           step);
  }
  return out;
}

}  // namespace parity::engine
