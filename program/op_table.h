// The one op table: every per-op fact lives in the op's entry in program/ops.def. Generation (arity, attributes,
// shape rule, operand constraints, weight), the generator's model of autograd (what an op saves, whether its
// result is a view, an alias or its operand itself), the run loop's observation rules, coverage, the JSON codec
// and schema, and the C++/Python repro printers all read the entry; no other file lists ops by kind.
#pragma once
#include <iterator>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "program/types.h"

namespace parity::program {

enum class OpId : std::uint8_t {
#define PARITY_OP(id, ...) id,
#include "program/ops.def"
#undef PARITY_OP
};

// An attribute names a field of Attrs and, for sizes, the rule the generator follows to pick it: one row of
// program/attrs.def each.
enum class Attr : std::uint8_t {
#define PARITY_ATTR(id, ...) id,
#include "program/attrs.def"
#undef PARITY_ATTR
};

enum class OpKind : std::uint8_t { Factory, Copy, View, Arithmetic, Reduction, InPlace, Autograd };


// What the op's result is, relative to operand 0.
enum class ResultIs : std::uint8_t {
  Fresh,          // a new tensor with its own storage
  View,           // an autograd view of operand 0, always (in-place writes through it rebase operand 0's history)
  ViewOrCopy,     // a view when one can express the result, else a copy (reshape)
  ExpandedView,   // a view whose elements share memory by construction (expand): in-place writes raise
  Alias,          // shares operand 0's storage without being an autograd view (detach, .data)
  Operand,        // operand 0 itself (in-place ops, detach_, requires_grad_)
  OperandIfNoOp,  // operand 0 itself when nothing needs doing (to, contiguous), else a fresh copy
  Grad,           // operand 0's .grad tensor itself; no value when it has none
  // Shares operand 0's storage and is in its graph, but is no autograd view and has its own version counter
  // (unsafe_split, unsafe_chunk): writes through it are allowed, bump neither version nor rebase operand 0.
  UnsafeAlias,
  Nothing,        // no value (backward, retain_grad)
};

// What the op's derivative reads, saved at the forward: writing a saved tensor in place before backward is a
// version error.
enum class Saves : std::uint8_t {
  Nothing,   // add, sub, views, copies
  Self,      // operand 0 (abs, clamp, pow); in-place forms save a copy of it, so later writes are fine
  Result,    // the op's own result (exp, sigmoid, tanh, relu): writing the result breaks backward
  Operands,  // the tensor operands each other's gradient needs (mul, div, mm, matmul)
  Others,    // every tensor operand but operand 0 (masked_fill's mask, addcmul's two factors)
  Operand1,  // operand 1 only (index_put_'s index: not the values, whose shape is all its derivative reads)
};

// How an in-place op writes operand 0.
enum class Writes : std::uint8_t {
  Computed,  // from operand 0's own elements (add_, exp_): overlapping memory is an error
  Constant,  // one value into every element (fill_, zero_): overlap is harmless, nothing is read
  Operand1,  // operand 1's elements (copy_): the old contents are gone
  ConstantWhere,  // one value into the elements operand 1 (a bool mask) selects (masked_fill_): overlap is
                  // harmless, and the elements not selected keep their contents
  Result,         // the result of another op on operands 1.. (out= forms): the old contents are gone, every
                  // element written once, so overlapping memory is an error
};
// Whether every written element receives one value, so that elements sharing memory cannot disagree.
constexpr bool writes_one_value(Writes w) { return w == Writes::Constant || w == Writes::ConstantWhere; }
// Whether a write into elements that share memory leaves values that depend on the order of the writes. On cuda
// masked_fill_'s kernel writes every element (mask ? value : self, ATen's gpu_kernel), an unselected one with
// what it read, which a selected one sharing its memory may have overwritten since; the CPU's writes only the
// selected elements.
constexpr bool overlap_is_order_dependent(Writes w, bool on_cuda) {
  return !writes_one_value(w) || (on_cuda && w == Writes::ConstantWhere);
}

// A set of dtypes, for what operand 0 may be.
constexpr unsigned dtype_bit(DType d) { return 1u << static_cast<unsigned>(d); }
enum DTypes : unsigned {
  kAnyDType = (1u << std::size(kAllDTypes)) - 1,
  kFloating = dtype_bit(DType::Float32) | dtype_bit(DType::Float64) | dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16),
  kNotBool = kAnyDType & ~dtype_bit(DType::Bool),
  // Products: not bfloat16, whose LibTorch 1.13 gemm variants round at every step in orders that depend on the
  // operands' transposition, which impl's one matmul loop does not follow (sums that cancel then differ).
  kProductTypes = kNotBool & ~dtype_bit(DType::BFloat16),
  // Reductions: not the 16-bit floats. LibTorch 1.13 adds each inner loop's partial sum into the 16-bit output,
  // rounding wherever TensorIterator splits the loops, which impl's reductions do not follow yet (issue 14's
  // accumulation work); the generator reduces a 16-bit tensor after converting it to float32.
  kReducibleTypes = kAnyDType & ~dtype_bit(DType::Float16) & ~dtype_bit(DType::BFloat16),
};
constexpr bool allows(unsigned dtypes, DType d) { return (dtypes >> static_cast<unsigned>(d)) & 1u; }

// What operand 0 must be for the step to be worth generating as a valid one: a cheap pre-filter ahead of the
// shape rule (which also sees the attributes) and of the generator's autograd model.
struct Operand0 {
  unsigned dtypes = kAnyDType;
  int min_rank = 0;
  int max_rank = 64;
  bool some_dim_nonempty = false;  // select needs an index to pick
  bool requires_grad = false;      // backward, retain_grad
  bool single_element = false;     // backward without a gradient
  bool leaf = false;               // deepcopy
};

// What the generator's model of autograd needs about an operand (see generators/program_state.h).
struct OperandState {
  bool leaf = true;
  bool view = false;
  std::int64_t storage_numel = 0;
};

// What the generator knows of a value: enough to pick well-typed operands and attributes.
struct Meta {
  std::vector<std::int64_t> sizes;
  DType dtype = DType::Float32;
  bool requires_grad = false;
  std::int64_t numel() const;
};

struct Attrs;
using ShapeRule = std::optional<Meta> (*)(std::span<const Meta>, const Attrs&);

struct OpSpec {
  OpId id{};
  std::string_view name;        // JSON name
  OpKind kind{};
  int arity = 0;                // tensor operands
  std::vector<Attr> attrs = {};  // attributes read (and serialised), in printing order
  // What running the step does besides making its value (each a plain bool, like every other trait):
  bool mutates = false;           // writes operand 0 (or its autograd state): every live value is observed after it
  bool values_undefined = false;  // contents no program fixes (uninitialised memory, samples): not compared
  bool no_value = false;          // returns nothing
  bool runs_backward = false;     // runs the engine: gradients of every live value are observed
  bool writes_grad = false;       // assigns or resets operand 0's .grad: gradients of every live value are observed
  int weight = 0;               // relative generation weight
  std::string_view cpp;         // repro template: {0},{1} operands; {sizes},{dim},... attributes
  std::string_view py;
  // The ATen schema the C++ template calls, as LibTorch registers it (program/aten_schema.h): the run loop holds
  // both backends to its alias and mutation annotations. Empty for steps that are no dispatcher operator
  // (autograd API calls, .grad access, deepcopy, and composites such as rand's seeded strided tensor).
  std::string_view schema = {};
  // Shape/dtype rule used by the generator: nullopt when the step is expected to raise. In-place forms leave it
  // empty and take their out-of-place op's rule, checked for a result that can be written back.
  ShapeRule rule = nullptr;
  std::optional<OpId> inplace_of = std::nullopt;  // the out-of-place op this one is the in-place form of
  // The op this one is the out= form of (at::add_out(out, self, other)): an in-place kind writing that op's
  // result on operands 1.. into operand 0, resized when the shapes differ; with grad mode on it refuses any
  // operand requiring grad. Its shape rule is the op's, with the result castable to operand 0's dtype.
  std::optional<OpId> out_of = std::nullopt;
  ResultIs result = ResultIs::Fresh;
  Saves saves = Saves::Nothing;
  Writes writes = Writes::Computed;  // in-place ops only
  // An out= form whose out must have the result's dtype (TensorIterator's plain unary_op: neg, abs); the others
  // take any dtype the result can be cast to.
  bool out_dtype_exact = false;
  // In-place ops that read operands at positions other than the element they write (index_put_ reads its index
  // and values where the index points): memory shared with the destination makes the write order-dependent
  // even in the destination's own layout.
  bool gathers = false;
  // The kernel checks each index as it writes (index_put_'s TensorIterator loop): an out-of-range index raises
  // (index_range) after the elements before it were written. Every other in-place op checks before it writes,
  // so that a step of it that raised changed nothing.
  bool checks_while_writing = false;
  // float32 results may differ from LibTorch's in their last bits (libm vs SLEEF, summation order).
  bool rounds = false;
  // Turns an absolute error of an operand into a relative error of its result (exp), or into a different
  // result altogether (eq; sin and cos of a large argument, where the last bit of exp's result is a whole
  // period): an operand that carries rounding makes a false alarm, so the generator does not feed one.
  bool amplifies_rounding = false;
  // The result is a leaf even when it requires grad (factories, deepcopy).
  bool leaf_result = false;
  bool multi_output = false;  // keeps output `index` of several views (unbind, split, chunk)
  // A view that may reach any element of operand 0's storage, not only operand 0's elements (as_strided): its
  // values are as defined as every value over that storage.
  bool reads_storage = false;
  // false: impl's derivative of this op does not record what LibTorch's does when a backward runs with
  // create_graph (it computes with a kernel where derivatives.yaml uses differentiable ops), so the generator
  // asks for no create_graph backward through a graph holding it. An exception, each with its reason in
  // ops.def: PyTorch differentiates all of them twice.
  bool double_backward = true;
  // Generated only where programs may use a second device (`parity fuzz --device cuda`): the generator gives it no
  // weight and no swarm draw otherwise, so CPU campaigns' programs stay what they were, and coverage asks it of
  // no CPU campaign.
  bool device_only = false;
  // runs_backward ops: how many leading operands are roots the engine starts from (the operand after them, if any,
  // is backward's gradient or autograd.grad's input).
  int roots = 1;
  // runs_backward ops: the operand given as the roots' gradient (backward(gradient), autograd.grad's grad_outputs);
  // -1 when the engine makes an implicit one.
  int gradient = -1;
  Operand0 operand0 = {};
  // Run-time refusals the shape rule cannot see (they depend on autograd state or the storage): true when the
  // well-typed step raises.
  bool (*refuses)(const OperandState&, const Attrs&) = nullptr;
  // Whether the result's elements share memory with each other, given operand 0's and the result's shapes.
  bool (*overlaps)(const Meta& in, const Meta& out, const Attrs&) = nullptr;
  // Operands for which LibTorch's behaviour is undefined (it reads out of bounds, or breaks its own autograd
  // invariants so that what follows depends on the bug): such a step is never generated, valid or not, and the
  // shrinker makes none.
  bool (*undefined)(std::span<const Meta> in, const Attrs&) = nullptr;
  // For ResultIs::OperandIfNoOp: whether the attributes ask for nothing to be done (null: unknown from Meta).
  bool (*is_noop)(const Meta& in, const Attrs&) = nullptr;

  std::optional<Meta> infer(std::span<const Meta> in, const Attrs& attrs) const;
  bool is_inplace() const { return kind == OpKind::InPlace; }
  bool reads(Attr a) const;
  bool has_value() const { return !no_value; }
  // An in-place write of a scalar into its only operand (add_(2), mul_(3), fill_(v), zero_()).
  bool writes_scalar() const {
    return is_inplace() && arity == 1 && (reads(Attr::Scalar) || writes == Writes::Constant);
  }
};

const std::vector<OpSpec>& op_table();
const OpSpec& spec(OpId);
// OpSpec::double_backward of the op and, for an in-place form, of the op it is the in-place form of.
bool double_backward(OpId);
// Whether a backward can go through the op's result: it records autograd history (not a factory, an autograd
// call, an alias or copy made without history, a leaf-making op or an out= form).
bool records_history(const OpSpec&);
// An out= form that refuses tensors requiring grad while grad mode is on: VariableType's check for an op with a
// derivative (eq's out, of an op whose result never joins the graph, writes even a leaf that requires grad).
bool out_refuses_grad(const OpSpec& op);
std::optional<OpId> find_op(std::string_view name);
// find_op's refusal: " (did you mean \"mul\"?)" for the op name closest to `name`, or "".
std::string op_name_hint(std::string_view name);
std::string_view attr_name(Attr);
// The keys an attribute has in a step's JSON `attrs` (Strided is three: sizes, strides, offset).
std::vector<std::string_view> attr_json_keys(Attr);
std::string_view to_string(OpKind);

// PyTorch's type promotion, shared by shape rules (impl and LibTorch implement their own).
DType promote(DType a, DType b);

}  // namespace parity::program
