// The claims of seed file 002_42f908d5a4841829.txt (shared/seeds), each restated as a program and a check.
#include <string>
#include <vector>

#include "cli/claims/seed_claim_support.h"

namespace parity::cli::claims {
namespace {

using judge::TensorObs;
using judge::Trace;
using program::OpId;
using program::ProgramBuilder;

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

}  // namespace

std::vector<Claim> seed_002_claims() {
  return {detach_no_requires_grad(), detach_write_reaches_source(), detach_source_share_writes(), detach_is_autograd_view(), grad_56_shared_node(), shared_node_grad_in_z(), grad_48_detached_node(), clone_write_changes_source(), detach_clone_new_memory(), deepcopy_new_memory(), deepcopy_drops_autograd_state(), deepcopy_nonleaf_as_data()};
}

}  // namespace parity::cli::claims
