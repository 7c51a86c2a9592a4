#include "generators/mutate.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "generators/attr_gen.h"
#include "generators/recipes/recipe.h"
#include "generators/step_builder.h"
#include "program/internal_assert.h"

namespace parity::generators {

using program::OpId;
using program::Program;
using program::Step;

namespace {

constexpr int kMostInserted = 4;  // the most steps a mutation other than Extend puts in: MemoGrad's sum, backward,
                                  // grad and deepcopy
constexpr int kAttempts = 4;     // mutations drawn before mutate gives up

// Steps a mutation may put in: before step `at` of the program (its size: after the last), given that step
// (renumbered, and free to change; null after the last). False: the mutation does not apply here.
using Insert = std::function<bool(StepBuilder&, Step* next)>;

// `p` replayed through a builder with `insert` run before step `at`, the later steps renumbered past what it
// appended, each kept only where the builder admits it.
std::optional<Program> rebuild(const Program& p, Rng& rng, const GenConfig& cfg, int at, const Insert& insert) {
  const int n = static_cast<int>(p.steps.size());
  StepBuilder gen(rng, cfg, std::max(n, cfg.max_steps) + kGrowthSteps);
  // Random steps draw from the builder's swarm; a mutant's is its own.
  gen.draw_swarm(recipes::all().size());
  std::vector<int> ids(p.steps.size());
  auto renumbered = [&](Step s) {
    for (int& in : s.inputs) in = ids[static_cast<std::size_t>(in)];
    return s;
  };
  for (int i = 0; i < at; ++i) ids[static_cast<std::size_t>(i)] = gen.append(p.steps[static_cast<std::size_t>(i)]);
  std::optional<Step> next;
  if (at < n) next = renumbered(p.steps[static_cast<std::size_t>(at)]);
  if (!insert(gen, next ? &*next : nullptr)) return std::nullopt;
  for (int i = at; i < n; ++i) {
    const Step s = i == at ? *next : renumbered(p.steps[static_cast<std::size_t>(i)]);
    if (!gen.admits(s)) return std::nullopt;
    ids[static_cast<std::size_t>(i)] = gen.append(s);
  }
  return gen.take_program();
}

bool extend(StepBuilder& gen) {
  const int before = gen.size();
  const auto all = recipes::all();
  if (gen.length() - gen.size() >= 4 && gen.rng().chance(0.5))
    all[static_cast<std::size_t>(gen.rng().below(static_cast<std::int64_t>(all.size())))].run(gen);
  while (gen.room()) gen.random_step();
  return gen.size() > before;
}

// What stands in for operand `x`: a view of it, a sibling of it (a view of its base), an alias (detach), a copy
// or its .grad. `same_storage`: only the first three, which share x's storage.
int alias_of(StepBuilder& gen, int x, bool same_storage) {
  const ValueInfo& v = gen.state().value(x);
  switch (gen.rng().below(same_storage ? 3 : 5)) {
    case 0: return gen.view_of(x);
    case 1: return v.view ? gen.view_of(v.base) : gen.view_of(x);
    case 2: return gen.emit(OpId::Detach, {x});
    case 3: return gen.emit(OpId::Clone, {x});
    default: return v.has_grad ? gen.emit(OpId::Grad, {x}) : gen.view_of(x);
  }
}

// `shared`: always a later operand in operand 0's storage; otherwise now and then.
bool swap_operand(StepBuilder& gen, Step& next, bool shared) {
  if (next.inputs.empty() || (shared && next.inputs.size() < 2)) return false;
  // Now and then a later operand becomes an alias of operand 0: an in-place op whose source shares the
  // destination's storage (PyTorch's overlap checks, or a kernel that reads what it has already written).
  shared = shared || (next.inputs.size() >= 2 && gen.rng().chance(0.3));
  const auto slot_at = shared ? 1 + gen.rng().below(static_cast<std::int64_t>(next.inputs.size()) - 1)
                              : gen.rng().below(static_cast<std::int64_t>(next.inputs.size()));
  int& slot = next.inputs[static_cast<std::size_t>(slot_at)];
  const int of = shared ? next.inputs[0] : slot;
  if (!gen.state().live(of)) return false;
  const int alias = alias_of(gen, of, shared);
  if (alias < 0 || alias == of) return false;
  slot = alias;
  return true;
}

// retain_grad on a view that the next step reads, so that a later backward through it fills its .grad: a view
// the program made, or a new view of an operand requiring grad put in that operand's place. Half the time its
// storage is then written through its base (the tensor retained stays the view): retain_grad on a view × a
// write to its base × a backward. With no next step, or none reading a tensor requiring grad, a new view of any
// such value is retained.
bool retain_view(StepBuilder& gen, Step* next) {
  std::vector<std::size_t> slots;
  for (std::size_t k = 0; next && k < next->inputs.size(); ++k)
    if (gen.state().live(next->inputs[k]) && gen.meta(next->inputs[k]).requires_grad) slots.push_back(k);
  if (slots.empty()) {
    std::vector<int> rg;
    for (int id : gen.live())
      if (gen.meta(id).requires_grad) rg.push_back(id);
    if (rg.empty()) return false;
    const int x = gen.rng().pick(rg);
    const int v = gen.view_of(x);  // x itself when no view op fits it
    return v >= 0 && v != x && gen.emit(OpId::RetainGrad, {v}) >= 0;
  }
  int& slot = next->inputs[gen.rng().pick(slots)];
  int v = slot;
  if (!gen.state().value(v).view || gen.state().value(v).leaf) {
    v = gen.view_of(slot, true, true);
    if (v < 0 || v == slot) return false;
  }
  if (gen.emit(OpId::RetainGrad, {v}) < 0) return false;
  slot = v;
  if (gen.rng().chance(0.5)) gen.write(gen.state().value(v).base, true);  // refused (a leaf's): no write, as is
  return true;
}

// A write before the next step: into what it reads (or the base of a view it reads), a view × an earlier write
// to its storage; before a backward, into any value an earlier step read, a tensor a node may have saved.
bool write_before(StepBuilder& gen, const Step* next) {
  if (next && !program::spec(next->op).runs_backward && !next->inputs.empty()) {
    const int x = gen.rng().pick(next->inputs);
    if (!gen.state().live(x)) return false;
    const ValueInfo& v = gen.state().value(x);
    return gen.write(v.view && gen.rng().chance(0.5) ? v.base : x, true) >= 0;
  }
  std::vector<int> read;
  for (const Step& s : gen.program().steps)
    for (int in : s.inputs)
      if (gen.state().live(in)) read.push_back(in);
  return !read.empty() && gen.write(gen.rng().pick(read), true) >= 0;
}

// A view operand whose storage is written before the step: operand 0 half the time (what an in-place op writes
// into), any operand otherwise. An operand that is no view is replaced by a view of it. The write goes through
// the base with grad enabled, or under no_grad where autograd refuses it (a leaf requiring grad).
bool written_view(StepBuilder& gen, Step& next) {
  if (next.inputs.empty()) return false;
  int& slot = next.inputs[gen.rng().chance(0.5) ? 0
                                                : static_cast<std::size_t>(gen.rng().below(
                                                      static_cast<std::int64_t>(next.inputs.size())))];
  if (!gen.state().live(slot)) return false;
  int view = slot;
  if (!gen.state().value(slot).view) {
    view = gen.view_of(slot, true, true);
    if (view < 0 || view == slot) return false;
  }
  const int base = gen.state().value(view).base;
  if (gen.write(base, true) < 0 && gen.write(base, false) < 0) return false;
  slot = view;
  return true;
}

// An operand where a backward may have filled .grad, replaced by that .grad.
bool grad_operand(StepBuilder& gen, Step& next) {
  std::vector<std::size_t> slots;
  for (std::size_t k = 0; k < next.inputs.size(); ++k)
    if (gen.state().live(next.inputs[k]) && gen.state().value(next.inputs[k]).has_grad) slots.push_back(k);
  if (slots.empty()) return false;
  int& slot = next.inputs[gen.rng().pick(slots)];
  const int g = gen.emit(OpId::Grad, {slot});
  if (g < 0) return false;
  slot = g;
  return true;
}

// Before a deepcopy of x, a deepcopy under the same memo of a tensor related to x: one copy.deepcopy call meeting
// two tensors the memo must keep related. `grad`: x.grad (a leaf requiring grad that has none gets one from a
// backward of its sum first), or the tensor whose .grad x is; otherwise a view of x.
bool memo_share(StepBuilder& gen, const Step& next, bool grad) {
  if (next.op != OpId::Deepcopy || next.inputs.empty() || !gen.state().live(next.inputs[0])) return false;
  const int x = next.inputs[0];
  const Step& made = gen.program().steps[static_cast<std::size_t>(x)];
  int other = -1;
  // A view of a tensor requiring grad is made under no_grad: with history, deepcopy would refuse it.
  if (!grad) other = gen.view_of(x, !gen.meta(x).requires_grad);
  else if (made.op == OpId::Grad && !made.inputs.empty() && gen.state().live(made.inputs[0])) other = made.inputs[0];
  else if (gen.state().value(x).has_grad) other = gen.emit(OpId::Grad, {x});
  else if (gen.meta(x).requires_grad && gen.state().value(x).leaf) {
    const int root = gen.reduce(x);
    if (root >= 0 && gen.emit(OpId::Backward, {root}) >= 0) other = gen.emit(OpId::Grad, {x});
  }
  if (other < 0 || other == x) return false;
  const std::int64_t memo = next.attrs.memo;
  return gen.emit(OpId::Deepcopy, {other}, [memo](program::Attrs& a) { a.memo = memo; }) >= 0;
}

bool edge_scalar_of(StepBuilder& gen, Step& next) {
  std::vector<program::Meta> in;
  for (int id : next.inputs) {
    if (!gen.state().live(id)) return false;
    in.push_back(gen.meta(id));
  }
  next.attrs.scalar = edge_scalar(gen.rng(), next.op, in);
  return true;
}

// A 0-dim tensor of another dtype than operand 0 in a later operand's place: type promotion ranks it as a
// scalar's category (a float64 one keeps float32 arithmetic in float32), and an in-place op may refuse the result
// type (an int tensor's add_ of a float one). A combination no recipe reaches often: about one case in 10^6.
bool zero_dim_operand(StepBuilder& gen, Step& next) {
  if (next.inputs.size() < 2 || !gen.state().live(next.inputs[0])) return false;
  const program::DType own = gen.meta(next.inputs[0]).dtype;
  std::vector<program::DType> others;
  for (program::DType d : program::kAllDTypes)
    if (d != own) others.push_back(d);
  const program::DType dtype = gen.rng().pick(others);
  const int zero_dim = gen.emit(OpId::Full, {}, [dtype](program::Attrs& a) {
    a.sizes = {};
    a.dtype = dtype;
    a.requires_grad = a.requires_grad && program::is_floating(dtype);
  });
  if (zero_dim < 0) return false;
  next.inputs[1 + static_cast<std::size_t>(gen.rng().below(static_cast<std::int64_t>(next.inputs.size()) - 1))] =
      zero_dim;
  return true;
}

// The steps a mutation may change or put steps before: those reading a scalar for EdgeScalar, those of two
// operands or more for ZeroDimOperand and SharedOperand, the deepcopies for MemoView and MemoGrad, those reading
// a tensor for WriteBefore (half the time only the backwards, where the program has some: a second saved tensor
// modified), WrittenView and GradOperand, any for the others (and the end, for RetainView).
std::vector<int> points(const Program& p, Mutation m, Rng& rng) {
  const bool backwards_only = m == Mutation::WriteBefore && rng.chance(0.5) &&
                              std::any_of(p.steps.begin(), p.steps.end(), [](const Step& s) {
                                return program::spec(s.op).runs_backward;
                              });
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(p.steps.size()); ++i) {
    const Step& s = p.steps[static_cast<std::size_t>(i)];
    const program::OpSpec& op = program::spec(s.op);
    bool fits = true;
    switch (m) {
      case Mutation::EdgeScalar: fits = op.reads(program::Attr::Scalar); break;
      case Mutation::ZeroDimOperand:
      case Mutation::SharedOperand: fits = op.arity >= 2; break;
      case Mutation::MemoView:
      case Mutation::MemoGrad: fits = s.op == OpId::Deepcopy; break;
      case Mutation::WriteBefore: fits = !s.inputs.empty() && (!backwards_only || op.runs_backward); break;
      case Mutation::WrittenView:
      case Mutation::GradOperand: fits = !s.inputs.empty(); break;
      case Mutation::Extend:
      case Mutation::SwapOperand:
      case Mutation::RetainView: break;
    }
    if (fits) out.push_back(i);
  }
  if (m == Mutation::RetainView) out.push_back(static_cast<int>(p.steps.size()));
  return out;
}

}  // namespace

std::optional<Program> mutate_with(const Program& p, Mutation m, Rng& rng, const GenConfig& cfg) {
  if (m == Mutation::Extend) return mutate_at(p, m, static_cast<int>(p.steps.size()), rng, cfg);
  const std::vector<int> at = points(p, m, rng);
  if (at.empty()) return std::nullopt;
  return mutate_at(p, m, rng.pick(at), rng, cfg);
}

std::optional<Program> mutate_at(const Program& p, Mutation m, int at, Rng& rng, const GenConfig& cfg) {
  const int n = static_cast<int>(p.steps.size());
  if (at < 0 || at > n || (at == n && m != Mutation::Extend && m != Mutation::RetainView)) return std::nullopt;
  if (m == Mutation::Extend && at != n) return std::nullopt;
  return rebuild(p, rng, cfg, at, [m](StepBuilder& g, Step* next) {
    switch (m) {
      case Mutation::Extend: return extend(g);
      case Mutation::SwapOperand: return next && swap_operand(g, *next, false);
      case Mutation::RetainView: return retain_view(g, next);
      case Mutation::WriteBefore: return write_before(g, next);
      case Mutation::EdgeScalar: return next && edge_scalar_of(g, *next);
      case Mutation::ZeroDimOperand: return next && zero_dim_operand(g, *next);
      case Mutation::WrittenView: return next && written_view(g, *next);
      case Mutation::SharedOperand: return next && swap_operand(g, *next, true);
      case Mutation::GradOperand: return next && grad_operand(g, *next);
      case Mutation::MemoView: return next && memo_share(g, *next, false);
      case Mutation::MemoGrad: return next && memo_share(g, *next, true);
    }
    PARITY_HARNESS_UNREACHABLE("no case for this mutation");
  });
}

std::optional<Program> mutate(const Program& p, Rng& rng, const GenConfig& cfg) {
  const bool grows = static_cast<int>(p.steps.size()) + kMostInserted <= cfg.max_steps + kGrowthSteps;
  static const double weights[kMutationCount] = {3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1};
  static const double no_growth[kMutationCount] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const auto m = static_cast<Mutation>(rng.weighted(grows ? weights : no_growth));
    // A mutation may give the program back (an edge the scalar already was): that is no mutant.
    if (auto out = mutate_with(p, m, rng, cfg); out && *out != p) return out;
  }
  return std::nullopt;
}

}  // namespace parity::generators
