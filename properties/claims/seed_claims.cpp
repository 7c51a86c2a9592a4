// The registry of seed claims. Each entry restates one factual claim of a seed file (shared/seeds/*.txt) and
// checks it with a program of its own; some claims are wrong, and LibTorch says which. Python names in the
// comments (x.grad, y.clone()) are the values of the program, not code of the seeds.
#include <string>
#include <vector>

#include "program/program_builder.h"
#include "properties/claims/claim.h"

namespace parity::claims {
namespace {

using program::DType;
using program::MemoryFormat;
using program::OpId;
using program::ProgramBuilder;
using program::render_ints;
using judge::TensorObs;
using judge::Trace;

constexpr const char* kSeed0 = "000_8f20afcace787d72.txt";
constexpr const char* kSeed1 = "001_0eb46fe5404de266.txt";
constexpr const char* kSeed2 = "002_42f908d5a4841829.txt";
constexpr const char* kSeed3 = "003_c73b785c5b727395.txt";
constexpr const char* kSeed4 = "004_992d6d9837e2f385.txt";

using Check = std::function<Verdict(const Trace&)>;

Claim claim(std::string id, std::string source, std::vector<std::string> also_in, std::string statement,
            const ProgramBuilder& b, std::vector<int> may_raise, Check check) {
  return Claim{std::move(id), std::move(source),  std::move(also_in),  std::move(statement),
               b.program(),      std::move(may_raise), std::move(check)};
}

std::string dtype_of(const TensorObs& o) { return std::string(program::to_string(o.dtype)); }

// "shares storage with v0" / "own storage": storage relative to `source`.
std::string storage_vs(const TensorObs& source, const TensorObs& copy) {
  return shares_storage(source, copy) ? "shares the source's storage" : "storage apart from the source";
}

// An int64 tensor [11, 10, 9] that needs no grad (a leaf, like a literal): arange(3), negated, plus 11.
int int_tensor_11_10_9(ProgramBuilder& b) {
  const int r = b.arange(3, DType::Int64);
  const int n = b.unary(OpId::Neg, r);
  return b.int_scalar(OpId::AddScalar, n, 11);
}

// ================================================= 000 ========================================================

Claim clone_own_memory() {
  ProgramBuilder b;
  const int x = int_tensor_11_10_9(b);
  const int c = b.clone(x);
  return claim("clone-own-memory", kSeed0, {kSeed2},
               "clone() gives a tensor with its source's values, shape and dtype, held in a storage of its own.", b,
               {}, [=](const Trace& t) {
                 const TensorObs &xo = made(t, x), &co = made(t, c);
                 const bool same = co.values == xo.values && co.sizes == xo.sizes && co.dtype == xo.dtype;
                 const bool own = !shares_storage(xo, co);
                 return Verdict{same && own, "clone " + nums(co.values) + " " + dtype_of(co) + " sizes " +
                                                 render_ints(co.sizes) + " (source " + nums(xo.values) + " " +
                                                 dtype_of(xo) + " sizes " + render_ints(xo.sizes) + "), " +
                                                 storage_vs(xo, co)};
               });
}

Claim clone_write_leaves_source() {
  ProgramBuilder b;
  const int x = int_tensor_11_10_9(b);
  const int c = b.clone(x);
  const int e = b.select(c, 0, 0);
  const int w = b.int_scalar(OpId::Fill_, e, 100);
  return claim("clone-write-leaves-source", kSeed0, {}, "Setting an element of a clone leaves the source as it was.",
               b, {}, [=](const Trace& t) {
                 const auto& before = made(t, x).values;
                 const auto& xo = seen(t, w, x);
                 const auto& co = seen(t, w, c);
                 const bool written = !co.values.empty() && co.values[0] == 100;
                 return Verdict{written && xo.values == before,
                                "after clone[0] = 100: source " + nums(xo.values) + ", clone " + nums(co.values)};
               });
}

Claim clone_recorded_in_graph() {
  ProgramBuilder b;
  const int x = b.rand_strided({2, 3}, {3, 1}, 0, DType::Float32, true, 5);
  const int c = b.clone(x);
  return claim("clone-recorded-in-graph", kSeed0, {kSeed2},
               "The clone of a tensor that requires grad is a node of the autograd graph: not a leaf, with a grad_fn.",
               b, {}, [=](const Trace& t) {
                 const TensorObs& co = made(t, c);
                 return Verdict{co.requires_grad && !co.is_leaf && !co.grad_fn.empty(),
                                "requires_grad=" + flag(co.requires_grad) + ", leaf=" + flag(co.is_leaf) +
                                    ", grad_fn " + grad_fn_of(co)};
               });
}

// x = randn(3, 4, 1, 1) in channels_last (a clone to channels_last stands for .to(memory_format=...)), then a
// clone with the default (preserve) format and one with contiguous_format.
struct ChannelsLastProgram {
  ProgramBuilder b;
  int x, cl, kept, dense;
  ChannelsLastProgram() {
    x = b.rand_strided({3, 4, 1, 1}, {4, 1, 1, 1}, 0, DType::Float32, false, 11);
    cl = b.clone(x, MemoryFormat::ChannelsLast);
    kept = b.clone(cl);
    dense = b.clone(cl, MemoryFormat::Contiguous);
  }
};

std::string layout_of(const TensorObs& o) {
  return "channels_last=" + flag(o.channels_last) + ", contiguous=" + flag(o.contiguous) + ", strides " +
         render_ints(o.strides);
}

Claim to_channels_last() {
  ChannelsLastProgram p;
  const int cl = p.cl;
  return claim("to-channels-last", kSeed0, {},
               "A (3, 4, 1, 1) tensor converted to channels_last is contiguous in the channels_last format.", p.b,
               {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, cl);
                 return Verdict{o.channels_last, layout_of(o)};
               });
}

Claim clone_preserve_keeps_channels_last() {
  ChannelsLastProgram p;
  const int kept = p.kept;
  return claim("clone-preserve-keeps-channels-last", kSeed0, {},
               "clone() with the default memory format (preserve) of a channels_last (3, 4, 1, 1) tensor is "
               "channels_last too.",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, kept);
                 return Verdict{o.channels_last, layout_of(o)};
               });
}

Claim clone_contiguous_format() {
  ChannelsLastProgram p;
  const int dense = p.dense;
  return claim("clone-contiguous-format", kSeed0, {},
               "clone(memory_format=contiguous_format) of a channels_last tensor is contiguous.", p.b, {},
               [=](const Trace& t) {
                 const TensorObs& o = made(t, dense);
                 return Verdict{o.contiguous, layout_of(o)};
               });
}

Claim clone_channels_last_format() {
  ProgramBuilder b;
  const int x = b.rand_strided({2, 3, 4, 5}, {60, 20, 5, 1}, 0, DType::Float32, false, 12);
  const int c = b.clone(x, MemoryFormat::ChannelsLast);
  return claim("clone-channels-last-format", kSeed0, {},
               "clone(memory_format=channels_last) of a contiguous 4-d tensor lays it out channels-last (NHWC).", b,
               {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, c);
                 return Verdict{o.channels_last && !o.contiguous, layout_of(o)};
               });
}

Claim clone_gradient_flows() {
  ProgramBuilder b;
  const int x = b.full({1}, 1.0, true);
  const int c = b.clone(x);
  const int s = b.unary(OpId::Sum, c);
  const int back = b.backward(s);
  return claim("clone-gradient-flows", kSeed0, {kSeed2},
               "Gradients flow back through clone(): for x = [1.] requiring grad, the sum of its clone gives x a "
               "gradient of [1.].",
               b, {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && xo.grad->values == std::vector<double>{1.0}, "x.grad = " + grad_of(xo)};
               });
}

// ================================================= 001 ========================================================

Claim clone_imitates_requires_grad() {
  ProgramBuilder b;
  const int a = b.ones({5}, true);
  const int ac = b.clone(a);
  const int n = b.ones({5}, false);
  const int nc = b.clone(n);
  return claim("clone-imitates-requires-grad", kSeed1, {kSeed2},
               "A clone requires grad exactly when its source does.", b, {}, [=](const Trace& t) {
                 const TensorObs &ao = made(t, a), &aco = made(t, ac), &no = made(t, n), &nco = made(t, nc);
                 return Verdict{aco.requires_grad == ao.requires_grad && nco.requires_grad == no.requires_grad,
                                "source requires_grad=true -> clone requires_grad=" + flag(aco.requires_grad) +
                                    "; source requires_grad=false -> clone requires_grad=" + flag(nco.requires_grad)};
               });
}

Claim clone_grad_fn_name() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int c = b.clone(x);
  return claim("clone-grad-fn-name", kSeed1, {kSeed2},
               "The grad_fn of a clone of a tensor requiring grad is a CloneBackward node (002 spells it "
               "\"CloenBackward\").",
               b, {}, [=](const Trace& t) {
                 const TensorObs& co = made(t, c);
                 return Verdict{co.grad_fn.rfind("CloneBackward", 0) == 0, "grad_fn " + grad_fn_of(co)};
               });
}

Claim two_clones_grad_5() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int y = b.int_scalar(OpId::MulScalar, b.clone(x), 2);
  const int z = b.int_scalar(OpId::MulScalar, b.clone(x), 3);
  const int s = b.unary(OpId::Sum, b.binary(OpId::Add, y, z));
  const int back = b.backward(s);
  return claim("two-clones-grad-5", kSeed1, {kSeed2},
               "With x = ones(5) requiring grad, backward of (2 * x.clone() + 3 * x.clone()).sum() leaves 5 in "
               "every element of x.grad.",
               b, {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && all_equal(xo.grad->values, 5.0), "x.grad = " + grad_of(xo)};
               });
}

Claim nonleaf_clone_grad_none() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int c = b.clone(x);
  const int back = b.backward(b.unary(OpId::Sum, c));
  return claim("nonleaf-clone-grad-none", kSeed1, {},
               "After a backward through x.clone(), the clone (not a leaf) has no .grad while x has one.", b, {},
               [=](const Trace& t) {
                 const TensorObs &xo = seen(t, back, x), &co = seen(t, back, c);
                 return Verdict{!co.grad && xo.grad.has_value(),
                                "x_clone.grad = " + grad_of(co) + ", x.grad = " + grad_of(xo)};
               });
}

Claim detach_shares_storage() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int d = b.unary(OpId::Detach, x);
  return claim("detach-shares-storage", kSeed1, {kSeed2}, "detach() returns a tensor sharing its source's storage.",
               b, {}, [=](const Trace& t) {
                 const TensorObs &xo = made(t, x), &dO = made(t, d);
                 return Verdict{shares_storage(xo, dO), "detached tensor: " + storage_vs(xo, dO)};
               });
}

Claim detach_branch_no_gradient() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int y = b.int_scalar(OpId::MulScalar, b.clone(x), 2);
  const int z = b.int_scalar(OpId::MulScalar, b.unary(OpId::Detach, x), 3);
  const int back = b.backward(b.unary(OpId::Sum, b.binary(OpId::Add, y, z)));
  return claim("detach-branch-no-gradient", kSeed1, {},
               "With y = 2 * x.clone() and z = 3 * x.detach() (x = ones(5) requiring grad), backward of (y + z).sum() "
               "gives x.grad = 2 everywhere: the detached branch contributes nothing.",
               b, {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && all_equal(xo.grad->values, 2.0), "x.grad = " + grad_of(xo)};
               });
}

// a = ones(5) requiring grad, b = a ** 2 saves a; c is a.detach() (or a copy of it) written in place; then
// b.sum().backward().
struct DetachWriteProgram {
  ProgramBuilder b;
  int a, write, back;
  explicit DetachWriteProgram(bool copy_first) {
    a = b.ones({5}, true);
    const int sq = b.int_scalar(OpId::Pow, a, 2);
    int c = b.unary(OpId::Detach, a);
    if (copy_first) c = b.clone(c);
    write = b.scalar(OpId::AddScalar_, c, 1.0);
    back = b.backward(b.unary(OpId::Sum, sq));
  }
};

Claim detach_write_breaks_backward() {
  DetachWriteProgram p(false);
  const int back = p.back;
  return claim("detach-write-breaks-backward", kSeed1, {},
               "Writing in place to a.detach() after b = a ** 2 saved a makes b.sum().backward() raise the "
               "in-place modification (version) error.",
               p.b, {back}, [=](const Trace& t) {
                 const auto& s = step_at(t, back);
                 return Verdict{s.status == judge::StepObs::Status::Error &&
                                    s.category == judge::ErrorCategory::VersionMismatch,
                                "backward " + outcome_of(s)};
               });
}

Claim detach_clone_write_keeps_backward() {
  DetachWriteProgram p(true);
  const int back = p.back, a = p.a;
  return claim("detach-clone-write-keeps-backward", kSeed1, {},
               "Writing in place to a.detach().clone() instead leaves b = a ** 2 differentiable: backward runs and "
               "a.grad = 2a.",
               p.b, {back}, [=](const Trace& t) {
                 const auto& s = step_at(t, back);
                 if (s.status != judge::StepObs::Status::Ok) return Verdict{false, "backward " + outcome_of(s)};
                 const TensorObs& ao = seen(t, back, a);
                 return Verdict{ao.grad && all_equal(ao.grad->values, 2.0), "backward ran, a.grad = " + grad_of(ao)};
               });
}

std::string copy_facts(const TensorObs& source, const TensorObs& o) {
  return "strides " + render_ints(o.strides) + ", " + storage_vs(source, o) +
         ", requires_grad=" + flag(o.requires_grad) + ", leaf=" + flag(o.is_leaf) + ", grad_fn " + grad_fn_of(o);
}

bool detached_copy(const TensorObs& source, const TensorObs& o) {
  return !shares_storage(source, o) && !o.requires_grad && o.is_leaf && o.grad_fn.empty() &&
         o.values == source.values && o.dtype == source.dtype && o.sizes == source.sizes;
}

Claim clone_detach_equals_detach_clone() {
  ProgramBuilder b;
  // a transposed layout: the copies' strides are compared too
  const int x = b.rand_strided({2, 3}, {1, 2}, 0, DType::Float32, true, 7);
  const int y = b.int_scalar(OpId::MulScalar, x, 2);
  const int cd = b.unary(OpId::Detach, b.clone(y));
  const int dc = b.clone(b.unary(OpId::Detach, y));
  return claim("clone-detach-equals-detach-clone", kSeed1, {kSeed2},
               "y.clone().detach() and y.detach().clone() end up alike: same values and layout, own storage, no "
               "autograd history.",
               b, {}, [=](const Trace& t) {
                 const TensorObs &yo = made(t, y), &a = made(t, cd), &c = made(t, dc);
                 const bool alike = a.values == c.values && a.strides == c.strides && a.sizes == c.sizes &&
                                    a.dtype == c.dtype && detached_copy(yo, a) && detached_copy(yo, c);
                 return Verdict{alike, "clone().detach(): " + copy_facts(yo, a) + "; detach().clone(): " +
                                           copy_facts(yo, c) + "; values " +
                                           (a.values == c.values ? "equal" : "differ")};
               });
}

Claim clone_detach_new_memory() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int y = b.int_scalar(OpId::MulScalar, x, 2);
  const int cd = b.unary(OpId::Detach, b.clone(y));
  return claim("clone-detach-new-memory", kSeed1, {kSeed3},
               "y.clone().detach() (y computed from a tensor requiring grad) has memory of its own and no autograd "
               "history.",
               b, {}, [=](const Trace& t) {
                 const TensorObs &yo = made(t, y), &o = made(t, cd);
                 return Verdict{detached_copy(yo, o), copy_facts(yo, o)};
               });
}

// copy.deepcopy of a non-leaf: y = 2 * ones(5) requiring grad.
struct DeepcopyNonLeafProgram {
  ProgramBuilder b;
  int y, dc;
  DeepcopyNonLeafProgram() {
    const int x = b.ones({5}, true);
    y = b.int_scalar(OpId::MulScalar, x, 2);
    dc = b.deepcopy(y);
  }
};

std::string deepcopy_outcome(const Trace& t, int dc) {
  const auto& s = step_at(t, dc);
  if (s.status != judge::StepObs::Status::Ok) return "deepcopy " + outcome_of(s);
  const TensorObs& o = made(t, dc);
  return "deepcopy ran: values " + nums(o.values) + ", requires_grad=" + flag(o.requires_grad) + ", grad_fn " +
         grad_fn_of(o);
}

Claim deepcopy_copies_history() {
  DeepcopyNonLeafProgram p;
  const int dc = p.dc;
  return claim("deepcopy-copies-history", kSeed1, {},
               "copy.deepcopy of a tensor with autograd history (not a leaf) gives a copy carrying that history.",
               p.b, {dc}, [=](const Trace& t) {
                 const bool ran = succeeded(t, dc);
                 return Verdict{ran && !made(t, dc).grad_fn.empty(), deepcopy_outcome(t, dc)};
               });
}

Claim deepcopy_keeps_requires_grad() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int dc = b.deepcopy(x);
  return claim("deepcopy-keeps-requires-grad", kSeed1, {kSeed2},
               "copy.deepcopy of ones(5) requiring grad has the same values and still requires grad.", b, {},
               [=](const Trace& t) {
                 const TensorObs &xo = made(t, x), &o = made(t, dc);
                 return Verdict{o.values == xo.values && o.requires_grad,
                                "copy " + nums(o.values) + ", requires_grad=" + flag(o.requires_grad)};
               });
}

Claim leaf_inplace_no_error() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int w = b.scalar(OpId::AddScalar_, x, 1.0);
  return claim("leaf-inplace-no-error", kSeed1, {},
               "Writing in place to a leaf that requires grad (grad mode on) raises no error.", b, {w},
               [=](const Trace& t) {
                 const auto& s = step_at(t, w);
                 return Verdict{s.status == judge::StepObs::Status::Ok, "x.add_(1) " + outcome_of(s)};
               });
}

Claim clone_absorbs_inplace() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int c = b.clone(x);
  const int w = b.scalar(OpId::MulScalar_, c, 3.0);
  const int back = b.backward(b.unary(OpId::Sum, w));
  return claim("clone-absorbs-inplace", kSeed1, {kSeed2},
               "A clone of a leaf requiring grad can be written in place: c = x.clone(); c *= 3; c.sum().backward() "
               "runs and gives x.grad = 3.",
               b, {w, back}, [=](const Trace& t) {
                 const auto& ws = step_at(t, w);
                 if (ws.status != judge::StepObs::Status::Ok) return Verdict{false, "c.mul_(3) " + outcome_of(ws)};
                 const auto& bs = step_at(t, back);
                 if (bs.status != judge::StepObs::Status::Ok) return Verdict{false, "backward " + outcome_of(bs)};
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && all_equal(xo.grad->values, 3.0),
                                "write and backward ran, x.grad = " + grad_of(xo)};
               });
}

// ================================================= 002 ========================================================

Claim detach_no_requires_grad() {
  ProgramBuilder b;
  const int x = b.full({1}, 1.0, true);
  const int d = b.unary(OpId::Detach, x);
  return claim("detach-no-requires-grad", kSeed2, {kSeed1},
               "x.detach() of x = [1.] requiring grad does not require grad.", b, {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, d);
                 return Verdict{!o.requires_grad, "requires_grad=" + flag(o.requires_grad)};
               });
}

Claim detach_write_reaches_source() {
  ProgramBuilder b;
  const int x = b.full({1}, 1.0, true);
  const int d = b.unary(OpId::Detach, x);
  const int w = b.scalar(OpId::Fill_, b.select(d, 0, 0), 2.0);
  return claim("detach-write-reaches-source", kSeed2, {kSeed1},
               "Setting an element of x.detach() to 2 changes x to [2.].", b, {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, w, x);
                 return Verdict{xo.values == std::vector<double>{2.0}, "x = " + nums(xo.values)};
               });
}

Claim detach_source_share_writes() {
  ProgramBuilder b;
  const int x = b.ones({3}, true);
  const int d = b.unary(OpId::Detach, x);
  const int w1 = b.scalar(OpId::AddScalar_, d, 1.0);
  const int w2 = b.scalar(OpId::MulScalar_, x, 3.0, /*grad_enabled=*/false);  // x is a leaf requiring grad
  return claim("detach-source-share-writes", kSeed2, {},
               "An in-place write to either a tensor or its detach() shows in the other (the source written under "
               "no_grad).",
               b, {}, [=](const Trace& t) {
                 const TensorObs &x0 = made(t, x), &x1 = seen(t, w1, x), &d1 = seen(t, w1, d);
                 const TensorObs &x2 = seen(t, w2, x), &d2 = seen(t, w2, d);
                 const bool ok = x1.values != x0.values && x1.values == d1.values && d2.values != d1.values &&
                                 d2.values == x2.values;
                 return Verdict{ok, "after d += 1: x = " + nums(x1.values) + "; after x *= 3: d = " + nums(d2.values)};
               });
}

Claim detach_is_autograd_view() {
  ProgramBuilder b;
  const int x = b.ones({3}, true);
  const int d = b.unary(OpId::Detach, x);
  return claim("detach-is-autograd-view", kSeed2, {},
               "detach() returns a view of its source in autograd's sense (_is_view(), with the source as _base).",
               b, {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, d);
                 return Verdict{o.is_view && o.base == x,
                                "is_view=" + flag(o.is_view) + (o.is_view ? ", base v" + std::to_string(o.base) : "")};
               });
}

// x = [1.] requiring grad, y = x ** 2, z = 2 * y, w = z ** 3; p is z (or z.detach()), q = [2.] requiring grad;
// (p * q).backward(retain_graph=True), then w.backward().
struct SharedNodeProgram {
  ProgramBuilder b;
  int x, z, back;
  explicit SharedNodeProgram(bool detach_p) {
    x = b.full({1}, 1.0, true);
    const int y = b.int_scalar(OpId::Pow, x, 2);
    z = b.int_scalar(OpId::MulScalar, y, 2);
    const int w = b.int_scalar(OpId::Pow, z, 3);
    const int p = detach_p ? b.unary(OpId::Detach, z) : z;
    const int q = b.full({1}, 2.0, true);
    b.backward(b.binary(OpId::Mul, p, q), /*retain_graph=*/true);
    back = b.backward(w);
  }
};

Claim grad_56_shared_node() {
  SharedNodeProgram p(false);
  const int x = p.x, back = p.back;
  return claim("grad-56-shared-node", kSeed2, {},
               "With p = z used directly, the two backward passes accumulate x.grad = 8 + 48 = [56.].", p.b, {},
               [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && xo.grad->values == std::vector<double>{56.0}, "x.grad = " + grad_of(xo)};
               });
}

Claim shared_node_grad_in_z() {
  SharedNodeProgram p(false);
  const int z = p.z, back = p.back;
  return claim("shared-node-grad-in-z", kSeed2, {},
               "In the x.grad = 56 example (p = z), the gradients of both backward passes accumulate in z's .grad.",
               p.b, {},
               [=](const Trace& t) {
                 const TensorObs& zo = seen(t, back, z);
                 return Verdict{zo.grad.has_value(), "z.grad = " + grad_of(zo) + " (z is not a leaf)"};
               });
}

Claim grad_48_detached_node() {
  SharedNodeProgram p(true);
  const int x = p.x, back = p.back;
  return claim("grad-48-detached-node", kSeed2, {},
               "With p = z.detach(), only w's backward reaches x: x.grad = [48.].", p.b, {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && xo.grad->values == std::vector<double>{48.0}, "x.grad = " + grad_of(xo)};
               });
}

Claim clone_write_changes_source() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int c = b.clone(x);
  const int w = b.scalar(OpId::Fill_, c, 3.0);
  return claim("clone-write-changes-source", kSeed2, {},
               "Changing the values of a clone also changes the tensor it was cloned from.", b, {},
               [=](const Trace& t) {
                 const TensorObs &x0 = made(t, x), &x1 = seen(t, w, x);
                 return Verdict{x1.values != x0.values, "after clone.fill_(3): source = " + nums(x1.values)};
               });
}

Claim detach_clone_new_memory() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int y = b.int_scalar(OpId::MulScalar, x, 2);
  const int dc = b.clone(b.unary(OpId::Detach, y));
  return claim("detach-clone-new-memory", kSeed2, {kSeed1, kSeed3},
               "y.detach().clone() (y computed from a tensor requiring grad) has memory of its own and no autograd "
               "history.",
               b, {}, [=](const Trace& t) {
                 const TensorObs &yo = made(t, y), &o = made(t, dc);
                 return Verdict{detached_copy(yo, o), copy_facts(yo, o)};
               });
}

Claim deepcopy_new_memory() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int dc = b.deepcopy(x);
  return claim("deepcopy-new-memory", kSeed2, {},
               "copy.deepcopy of a tensor gives its values in a new memory allocation.", b, {}, [=](const Trace& t) {
                 const TensorObs &xo = made(t, x), &o = made(t, dc);
                 return Verdict{o.values == xo.values && !shares_storage(xo, o),
                                "copy " + nums(o.values) + ", " + storage_vs(xo, o)};
               });
}

Claim deepcopy_drops_autograd_state() {
  ProgramBuilder b;
  const int x = b.ones({5}, true);
  const int first = b.backward(b.unary(OpId::Sum, x));  // x.grad = ones
  const int dc = b.deepcopy(x);
  // A backward unrelated to dc, only to observe dc.grad.
  const int probe = b.backward(b.unary(OpId::Sum, b.full({1}, 1.0, true)));
  return claim("deepcopy-drops-autograd-state", kSeed2, {},
               "copy.deepcopy ignores autograd state: the copy of a leaf that requires grad and holds a .grad "
               "neither requires grad nor has a .grad.",
               b, {}, [=](const Trace& t) {
                 const TensorObs &xo = seen(t, first, x), &o = seen(t, probe, dc);
                 if (!xo.grad) throw MissingObservation("x has no .grad to copy");
                 return Verdict{!o.requires_grad && !o.grad, "x.grad = " + grad_of(xo) + "; copy requires_grad=" +
                                                                 flag(o.requires_grad) + ", copy.grad = " + grad_of(o)};
               });
}

Claim deepcopy_nonleaf_as_data() {
  DeepcopyNonLeafProgram p;
  const int dc = p.dc, y = p.y;
  return claim("deepcopy-nonleaf-as-data", kSeed2, {},
               "copy.deepcopy copies any tensor as plain data: a non-leaf y gives a copy of its values that does not "
               "require grad.",
               p.b, {dc}, [=](const Trace& t) {
                 const bool ran = succeeded(t, dc);
                 const bool plain = ran && made(t, dc).values == made(t, y).values && !made(t, dc).requires_grad;
                 return Verdict{plain, deepcopy_outcome(t, dc)};
               });
}

// ================================================= 003 ========================================================

// x = [1., 2., 3.] requiring grad (a leaf), and its copies by new_tensor, clone().detach(), empty_like().copy_()
// and detach().clone().
struct CopyMethodsProgram {
  ProgramBuilder b;
  int x, copies[4];
  static constexpr const char* kNames[4] = {"new_tensor", "clone().detach()", "empty_like().copy_()",
                                            "detach().clone()"};
  CopyMethodsProgram() {
    x = b.requires_grad_(b.scalar(OpId::AddScalar, b.arange(3, DType::Float32), 1.0));
    copies[0] = b.unary(OpId::NewTensor, x);
    copies[1] = b.unary(OpId::Detach, b.clone(x));
    copies[2] = b.binary(OpId::Copy_, b.step(OpId::EmptyLike, {x}), x);
    copies[3] = b.clone(b.unary(OpId::Detach, x));
  }
};

Claim copy_methods_copy_values() {
  CopyMethodsProgram p;
  const int x = p.x;
  const std::vector<int> copies(std::begin(p.copies), std::end(p.copies));
  return claim("copy-methods-copy-values", kSeed3, {},
               "new_tensor(x), x.clone().detach(), empty_like(x).copy_(x) and x.detach().clone() all copy x's values "
               "into a storage of their own.",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs& xo = made(t, x);
                 bool all = true;
                 std::string seen_text;
                 for (std::size_t i = 0; i < copies.size(); ++i) {
                   const TensorObs& o = made(t, copies[i]);
                   all = all && o.values == xo.values && !shares_storage(xo, o);
                   seen_text += std::string(i ? "; " : "") + CopyMethodsProgram::kNames[i] + " " + nums(o.values) +
                                ", " + storage_vs(xo, o);
                 }
                 return Verdict{all, seen_text};
               });
}

Claim copy_methods_all_detached() {
  CopyMethodsProgram p;
  const std::vector<int> copies(std::begin(p.copies), std::end(p.copies));
  return claim("copy-methods-all-detached", kSeed3, {},
               "All four copying idioms (new_tensor, clone().detach(), empty_like().copy_(), detach().clone()) give "
               "a copy cut off from the graph of an x that requires grad.",
               p.b, {}, [=](const Trace& t) {
                 bool all = true;
                 std::string seen_text = "requires_grad: ";
                 for (std::size_t i = 0; i < copies.size(); ++i) {
                   const TensorObs& o = made(t, copies[i]);
                   all = all && !o.requires_grad && o.grad_fn.empty();
                   seen_text += std::string(i ? ", " : "") + CopyMethodsProgram::kNames[i] + "=" +
                                flag(o.requires_grad) + (o.grad_fn.empty() ? "" : " (grad_fn " + o.grad_fn + ")");
                 }
                 return Verdict{all, seen_text};
               });
}

Claim copies_distinct_storage() {
  ProgramBuilder b;
  const int x = b.rand_strided({4, 5}, {5, 1}, 0, DType::Float32, false, 3);
  const int y1 = b.binary(OpId::Copy_, b.step(OpId::EmptyLike, {x}), x);
  const int y2 = b.clone(x);
  return claim("copies-distinct-storage", kSeed3, {},
               "x, empty_like(x).copy_(x) and x.clone() live in three different storages (their data_ptr differ).",
               b, {}, [=](const Trace& t) {
                 const TensorObs &xo = made(t, x), &a = made(t, y1), &c = made(t, y2);
                 const bool distinct = !shares_storage(xo, a) && !shares_storage(xo, c) && !shares_storage(a, c);
                 return Verdict{distinct, "storage classes: x v" + std::to_string(xo.alias_of) +
                                              ", empty_like(x).copy_(x) v" + std::to_string(a.alias_of) +
                                              ", x.clone() v" + std::to_string(c.alias_of)};
               });
}

// x = [1.] requiring grad, y = x * 2; z1 = y.clone(), z2 = y.detach(), z3 = y.clone().detach(),
// z4 = y.detach().clone(); y.backward().
struct NonLeafCopiesProgram {
  ProgramBuilder b;
  int x, z[4], back;
  static constexpr const char* kNames[4] = {"clone()", "detach()", "clone().detach()", "detach().clone()"};
  NonLeafCopiesProgram() {
    x = b.full({1}, 1.0, true);
    const int y = b.int_scalar(OpId::MulScalar, x, 2);
    z[0] = b.clone(y);
    z[1] = b.unary(OpId::Detach, y);
    z[2] = b.unary(OpId::Detach, b.clone(y));
    z[3] = b.clone(b.unary(OpId::Detach, y));
    back = b.backward(y);
  }
};

Claim nonleaf_copies_requires_grad() {
  NonLeafCopiesProgram p;
  const std::vector<int> z(std::begin(p.z), std::end(p.z));
  return claim("nonleaf-copies-requires-grad", kSeed3, {},
               "Of y.clone(), y.detach(), y.clone().detach() and y.detach().clone() (y = 2x, x requiring grad) only "
               "y.clone() requires grad.",
               p.b, {}, [=](const Trace& t) {
                 const bool expected[4] = {true, false, false, false};
                 bool all = true;
                 std::string seen_text = "requires_grad: ";
                 for (std::size_t i = 0; i < z.size(); ++i) {
                   const TensorObs& o = made(t, z[i]);
                   all = all && o.requires_grad == expected[i];
                   seen_text += std::string(i ? ", " : "") + NonLeafCopiesProgram::kNames[i] + "=" +
                                flag(o.requires_grad);
                 }
                 return Verdict{all, seen_text};
               });
}

Claim copies_then_backward_grad_2() {
  NonLeafCopiesProgram p;
  const int x = p.x, back = p.back;
  return claim("copies-then-backward-grad-2", kSeed3, {},
               "With y = 2x (x = [1.] requiring grad) and those four copies of y made, y.backward() gives "
               "x.grad = [2.].",
               p.b, {},
               [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && xo.grad->values == std::vector<double>{2.0}, "x.grad = " + grad_of(xo)};
               });
}

// ================================================= 004 ========================================================

// Example 1: x = [2.] requiring grad, y = x * 2, z = y.clone(), w = z * 3, w.sum().backward().
struct CloneChainProgram {
  ProgramBuilder b;
  int x, y, z, back;
  CloneChainProgram() {
    x = b.full({1}, 2.0, true);
    y = b.int_scalar(OpId::MulScalar, x, 2);
    z = b.clone(y);
    const int w = b.int_scalar(OpId::MulScalar, z, 3);
    back = b.backward(b.unary(OpId::Sum, w));
  }
};

Claim clone_blocks_gradient() {
  CloneChainProgram p;
  const int x = p.x, back = p.back;
  return claim("clone-blocks-gradient", kSeed4, {},
               "A clone breaks the gradient chain: after backward through z = (2x).clone(), x.grad stays None.", p.b,
               {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{!xo.grad, "x.grad = " + grad_of(xo)};
               });
}

Claim nonleaf_grads_none() {
  CloneChainProgram p;
  const int y = p.y, z = p.z, back = p.back;
  return claim("nonleaf-grads-none", kSeed4, {},
               "After backward through w = 3 * (2x).clone(), y = 2x and its clone z (non-leaves, no retain_grad) "
               "have no .grad.",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs &yo = seen(t, back, y), &zo = seen(t, back, z);
                 return Verdict{!yo.grad && !zo.grad, "y.grad = " + grad_of(yo) + ", z.grad = " + grad_of(zo)};
               });
}

Claim clone_not_in_graph() {
  CloneChainProgram p;
  const int z = p.z;
  return claim("clone-not-in-graph", kSeed4, {},
               "clone() is not recorded by autograd: z = y.clone() of a y with history has no grad_fn and does not "
               "require grad.",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, z);
                 return Verdict{!o.requires_grad && o.grad_fn.empty(),
                                "z requires_grad=" + flag(o.requires_grad) + ", grad_fn " + grad_fn_of(o)};
               });
}

// Example 2: x = [2.] requiring grad, y = x * 2, z = y.detach(), zm = z * 3, zm.requires_grad_(True),
// w = zm * 5, w.sum().backward().
struct DetachedBranchProgram {
  ProgramBuilder b;
  int x, y, z, zm, back;
  DetachedBranchProgram() {
    x = b.full({1}, 2.0, true);
    y = b.int_scalar(OpId::MulScalar, x, 2);
    z = b.unary(OpId::Detach, y);
    zm = b.int_scalar(OpId::MulScalar, z, 3);
    const int r = b.requires_grad_(zm);
    const int w = b.int_scalar(OpId::MulScalar, r, 5);
    back = b.backward(b.unary(OpId::Sum, w));
  }
};

Claim detached_branch_grad_15() {
  DetachedBranchProgram p;
  const int zm = p.zm, back = p.back;
  return claim("detached-branch-grad-15", kSeed4, {},
               "With zm = 3 * y.detach() made to require grad and w = 5 * zm, backward of w.sum() gives "
               "zm.grad = [15.].",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs& o = seen(t, back, zm);
                 return Verdict{o.grad && o.grad->values == std::vector<double>{15.0}, "zm.grad = " + grad_of(o)};
               });
}

Claim detached_branch_x_grad_none() {
  DetachedBranchProgram p;
  const int x = p.x, y = p.y, z = p.z, back = p.back;
  return claim("detached-branch-x-grad-none", kSeed4, {},
               "When zm = 3 * y.detach() (y = 2x) is made to require grad and w = 5 * zm is backpropagated, x, y and "
               "y.detach() get no .grad.", p.b, {}, [=](const Trace& t) {
                 const TensorObs &xo = seen(t, back, x), &yo = seen(t, back, y), &zo = seen(t, back, z);
                 return Verdict{!xo.grad && !yo.grad && !zo.grad, "x.grad = " + grad_of(xo) + ", y.grad = " +
                                                                      grad_of(yo) + ", z.grad = " + grad_of(zo)};
               });
}

// Example 3: x = [2.] requiring grad, y = x * 2, z = y.detach().clone().requires_grad_(True), w = z * 3,
// w.sum().backward().
struct DetachCloneLeafProgram {
  ProgramBuilder b;
  int x, y, z, back;
  DetachCloneLeafProgram() {
    x = b.full({1}, 2.0, true);
    y = b.int_scalar(OpId::MulScalar, x, 2);
    z = b.requires_grad_(b.clone(b.unary(OpId::Detach, y)));
    const int w = b.int_scalar(OpId::MulScalar, z, 3);
    back = b.backward(b.unary(OpId::Sum, w));
  }
};

Claim detach_clone_leaf_reaches_x() {
  DetachCloneLeafProgram p;
  const int x = p.x, back = p.back;
  return claim("detach-clone-leaf-reaches-x", kSeed4, {},
               "With z = y.detach().clone().requires_grad_(True) and w = 3z, backward of w.sum() reaches x: "
               "x.grad = [6.].",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && xo.grad->values == std::vector<double>{6.0}, "x.grad = " + grad_of(xo)};
               });
}

Claim detach_clone_leaf_grad_3() {
  DetachCloneLeafProgram p;
  const int y = p.y, z = p.z, back = p.back;
  return claim("detach-clone-leaf-grad-3", kSeed4, {},
               "With z = y.detach().clone().requires_grad_(True) and w = 3z, backward of w.sum() gives z.grad = [3.] "
               "while y.grad stays None.",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs &o = seen(t, back, z), &yo = seen(t, back, y);
                 return Verdict{o.grad && o.grad->values == std::vector<double>{3.0} && !yo.grad,
                                "z.grad = " + grad_of(o) + ", y.grad = " + grad_of(yo)};
               });
}

Claim requires_grad_makes_leaf() {
  DetachCloneLeafProgram p;
  const int z = p.z;
  return claim("requires-grad-makes-leaf", kSeed4, {},
               "requires_grad_(True) on y.detach().clone() makes it a leaf of a new graph: it requires grad and has "
               "no grad_fn.",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, z);
                 return Verdict{o.is_leaf && o.requires_grad && o.grad_fn.empty(),
                                "leaf=" + flag(o.is_leaf) + ", requires_grad=" + flag(o.requires_grad) + ", grad_fn " +
                                    grad_fn_of(o)};
               });
}

}  // namespace

const std::vector<Claim>& seed_claims() {
  static const std::vector<Claim> claims = {
      // 000
      clone_own_memory(), clone_write_leaves_source(), clone_recorded_in_graph(), to_channels_last(),
      clone_preserve_keeps_channels_last(), clone_contiguous_format(), clone_channels_last_format(),
      clone_gradient_flows(),
      // 001
      clone_imitates_requires_grad(), clone_grad_fn_name(), two_clones_grad_5(), nonleaf_clone_grad_none(),
      detach_shares_storage(), detach_branch_no_gradient(), detach_write_breaks_backward(),
      detach_clone_write_keeps_backward(), clone_detach_equals_detach_clone(), clone_detach_new_memory(),
      deepcopy_copies_history(), deepcopy_keeps_requires_grad(), leaf_inplace_no_error(), clone_absorbs_inplace(),
      // 002
      detach_no_requires_grad(), detach_write_reaches_source(), detach_source_share_writes(),
      detach_is_autograd_view(), grad_56_shared_node(), shared_node_grad_in_z(), grad_48_detached_node(),
      clone_write_changes_source(), detach_clone_new_memory(), deepcopy_new_memory(),
      deepcopy_drops_autograd_state(), deepcopy_nonleaf_as_data(),
      // 003
      copy_methods_copy_values(), copy_methods_all_detached(), copies_distinct_storage(),
      nonleaf_copies_requires_grad(), copies_then_backward_grad_2(),
      // 004
      clone_blocks_gradient(), nonleaf_grads_none(), clone_not_in_graph(), detached_branch_grad_15(),
      detached_branch_x_grad_none(), detach_clone_leaf_reaches_x(), detach_clone_leaf_grad_3(),
      requires_grad_makes_leaf(),
  };
  return claims;
}

}  // namespace parity::claims
