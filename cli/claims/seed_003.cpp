// The claims of seed file 003_c73b785c5b727395.txt (shared/seeds), each restated as a program and a check.
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

}  // namespace

std::vector<Claim> seed_003_claims() {
  return {copy_methods_copy_values(), copy_methods_all_detached(), copies_distinct_storage(), nonleaf_copies_requires_grad(), copies_then_backward_grad_2()};
}

}  // namespace parity::cli::claims
