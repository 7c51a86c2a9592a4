// The claims of seed file 001_0eb46fe5404de266.txt (shared/seeds), each restated as a program and a check.
#include <string>
#include <vector>

#include "cli/claims/seed_claim_support.h"

namespace parity::cli::claims {
namespace {

using judge::TensorObs;
using judge::Trace;
using program::DType;
using program::OpId;
using program::ProgramBuilder;

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

}  // namespace

std::vector<Claim> seed_001_claims() {
  return {clone_imitates_requires_grad(), clone_grad_fn_name(), two_clones_grad_5(), nonleaf_clone_grad_none(), detach_shares_storage(), detach_branch_no_gradient(), detach_write_breaks_backward(), detach_clone_write_keeps_backward(), clone_detach_equals_detach_clone(), clone_detach_new_memory(), deepcopy_copies_history(), deepcopy_keeps_requires_grad(), leaf_inplace_no_error(), clone_absorbs_inplace()};
}

}  // namespace parity::cli::claims
