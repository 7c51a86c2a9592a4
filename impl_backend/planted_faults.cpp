#include "impl_backend/planted_faults.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "program/internal_assert.h"

namespace parity::impl_backend {

namespace {

constexpr std::pair<std::string_view, PlantedFault::Kind> kKinds[] = {
    {"values", PlantedFault::Kind::Values},
    {"error", PlantedFault::Kind::Error},
    {"message", PlantedFault::Kind::Message},
    {"fresh", PlantedFault::Kind::Fresh},
    {"writes_input", PlantedFault::Kind::WritesInput},
    {"flaky", PlantedFault::Kind::Flaky},
    {"crash", PlantedFault::Kind::Crash},
    {"abort", PlantedFault::Kind::Abort},
    {"hang", PlantedFault::Kind::Hang},
    {"oom", PlantedFault::Kind::OutOfMemory},
    {"breaks_device", PlantedFault::Kind::BreaksDevice},
    {"view_written", PlantedFault::Kind::ViewWritten},
    {"stale_retained_view", PlantedFault::Kind::StaleRetainedView},
    {"edge_scalar", PlantedFault::Kind::EdgeScalar},
    {"shared_storage", PlantedFault::Kind::SharedStorage},
    {"zero_dim_other", PlantedFault::Kind::ZeroDimOther},
    {"grad_memo", PlantedFault::Kind::GradMemo},
};

// Why a combination fault cannot hold for `op`; empty when it can (and for every other kind).
std::string_view cannot_hold(PlantedFault::Kind k, program::OpId op) {
  using K = PlantedFault::Kind;
  const program::OpSpec& s = program::spec(op);
  if (k == K::ViewWritten && s.arity == 0) return "plants `view_written` on an op with no operand";
  if (k == K::StaleRetainedView && op != program::OpId::RetainGrad)
    return "plants `stale_retained_view` on another op than retain_grad";
  if (k == K::EdgeScalar && !s.reads(program::Attr::Scalar)) return "plants `edge_scalar` on an op that takes no scalar";
  if ((k == K::SharedStorage || k == K::ZeroDimOther) && !(s.is_inplace() && s.arity >= 2))
    return "plants a fault of two operands on an op that is not in place with two operands";
  if (k == K::GradMemo && op != program::OpId::Deepcopy) return "plants `grad_memo` on another op than deepcopy";
  return "";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

PlantedFault parse_one(std::string_view item) {
  auto bad = [&](const std::string& why) {
    std::string kinds;
    for (const auto& [name, k] : kKinds) kinds += (kinds.empty() ? "" : ", ") + std::string(name);
    return std::invalid_argument(std::string(kPlantVariable) + ": \"" + std::string(item).substr(0, 60) + "\" " + why +
                                 " (expected OP=KIND, comma-separated, KIND one of " + kinds + "; OP from `parity list`)");
  };
  const auto eq = item.find('=');
  if (eq == std::string_view::npos) throw bad("has no '='");
  const auto op = program::find_op(trim(item.substr(0, eq)));
  if (!op) throw bad("names no op");
  const std::string_view kind = trim(item.substr(eq + 1));
  for (const auto& [name, k] : kKinds) {
    if (name != kind) continue;
    if (k == PlantedFault::Kind::Fresh && program::spec(*op).result != program::ResultIs::Operand)
      throw bad("plants `fresh` on an op that does not return its operand itself");
    if (k == PlantedFault::Kind::WritesInput &&
        (program::spec(*op).arity == 0 || program::spec(*op).mutates))
      throw bad("plants `writes_input` on an op that has no operand or may write one anyway");
    if (const std::string_view why = cannot_hold(k, *op); !why.empty()) throw bad(std::string(why));
    return {*op, k};
  }
  throw bad("names no fault kind");
}

}  // namespace

std::string PlantedFault::text() const {
  for (const auto& [name, k] : kKinds)
    if (k == kind) return std::string(program::spec(op).name) + "=" + std::string(name);
  return std::string(program::spec(op).name) + "=?";
}

std::vector<std::string_view> planted_fault_kind_names() {
  std::vector<std::string_view> out;
  for (const auto& [name, k] : kKinds) out.push_back(name);
  return out;
}

bool is_process_fault(PlantedFault::Kind kind) {
  switch (kind) {
    case PlantedFault::Kind::Crash:
    case PlantedFault::Kind::Abort:
    case PlantedFault::Kind::Hang:
    case PlantedFault::Kind::OutOfMemory: return true;
    case PlantedFault::Kind::Values:
    case PlantedFault::Kind::Error:
    case PlantedFault::Kind::Message:
    case PlantedFault::Kind::Fresh:
    case PlantedFault::Kind::WritesInput:
    case PlantedFault::Kind::Flaky:
    case PlantedFault::Kind::BreaksDevice:
    case PlantedFault::Kind::ViewWritten:
    case PlantedFault::Kind::StaleRetainedView:
    case PlantedFault::Kind::EdgeScalar:
    case PlantedFault::Kind::SharedStorage:
    case PlantedFault::Kind::ZeroDimOther:
    case PlantedFault::Kind::GradMemo: return false;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

bool is_combination_fault(PlantedFault::Kind kind) {
  using K = PlantedFault::Kind;
  return kind == K::ViewWritten || kind == K::StaleRetainedView || kind == K::EdgeScalar ||
         kind == K::SharedStorage || kind == K::ZeroDimOther || kind == K::GradMemo;
}

void misbehave(const PlantedFault& fault) {
  switch (fault.kind) {
    case PlantedFault::Kind::Crash: ::raise(SIGSEGV); break;
    case PlantedFault::Kind::Abort: std::abort();
    case PlantedFault::Kind::Hang:
      for (;;) ::pause();
    case PlantedFault::Kind::OutOfMemory: {
      rlimit limit{};
      const bool limited = ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
      const std::size_t bytes = limited ? static_cast<std::size_t>(limit.rlim_cur) : std::size_t{1} << 40;
      auto* volatile block = new char[bytes];  // fails: more than the process may map
      block[0] = 1;
      delete[] block;
      break;
    }
    case PlantedFault::Kind::Values:
    case PlantedFault::Kind::Error:
    case PlantedFault::Kind::Message:
    case PlantedFault::Kind::Fresh:
    case PlantedFault::Kind::WritesInput:
    case PlantedFault::Kind::Flaky:
    case PlantedFault::Kind::BreaksDevice:
    case PlantedFault::Kind::ViewWritten:
    case PlantedFault::Kind::StaleRetainedView:
    case PlantedFault::Kind::EdgeScalar:
    case PlantedFault::Kind::SharedStorage:
    case PlantedFault::Kind::ZeroDimOther:
    case PlantedFault::Kind::GradMemo: break;
  }
  PARITY_HARNESS_UNREACHABLE("planted fault " + fault.text() + " returned from misbehaving");
}

std::vector<PlantedFault> parse_planted_faults(std::string_view spec) {
  std::vector<PlantedFault> out;
  // Unset and set to "" both plant nothing; anything else must name faults, every item one (a stray comma or a
  // blank value is a mistake, as a typo in a fault is).
  if (spec.empty()) return out;
  const std::string given = "\"" + std::string(spec).substr(0, 60) + "\"";
  if (trim(spec).empty())
    throw std::invalid_argument(std::string(kPlantVariable) + "=" + given +
                                " names no fault: give OP=KIND items, or leave it empty to plant none");
  for (;;) {
    const auto comma = spec.find(',');
    const std::string_view item = trim(spec.substr(0, comma));
    if (item.empty())
      throw std::invalid_argument(std::string(kPlantVariable) + "=" + given +
                                  " has an empty item: a comma at its start or end, or two in a row");
    PlantedFault f = parse_one(item);
    for (const auto& earlier : out)
      if (earlier.op == f.op)
        throw std::invalid_argument(std::string(kPlantVariable) + ": " + std::string(program::spec(f.op).name) +
                                    " is given twice; an op takes one fault");
    out.push_back(f);
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return out;
}

namespace {
// The Flaky faults' turn counter: mapped shared and anonymous when the faults are parsed, so the campaign's
// workers and forked children, which all run after that, take turns from one count.
std::atomic<unsigned>* g_flaky_turns = nullptr;
}  // namespace

const std::vector<PlantedFault>& planted_faults() {
  static const std::vector<PlantedFault> faults = [] {
    const char* v = std::getenv(kPlantVariable);
    auto parsed = v ? parse_planted_faults(v) : std::vector<PlantedFault>{};
    for (const auto& f : parsed) {
      if (f.kind != PlantedFault::Kind::Flaky || g_flaky_turns) continue;
      void* shared = ::mmap(nullptr, sizeof(std::atomic<unsigned>), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (shared == MAP_FAILED) throw std::runtime_error(std::string(kPlantVariable) + ": cannot map the turn counter");
      g_flaky_turns = new (shared) std::atomic<unsigned>(0);
    }
    return parsed;
  }();
  return faults;
}

bool flaky_turn() {
  PARITY_HARNESS_ASSERT(g_flaky_turns != nullptr, "flaky_turn asked with no flaky fault planted");
  return g_flaky_turns->fetch_add(1) % 2 == 0;
}

std::vector<std::string> planted_fault_texts() {
  std::vector<std::string> out;
  for (const auto& f : planted_faults()) out.push_back(f.text());
  return out;
}

}  // namespace parity::impl_backend
