#include "generators/step_builder.h"

#include <algorithm>
#include <cmath>

#include "generators/attr_gen.h"
#include "generators/layout_gen.h"
#include "program/json.h"

namespace parity::generators {

using program::Attrs;
using program::DType;
using program::Meta;
using program::OpId;
using program::OpKind;
using program::Program;
using program::Step;

namespace {

// The largest magnitude random_scalar's small range draws (generators/attr_gen.cpp); past it is an edge value.
constexpr double kLargestSmallScalar = 3.0;

// The ops of the table with a trait, in table order.
template <typename Pred>
std::vector<OpId> ops_where(Pred pred) {
  std::vector<OpId> out;
  for (const program::OpSpec& op : program::op_table())
    if (!op.device_only && pred(op)) out.push_back(op.id);
  return out;
}

// Views that are always views (reshape may copy; expand's elements overlap): the ones a write can go through.
const std::vector<OpId>& view_ops() {
  static const auto ops = ops_where([](const program::OpSpec& op) { return op.result == program::ResultIs::View; });
  return ops;
}
// In-place writes of a scalar (add_(2), mul_(3), fill_, zero_): what the recipes write through views and leaves.
const std::vector<OpId>& scalar_writes() {
  static const auto ops = ops_where([](const program::OpSpec& op) { return op.writes_scalar(); });
  return ops;
}

// A reduction, or an op whose derivative reads what it saves: where operands requiring grad make the cases.
bool is_reduction_or_saver(const program::OpSpec& op) {
  return !op.is_inplace() && (op.kind == OpKind::Reduction || op.saves != program::Saves::Nothing);
}

// A copy into the dtype the step names (to, to with a memory format): where rounding meets truncation.
bool converts_dtype(OpId op) {
  const program::OpSpec& s = program::spec(op);
  return s.kind == OpKind::Copy && s.reads(program::Attr::DType);
}

}  // namespace

std::vector<bool> StepBuilder::draw_swarm(std::size_t recipes) {
  const auto& table = program::op_table();
  op_enabled_.assign(table.size(), true);
  // Random steps draw only from the selection (generators/selection.h), so that a narrow one still makes long
  // programs; what recipes and leaves emit outside it is dropped afterwards.
  if (!cfg_.selection.ops.empty())
    for (std::size_t i = 0; i < table.size(); ++i) op_enabled_[i] = cfg_.selection.ops[i];
  std::vector<bool> recipe_enabled(recipes, true);
  if (!rng_.chance(cfg_.swarm_share)) return recipe_enabled;
  for (const program::OpSpec& op : table)
    if (op.kind != OpKind::Factory && !op.runs_backward && (!op.device_only || cfg_.cuda) && rng_.chance(0.5))
      op_enabled_[static_cast<std::size_t>(op.id)] = false;
  for (std::size_t k = 0; k < recipes; ++k) recipe_enabled[k] = rng_.chance(0.5);
  return recipe_enabled;
}

bool StepBuilder::room() const { return state_.size() < length_; }

int StepBuilder::append(const Step& step) {
  Step s = step;
  // A create_graph backward only through graphs whose derivatives impl records as LibTorch does.
  if (s.attrs.create_graph && !std::all_of(s.inputs.begin(), s.inputs.end(), [&](int in) { return twice(in); }))
    s.attrs.create_graph = false;
  prog_.steps.push_back(s);
  const bool ok = state_.append(s).expected_ok();
  track_rounding(s, ok);
  track_double_backward(s);
  return state_.size() - 1;
}

bool StepBuilder::admits(const Step& step) const {
  if (!program::within_dims_limit(step)) return false;
  const StepInfo info = state_.check(step);
  return !info.undefined && (!info.expected_ok() || !loses_rounding(step));
}

std::vector<int> StepBuilder::live() const {
  std::vector<int> out;
  for (int i = 0; i < state_.size(); ++i)
    if (state_.live(i)) out.push_back(i);
  return out;
}

const Meta& StepBuilder::meta(int id) const { return *state_.value(id).meta; }

void StepBuilder::random_step() {
  const bool want_valid = !rng_.chance(cfg_.invalid_share);
  const auto& table = program::op_table();
  bool any_value = false, rg_scalar = false, rg_any = false;
  for (int id : live()) {
    any_value = true;
    rg_any = rg_any || meta(id).requires_grad;
    rg_scalar = rg_scalar || (meta(id).requires_grad && meta(id).numel() == 1);
  }
  std::vector<double> w(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const program::OpSpec& op = table[i];
    w[i] = op_enabled_[i] && (!op.device_only || cfg_.cuda) ? op.weight : 0;
    if (op.arity > 0 && !any_value) w[i] = 0;
    if (op.id == OpId::Backward) w[i] *= rg_scalar ? 3 : (want_valid ? 0 : 0.3);
    if (op.id == OpId::RetainGrad && want_valid && !rg_any) w[i] = 0;
    if ((op.id == OpId::Sum || op.id == OpId::Mean) && rg_any && !rg_scalar) w[i] *= 2;
  }
  for (int attempt = 0; attempt < 12; ++attempt) {
    int k = rng_.weighted(w);
    if (k < 0) break;
    if (auto s = make_step(table[static_cast<std::size_t>(k)].id, want_valid)) {
      append(*s);
      return;
    }
    w[static_cast<std::size_t>(k)] = 0;
  }
  // Nothing fits (rare: e.g. only empty values and an ill-typed wish): a fresh leaf always does.
  Step s{OpId::Rand, {}, valid_attrs(rng_, OpId::Rand, {}, 0, cfg_.cuda), true};
  append(s);
}

// Appends a well-typed step of `op` on `inputs`, with attributes drawn then adjusted by `tweak`; -1 when no
// room is left or no attempt gives a step expected to succeed (`allow_raise`: well-typed is enough).
int StepBuilder::emit(OpId op, std::vector<int> inputs, const Tweak& tweak, bool grad, bool allow_raise) {
  if (!room()) return -1;
  for (int in : inputs)
    if (!state_.live(in)) return -1;
  auto ms = metas(inputs);
  // The op table's operand-0 dtypes bind recipes too (no bfloat16 product, whatever dtype a recipe drew).
  if (!ms.empty() && !program::allows(program::spec(op).operand0.dtypes, ms[0].dtype) && !allow_raise) return -1;
  std::int64_t storage = inputs.empty() ? 0 : state_.value(inputs[0]).storage_numel;
  for (int attempt = 0; attempt < 8; ++attempt) {
    Step s{op, inputs, valid_attrs(rng_, op, ms, storage, cfg_.cuda), grad};
    if (tweak) tweak(s.attrs);
    if (!program::within_dims_limit(s) || loses_rounding(s)) continue;
    StepInfo info = state_.check(s);
    if (info.undefined) continue;
    if (info.expected_ok() || (allow_raise && info.inputs_ok && info.table_ok)) return append(s);
  }
  return -1;
}

DType StepBuilder::floating() {
  static const DType kinds[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  double weights[] = {60, 20, 10, 10};
  const auto& selected = cfg_.selection.dtypes;
  if (!selected.empty()) {
    for (std::size_t k = 0; k < std::size(kinds); ++k)
      if (std::find(selected.begin(), selected.end(), kinds[k]) == selected.end()) weights[k] = 0;
    // No floating dtype selected: the leaves take a selected one, and the float-only ops raise on them.
    if (std::all_of(std::begin(weights), std::end(weights), [](double w) { return w == 0; })) return selected[0];
  }
  return kinds[std::max(rng_.weighted(weights), 0)];
}

// A fresh leaf with these sizes and some layout (of a selected dtype: another would be dropped with its users).
int StepBuilder::fresh(const std::vector<std::int64_t>& sizes, DType dtype, bool rg) {
  const auto& selected = cfg_.selection.dtypes;
  if (!selected.empty() && std::find(selected.begin(), selected.end(), dtype) == selected.end()) dtype = floating();
  return emit(OpId::Rand, {}, [&](Attrs& a) {
    LayoutSpec l = random_layout_for(rng_, sizes);
    a.sizes = l.sizes;
    a.strides = l.strides;
    a.offset = l.offset;
    a.dtype = dtype;
    a.requires_grad = rg;
  });
}

// A floating leaf requiring grad: an existing one now and then, else a new one of any layout.
int StepBuilder::rg_leaf() {
  std::vector<int> have;
  for (int id : live())
    if (meta(id).requires_grad && state_.value(id).leaf && program::is_floating(meta(id).dtype)) have.push_back(id);
  if (!have.empty() && rng_.chance(0.4)) return rng_.pick(have);
  DType d = floating();
  return emit(OpId::Rand, {}, [d](Attrs& a) {
    a.dtype = d;
    a.requires_grad = true;
  });
}

// A view of `x` (or `x` itself when no view op fits it).
// `single_output`: not unbind/split/chunk, whose outputs refuse in-place writes with grad on.
int StepBuilder::view_of(int x, bool grad, bool single_output) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    OpId op = rng_.pick(view_ops());
    if (single_output && program::spec(op).multi_output) op = OpId::Transpose;
    int v = emit(op, {x}, {}, grad);
    if (v >= 0) return v;
  }
  return x;
}

// An in-place write on `x`; overlapping memory only takes fill_/zero_.
int StepBuilder::write(int x, bool grad, bool allow_raise) {
  int w = emit(rng_.pick(scalar_writes()), {x}, {}, grad, allow_raise);
  return w >= 0 ? w : emit(OpId::Fill_, {x}, {}, grad, allow_raise);
}

// A one-element result of y for a backward: its sum or mean, after a conversion to float32 for a dtype the
// reductions are not generated on (kReducibleTypes).
int StepBuilder::reduce(int y) {
  if (!state_.live(y)) return -1;
  if (!program::allows(program::spec(OpId::Sum).operand0.dtypes, meta(y).dtype))
    y = emit(OpId::To, {y}, [](Attrs& a) { a.dtype = DType::Float32, a.copy = false; });
  if (y < 0) return -1;
  return emit(program::is_floating(meta(y).dtype) && rng_.chance(0.4) ? OpId::Mean : OpId::Sum, {y});
}

// A backward from s, `times` times over a graph retained in between. Now and then it is one backward from two
// roots: s twice, or s and another reduction of what s reduced (the roots share a graph, so a node both reach
// runs once with the sum of what arrives).
void StepBuilder::backward(int s, int times) {
  for (int t = 0; t < times; ++t) {
    bool retain = t + 1 < times ? rng_.chance(0.7) : rng_.chance(0.3);
    auto keep = [retain](Attrs& a) { a.retain_graph = retain; };
    int other = rng_.chance(0.12) ? second_root(s) : -1;
    if ((other >= 0 ? emit(OpId::BackwardRoots, {s, other}, keep) : emit(OpId::Backward, {s}, keep)) < 0) return;
  }
}

// Operands for `op` with x where it is differentiable (operand 0, or 1 when operand 0 must be of another dtype,
// where's condition) and fresh tensors elsewhere: of x's shape (transposed for mm's second) and x's dtype (now
// and then another floating one) or bool (a mask, a condition), or arange(x.size(0)) (an index, every entry
// in range), the first combination the shape rule accepts. nullopt when none does or a tensor could not be
// made.
std::optional<std::vector<int>> StepBuilder::operands_around(OpId op, int x) {
  const program::OpSpec& spec = program::spec(op);
  // Nothing to make: the step's attributes, drawn by emit, decide the rest (the rule cannot be judged here
  // without them).
  if (spec.arity == 1) return std::vector<int>{x};
  const Meta xm = meta(x);
  const int x_slot = program::allows(spec.operand0.dtypes, xm.dtype) ? 0 : 1;
  std::vector<Meta> slots(static_cast<std::size_t>(spec.arity), xm);
  const DType other = rng_.chance(0.8) ? xm.dtype : floating();
  enum Kind { Other, Mask, Index };
  const int others = spec.arity - 1;
  int combos = 1;
  for (int k = 0; k < others; ++k) combos *= 3;
  std::vector<Kind> kinds(static_cast<std::size_t>(spec.arity), Other);
  for (int combo = 0; combo < combos; ++combo) {
    int rest = combo;
    bool possible = true;
    for (int k = 0; k < spec.arity; ++k) {
      if (k == x_slot) continue;
      kinds[k] = static_cast<Kind>(rest % 3);
      rest /= 3;
      slots[k] = xm;
      slots[k].requires_grad = false;
      if (k == 1 && (op == OpId::Mm || op == OpId::Matmul)) std::reverse(slots[k].sizes.begin(), slots[k].sizes.end());
      if (kinds[k] == Other) slots[k].dtype = other;
      if (kinds[k] == Mask) slots[k].dtype = DType::Bool;
      if (kinds[k] == Index) {
        possible = possible && !xm.sizes.empty();
        slots[k] = Meta{{xm.sizes.empty() ? 0 : xm.sizes[0]}, DType::Int64, false};
      }
      // A fresh operand 0 must be of a dtype the op takes there (no bfloat16 product).
      if (k == 0 && !program::allows(spec.operand0.dtypes, slots[k].dtype)) possible = false;
    }
    if (!possible || !spec.infer(slots, Attrs{})) continue;
    std::vector<int> inputs;
    for (int k = 0; k < spec.arity; ++k) {
      if (k == x_slot) inputs.push_back(x);
      else if (kinds[k] == Index) inputs.push_back(emit(OpId::Arange, {}, [&](Attrs& a) { a.end = slots[k].sizes[0], a.dtype = DType::Int64; }));
      else inputs.push_back(fresh(slots[k].sizes, slots[k].dtype, kinds[k] == Other && rng_.chance(0.6)));
      if (inputs.back() < 0) return std::nullopt;
    }
    return inputs;
  }
  return std::nullopt;
}

// Cheap pre-filter: an operand that cannot make `op` well-typed is not worth a try.
bool StepBuilder::fits(OpId op, int slot, int id) const {
  if (slot > 0) return true;
  const program::OpSpec& spec = program::spec(op);
  const program::Operand0& want = spec.operand0;
  const Meta& m = meta(id);
  const auto rank = static_cast<int>(m.sizes.size());
  if (!program::allows(want.dtypes, m.dtype) || rank < want.min_rank || rank > want.max_rank) return false;
  if (want.some_dim_nonempty && std::none_of(m.sizes.begin(), m.sizes.end(), [](auto s) { return s > 0; }))
    return false;
  if ((want.requires_grad && !m.requires_grad) || (want.single_element && m.numel() != 1)) return false;
  if (want.leaf && !state_.value(id).leaf) return false;
  // exp turns an absolute error of its operand into a relative error of its result. An operand computed
  // through exp, pow or a reduction carries last-bit differences that both libraries may legitimately
  // make (libm vs SLEEF, summation order): exp of it is a false alarm, not a finding.
  return !(spec.amplifies_rounding && carries_rounding(id));
}

// A step that turns last-bit differences of an operand into differences a tolerance cannot absorb, beyond what
// the op table's amplifies_rounding says of an op: truncation to an integer dtype (to, copy_ into an integer
// tensor); a float64 result of a rounded float32 operand (float32's error judged at float64's tolerance); and
// division by a value that may have lost its leading digits to cancellation (1 - tanh(x)^2 near saturation).
// Such cases are false alarms, not findings.
bool StepBuilder::loses_rounding(const Step& s) const {
  auto rounded = [&](std::size_t k) { return k < s.inputs.size() && state_.live(s.inputs[k]) && carries_rounding(s.inputs[k]); };
  auto dtype_of = [&](std::size_t k) { return meta(s.inputs[k]).dtype; };
  // The op table's amplifiers (exp, log, sqrt, eq), on any operand: recipes do not go through fits(), which
  // only judges operand 0.
  if (program::spec(s.op).amplifies_rounding)
    for (std::size_t k = 0; k < s.inputs.size(); ++k)
      if (rounded(k)) return true;
  // An out= form computes its op on the operands after out.
  const std::size_t first = program::spec(s.op).out_of ? 1 : 0;
  const OpId computes = program::spec(s.op).out_of.value_or(s.op);
  // A quotient of rounded operands: a rounded denominator near zero, or a rounded numerator over a zero, where
  // a last-bit difference is the one between 0/0 (NaN) and a tiny value over 0 (inf).
  if ((computes == OpId::Div || computes == OpId::Div_) && (rounded(first) || rounded(first + 1))) return true;
  if ((s.op == OpId::DivScalar || s.op == OpId::DivScalar_) && s.attrs.scalar.value == 0 && rounded(0)) return true;
  // A sum or difference of two rounded operands of one history (exp'd values less their sum, which one of them
  // dominates): their leading digits cancel, and a last-bit difference of either becomes one the result's
  // tolerance does not absorb.
  const OpId adds = program::spec(computes).inplace_of.value_or(computes);
  if ((adds == OpId::Add || adds == OpId::Sub) && rounded(first) && rounded(first + 1) &&
      share_history(s.inputs[first], s.inputs[first + 1]))
    return true;
  // ... and casts it into out's dtype: a rounded operand's error judged at another dtype's tolerance, or
  // truncated to an integer.
  if (first == 1 && state_.live(s.inputs[0])) {
    for (std::size_t k = 1; k < s.inputs.size(); ++k)
      if (rounded(k) && dtype_of(k) != dtype_of(0)) return true;
    // An op that rounds (exp) computing in another dtype than out's: its own last-bit error judged at out's.
    const bool operands_live =
        std::all_of(s.inputs.begin() + 1, s.inputs.end(), [&](int id) { return state_.live(id); });
    if (program::spec(s.op).rounds && operands_live) {
      std::vector<program::Meta> in;
      for (std::size_t k = 1; k < s.inputs.size(); ++k) in.push_back(meta(s.inputs[k]));
      const auto computed = program::spec(computes).infer(in, s.attrs);
      if (computed && computed->dtype != dtype_of(0)) return true;
    }
  }
  // A scalar past the small range (an edge value: 2^31, 65504) scales a rounded operand's last-bit error, which the
  // tolerance's absolute part absorbed, into one it does not (addcmul(z, 1 - tanh^2, value=2^31)); so does an
  // operand holding such a value (mul(1 - tanh^2, full([], 2^31))).
  if (program::spec(s.op).reads(program::Attr::Scalar) && !(std::abs(s.attrs.scalar.value) <= kLargestSmallScalar))
    for (std::size_t k = 0; k < s.inputs.size(); ++k)
      if (rounded(k)) return true;
  for (std::size_t k = 0; k < s.inputs.size(); ++k)
    for (std::size_t j = 0; j < s.inputs.size(); ++j)
      if (j != k && rounded(k) && state_.live(s.inputs[j]) && holds_large(s.inputs[j])) return true;
  // A reciprocal, or a root: like sqrt, x^0.5 turns a last-bit error of a value near zero (1 - tanh^2 at
  // saturation) into an error no tolerance absorbs.
  if (s.op == OpId::Pow && rounded(0) && s.attrs.scalar.value < 1 && s.attrs.scalar.value != 0) return true;
  // A rounded user gradient reaches leaves of any dtype.
  if (program::spec(s.op).gradient >= 0 && rounded(static_cast<std::size_t>(program::spec(s.op).gradient))) return true;
  // A rounded root whose gradient is computed in a less precise dtype than a value it reaches: a float32 sum's
  // order (a broadcast operand's sum_to) or a float32 derivative of a rounded result, judged at float64's
  // tolerance in that value's .grad.
  if (program::spec(s.op).runs_backward)
    for (std::size_t k = 0; k < static_cast<std::size_t>(program::spec(s.op).roots) && k < s.inputs.size(); ++k)
      if (rounded(k) && narrows_gradient(s.inputs[k])) return true;
  if (converts_dtype(s.op)) return rounded(0) && (!program::is_floating(s.attrs.dtype) || s.attrs.dtype != dtype_of(0));
  if (s.op == OpId::Copy_)
    return rounded(1) && state_.live(s.inputs[0]) && dtype_of(0) != dtype_of(1);
  // A rounded floating operand of an op that also reads another floating dtype: computed in the wider one
  // (float32 with float64), its last-bit error is judged at that dtype's tolerance; computed in the narrower
  // one (a float16 tensor times a float32 0-dim), it may tip a rounding to the other neighbour, a difference the
  // next op doubles.
  for (std::size_t k = 0; k < s.inputs.size(); ++k) {
    if (!rounded(k) || !program::is_floating(dtype_of(k))) continue;
    for (std::size_t j = 0; j < s.inputs.size(); ++j)
      if (state_.live(s.inputs[j]) && program::is_floating(dtype_of(j)) && dtype_of(j) != dtype_of(k)) return true;
  }
  return false;
}

// Whether value `id` was computed, at any depth, by an op whose float32 result may differ in its last bits.
// Kept per value as steps are appended; a write into a value (exp_(v), v.add_(w) with a rounded w) marks the
// value written too.
bool StepBuilder::carries_rounding(int id) const { return rounding_[static_cast<std::size_t>(id)]; }

bool StepBuilder::narrows_gradient(int id) const { return narrowing_[static_cast<std::size_t>(id)]; }

bool StepBuilder::holds_large(int id) const { return large_[static_cast<std::size_t>(id)]; }

// Whether some value is an input, at any depth, of both (each counting as its own): value k is step k's result.
bool StepBuilder::share_history(int a, int b) const {
  auto history = [&](int id) {
    std::vector<bool> in(prog_.steps.size(), false);
    std::vector<int> stack{id};
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      if (v < 0 || in[static_cast<std::size_t>(v)]) continue;
      in[static_cast<std::size_t>(v)] = true;
      for (int input : prog_.steps[static_cast<std::size_t>(v)].inputs) stack.push_back(input);
    }
    return in;
  };
  const std::vector<bool> of_a = history(a), of_b = history(b);
  for (std::size_t v = 0; v < of_a.size(); ++v)
    if (of_a[v] && of_b[v]) return true;
  return false;
}

namespace {
// How precisely a floating dtype holds a value (its significand's bits); 0 for the others.
int precision(program::DType d) {
  switch (d) {
    case program::DType::Float64: return 53;
    case program::DType::Float32: return 24;
    case program::DType::Float16: return 11;
    case program::DType::BFloat16: return 8;
    default: return 0;
  }
}
}  // namespace

void StepBuilder::track_rounding(const Step& s, bool expected_ok) {
  const program::OpSpec& op = program::spec(s.op);
  bool r = rounds(s.op);
  for (int in : s.inputs) r = r || carries_rounding(in);
  rounding_.push_back(r);
  bool n = false;
  if (state_.live(state_.size() - 1) && meta(state_.size() - 1).requires_grad)
    for (int in : s.inputs)
      if (state_.live(in) && meta(in).requires_grad)
        n = n || narrows_gradient(in) || precision(meta(in).dtype) > precision(meta(state_.size() - 1).dtype);
  narrowing_.push_back(n);
  auto past_small = [](const program::Scalar& v) { return !(std::abs(v.value) <= kLargestSmallScalar); };
  bool big = (op.reads(program::Attr::Scalar) && past_small(s.attrs.scalar)) ||
             std::any_of(s.attrs.elements.begin(), s.attrs.elements.end(), past_small);
  for (int in : s.inputs) big = big || (state_.live(in) && holds_large(in));
  large_.push_back(big);
  // The memory a value lives in: its own, or its operand's for any result that may share it (the operand
  // itself, views, detach/.data and unsafe aliases, a reshape or to() that may return a view or the operand).
  using program::ResultIs;
  const bool shares = !s.inputs.empty() && op.result != ResultIs::Fresh && op.result != ResultIs::Grad &&
                      op.result != ResultIs::Nothing;
  memory_.push_back(shares ? memory_[static_cast<std::size_t>(s.inputs.front())] : state_.size() - 1);
  // A write marks every value over the written memory: the tensor under its other ids, its views, its base.
  // An assigned .grad is written by every later backward, through derivative formulas.
  auto mark = [&](int id, std::vector<bool>& flags) {
    const int written = memory_[static_cast<std::size_t>(id)];
    for (std::size_t v = 0; v < memory_.size(); ++v)
      if (memory_[v] == written) flags[v] = true;
  };
  if (r && op.kind == OpKind::InPlace) mark(s.inputs.front(), rounding_);
  if (n && op.kind == OpKind::InPlace) mark(s.inputs.front(), narrowing_);
  if (big && op.kind == OpKind::InPlace) mark(s.inputs.front(), large_);
  if (op.writes_grad && s.inputs.size() > 1) mark(s.inputs[1], rounding_);
  // set_data: operand 0, under every id of the tensor, now lives in operand 1's memory, with its values.
  if (s.op == OpId::SetData && expected_ok) {
    const int tensor = state_.value(s.inputs[0]).tensor;
    const auto data = static_cast<std::size_t>(s.inputs[1]);
    for (int v = 0; v + 1 < state_.size(); ++v)
      if (state_.value(v).tensor == tensor) {
        memory_[static_cast<std::size_t>(v)] = memory_[data];
        rounding_[static_cast<std::size_t>(v)] = rounding_[data];
        narrowing_[static_cast<std::size_t>(v)] = narrowing_[data];
        large_[static_cast<std::size_t>(v)] = large_[data];
      }
  }
}

bool StepBuilder::rounds(OpId op) { return program::spec(op).rounds; }

// Whether value `id`'s history holds only ops whose derivatives impl records as LibTorch does under create_graph
// (program::double_backward), so that a create_graph backward from it, and anything derived from what that
// backward makes, is worth comparing. Kept per value as steps are appended, over the memory rounding tracks.
bool StepBuilder::twice(int id) const { return twice_[static_cast<std::size_t>(id)]; }

void StepBuilder::track_double_backward(const Step& s) {
  const program::OpSpec& op = program::spec(s.op);
  bool t = program::double_backward(s.op);
  for (int in : s.inputs) t = t && twice(in);
  const auto tensor_of = [&](int id) { return state_.value(id).tensor; };
  // .grad was made by recorded formulas, unless it was assigned a value that is not.
  if (op.result == program::ResultIs::Grad) t = !untwice_grads_.contains(tensor_of(s.inputs[0]));
  twice_.push_back(t);
  if (op.writes_grad && !s.inputs.empty()) {
    if (s.inputs.size() > 1 && !twice(s.inputs[1])) untwice_grads_.insert(tensor_of(s.inputs[0]));
    else untwice_grads_.erase(tensor_of(s.inputs[0]));
  }
  // An in-place write gives the written tensor (or a view's base, through CopySlices) the op's node, and every
  // view of that memory a regenerated AsStridedBackward0, whose derivative impl does not record.
  if (!op.is_inplace() || s.inputs.empty()) return;
  const int written = memory_[static_cast<std::size_t>(s.inputs[0])];
  for (std::size_t v = 0; v < memory_.size(); ++v) {
    if (memory_[v] != written) continue;
    if (state_.value(static_cast<int>(v)).view) twice_[v] = false;
    else twice_[v] = twice_[v] && t;
  }
}

double StepBuilder::operand_weight(OpId op, int slot, int id) const {
  const ValueInfo& v = state_.value(id);
  double w = id >= state_.size() - 4 ? 3.0 : 1.0;  // recent values make chains
  if (slot == 0) {
    if (op == OpId::Backward && v.meta->requires_grad && v.meta->numel() == 1) w *= 30;
    if (op == OpId::RetainGrad && !v.leaf) w *= 4;
    if ((op == OpId::Grad || op == OpId::ResetGrad) && v.has_grad) w *= 20;
    if (is_reduction_or_saver(program::spec(op)) && v.meta->requires_grad) w *= 3;
    if (program::spec(op).kind == OpKind::InPlace && v.view) w *= 2;
    if (program::spec(op).kind == OpKind::View && v.meta->sizes.empty()) w *= 0.3;
  }
  return w;
}

std::optional<std::vector<int>> StepBuilder::pick_operands(OpId op, bool want_valid) {
  const program::OpSpec& spec = program::spec(op);
  std::vector<int> ids = live();
  std::vector<int> inputs;
  for (int slot = 0; slot < spec.arity; ++slot) {
    std::vector<double> w(ids.size(), 0.0);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (!want_valid) {
        w[k] = 1.0;
        continue;
      }
      if (!fits(op, slot, ids[k])) continue;
      // The last operand completes the step: the tracker judges it with default attributes (binary and
      // ternary ops read none that decide validity).
      if (slot > 0 && slot == spec.arity - 1) {
        Step probe{op, inputs, {}, true};
        probe.inputs.push_back(ids[k]);
        if (!state_.check(probe).expected_ok()) continue;
      }
      w[k] = operand_weight(op, slot, ids[k]);
    }
    int k = rng_.weighted(w);
    if (k < 0) return std::nullopt;
    inputs.push_back(ids[static_cast<std::size_t>(k)]);
  }
  return inputs;
}

// When no live values complete a multi-operand step (an index and values of matching shapes, a mask), its
// other operands are made for it around a live operand 0 that fits (operands_around).
std::optional<std::vector<int>> StepBuilder::operands_for_first(OpId op) {
  // Room for the operands made and the step itself.
  if (program::spec(op).arity < 2 || length_ - state_.size() < program::spec(op).arity) return std::nullopt;
  std::vector<int> ids = live();
  std::vector<double> w(ids.size(), 0.0);
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (fits(op, 0, ids[k])) w[k] = operand_weight(op, 0, ids[k]);
  const int k = rng_.weighted(w);
  if (k < 0) return std::nullopt;
  return operands_around(op, ids[static_cast<std::size_t>(k)]);
}

std::vector<Meta> StepBuilder::metas(const std::vector<int>& inputs) const {
  std::vector<Meta> out;
  for (int in : inputs) out.push_back(meta(in));
  return out;
}

std::optional<Step> StepBuilder::make_step(OpId op, bool want_valid) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto inputs = pick_operands(op, want_valid);
    if (!inputs && want_valid) inputs = operands_for_first(op);
    if (!inputs) return std::nullopt;
    auto ms = metas(*inputs);
    std::int64_t storage = inputs->empty() ? 0 : state_.value((*inputs)[0]).storage_numel;
    Step s{op, *inputs, valid_attrs(rng_, op, ms, storage, cfg_.cuda), !rng_.chance(0.1)};
    if (!want_valid && (inputs->empty() || rng_.chance(0.6))) spoil_attrs(rng_, op, ms, s.attrs);
    if (!program::within_dims_limit(s)) continue;
    if (want_valid && loses_rounding(s)) continue;
    StepInfo info = state_.check(s);
    if (info.undefined) continue;
    if (want_valid && info.expected_ok()) return s;
    // Well-typed steps that raise for autograd reasons are behaviour to compare too; keep a few.
    if (want_valid && info.inputs_ok && info.table_ok && rng_.chance(0.15)) return s;
    if (!want_valid && info.ill_typed()) return s;
  }
  return std::nullopt;
}

int StepBuilder::second_root(int s) {
  const auto& made = prog_.steps[static_cast<std::size_t>(s)];
  if (rng_.chance(0.3) || made.inputs.empty()) return s;
  int z = emit(rng_.pick({OpId::MulScalar, OpId::Exp, OpId::Neg}), {made.inputs[0]});
  return z < 0 ? -1 : reduce(z);
}

}  // namespace parity::generators
