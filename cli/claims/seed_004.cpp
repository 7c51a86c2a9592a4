// The claims of seed file 004_992d6d9837e2f385.txt (shared/seeds), each restated as a program and a check.
#include <string>
#include <vector>

#include "cli/claims/seed_claim_support.h"

namespace parity::cli::claims {
namespace {

using judge::TensorObs;
using judge::Trace;
using program::OpId;
using program::ProgramBuilder;

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

std::vector<Claim> seed_004_claims() {
  return {clone_blocks_gradient(), nonleaf_grads_none(), clone_not_in_graph(), detached_branch_grad_15(), detached_branch_x_grad_none(), detach_clone_leaf_reaches_x(), detach_clone_leaf_grad_3(), requires_grad_makes_leaf()};
}

}  // namespace parity::cli::claims
