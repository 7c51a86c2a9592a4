// copy.deepcopy follows Python's Tensor.__deepcopy__: only leaves may be copied; the copy gets its own copy of
// the whole storage and keeps offset and strides; tensors copied in one deepcopy call (one memo) that shared
// storage share the new storage; requires_grad is kept and .grad is copied too. LibTorch has no deepcopy: the
// oracle's side is that recipe written with LibTorch calls (the same code the C++ repro prints).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/on_both_backends.h"

namespace parity::properties {
namespace {

using generators::LayoutSpec;
using program::Scalar;

program::Attrs memo(std::int64_t id) {
  program::Attrs a;
  a.memo = id;
  return a;
}

RC_GTEST_PROP(DeepcopyProperties, CopiesTheWholeStorageAndKeepsTheLayout, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *any_dtype();
  const bool rg = program::is_floating(dtype) && *rc::gen::arbitrary<bool>();
  const bool with_grad = rg && *rc::gen::arbitrary<bool>();
  const bool together = *rc::gen::arbitrary<bool>();  // the alias copied in the same deepcopy call
  RC_TAG(std::string(to_string(l.kind)), with_grad ? "with .grad" : "no .grad", together ? "one memo" : "two memos");

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, rg, *seeds());
  if (with_grad) b.backward(b.step(OpId::Sum, {b.step(OpId::Clone, {x})}));
  const int alias = b.step(OpId::Detach, {x});
  const int cx = b.step(OpId::Deepcopy, {x}, memo(1));
  const int ca = b.step(OpId::Deepcopy, {alias}, memo(together ? 1 : 2));

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, ca)) return;
    const TensorObs* xo = obs(t, x, x);
    const TensorObs* co = obs(t, cx, cx);
    const TensorObs* ao = obs(t, ca, ca);
    if (!v.expect(xo && co && ao, "missing observations")) return;
    v.expect(co->sizes == xo->sizes && co->strides == xo->strides && co->offset == xo->offset,
             "the copy keeps sizes, strides and offset: ", render(*co), " of ", render(*xo));
    v.expect(co->alias_of == cx, "the copy has storage of its own: alias_of=v", co->alias_of);
    v.expect(co->values == xo->values, "values ", co->values, " != ", xo->values);
    v.expect(co->requires_grad == rg && co->is_leaf && co->grad_fn.empty(), "requires_grad kept, a leaf: ", render(*co));
    v.expect((ao->alias_of == cx) == together,
             together ? "copied in one call, x and its alias still share storage"
                      : "copied in two calls, x and its alias must not share storage",
             ": alias copy alias_of=v", ao->alias_of);
  });
}

RC_GTEST_PROP(DeepcopyProperties, CopiesTheGradientAndRefusesNonLeaves, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *floating_dtypes();

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, true, *seeds());
  const int y = b.scalar_op(OpId::MulScalar, x, {Scalar::Kind::Float, 3.0});
  const int bw = b.backward(b.step(OpId::Sum, {y}));
  const int cx = b.step(OpId::Deepcopy, {x}, memo(0));
  const int cy = b.step(OpId::Deepcopy, {y}, memo(0));
  // The copy's gradient is its own: a later backward into x must not change it.
  const int bw2 = b.backward(b.step(OpId::Sum, {b.scalar_op(OpId::MulScalar, x, {Scalar::Kind::Float, 2.0})}));

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, cx)) return;
    const TensorObs* xo = obs(t, bw, x);
    const TensorObs* co = obs(t, bw2, cx);
    if (!v.expect(xo && xo->grad && co, "missing observations")) return;
    v.expect(co->grad.has_value(), "the copy of a leaf with a gradient has one");
    if (co->grad) v.expect(co->grad->values == xo->grad->values, "copied grad ", co->grad->values, " != ", xo->grad->values);
    const StepObs& ys = t.steps[static_cast<std::size_t>(cy)];
    v.expect(ys.status == StepObs::Status::Error && ys.category == judge::ErrorCategory::DeepcopyNonLeaf,
             "deepcopy of a non-leaf: ", outcome(ys));
    v.expect(t.steps[static_cast<std::size_t>(bw2)].status == StepObs::Status::Ok, "second backward: ",
             outcome(t.steps[static_cast<std::size_t>(bw2)]));
  });
}

}  // namespace
}  // namespace parity::properties
