// Saved tensors and version counters: an op saves what its derivative needs; writing a saved tensor in place
// (directly, through a view, or through its detached alias, with grad mode on or off) makes the backward raise
// a version error. Writing a tensor that no op saved raises nothing.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/on_both_backends.h"

namespace parity::properties {
namespace {

using generators::LayoutSpec;
using program::Scalar;

enum class Through { Itself, View, Detached };

// A view of `target` that always exists for its shape (reshape could copy; these cannot).
int view_of(ProgramBuilder& b, int target, std::size_t ndim, std::int64_t size0, int which) {
  program::Attrs a;
  switch (which % 3) {
    case 0:
      a.dim = 0;
      return b.step(OpId::Unsqueeze, {target}, a);
    case 1:
      a.dim = 0;
      a.dim1 = -1;
      return b.step(OpId::Transpose, {target}, a);
    default:
      if (ndim == 0) {
        a.dim = -1;
        return b.step(OpId::Unsqueeze, {target}, a);
      }
      a.dim = 0;
      a.start = 0;
      a.length = size0 > 1 ? size0 - 1 : size0;
      return b.step(OpId::Narrow, {target}, a);
  }
}

// Writes `target` in place through itself, a view or its detached alias; returns the writing step.
int write_through(ProgramBuilder& b, int target, Through how, bool overlapping_target, std::size_t ndim,
                  std::int64_t size0, int which, bool grad) {
  int w = target;
  if (how == Through::View) w = view_of(b, target, ndim, size0, which);
  if (how == Through::Detached) w = b.step(OpId::Detach, {target});
  if (overlapping_target || which % 2) return b.scalar_op(OpId::Fill_, w, {Scalar::Kind::Float, 0.5}, grad);
  return b.scalar_op(OpId::AddScalar_, w, {Scalar::Kind::Float, 1.0}, grad);
}

rc::Gen<Through> throughs() { return rc::gen::element(Through::Itself, Through::View, Through::Detached); }
const char* name(Through t) { return t == Through::Itself ? "itself" : t == Through::View ? "view" : "detached"; }

RC_GTEST_PROP(SavedTensorProperties, WritingASavedTensorRaisesAtBackward, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *floating_dtypes();
  const Through how = *throughs();
  const int which = *rc::gen::inRange(0, 6);
  const bool grad_write = *rc::gen::weightedElement<bool>({{3, true}, {1, false}});
  const int variant = *rc::gen::inRange(0, 4);
  const std::size_t nd = l.sizes.size();
  const std::int64_t size0 = nd ? l.sizes[0] : 1;
  static const char* const kVariants[] = {"exp saves its result", "pow saves its input", "mul saves the other factor",
                                          "div saves the divisor"};
  RC_TAG(kVariants[variant], name(how));
  RC_CLASSIFY(!grad_write, "written under no_grad");

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, true, *seeds());
  int y = -1, saved = -1;
  bool saved_overlapping = false;
  switch (variant) {
    case 0:
      y = saved = b.step(OpId::Exp, {x});
      break;
    case 1: {
      // A non-leaf copy of x, so that it may be written with grad on.
      saved = b.scalar_op(OpId::MulScalar, x, {Scalar::Kind::Float, 1.0});
      const Scalar k = *rc::gen::element(Scalar{Scalar::Kind::Float, 2.0}, Scalar{Scalar::Kind::Int, 3},
                                         Scalar{Scalar::Kind::Float, 0.5}, Scalar{Scalar::Kind::Float, -1.0});
      y = b.scalar_op(OpId::Pow, saved, k);
      break;
    }
    default: {
      // The other factor does not require grad; x does, so its gradient needs the other factor.
      const LayoutSpec cl = *rc::gen::element(l, generators::contiguous_of(l));
      saved = add_leaf(b, cl, dtype, false, 77);
      saved_overlapping = overlapping(cl);
      y = b.step(variant == 2 ? OpId::Mul : OpId::Div, {x, saved});
      break;
    }
  }
  const int write = write_through(b, saved, how, saved_overlapping, nd, size0, which, grad_write);
  const int s = b.step(OpId::Sum, {y});
  const int back = b.backward(s);

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, s)) return;
    const TensorObs* before = obs(t, saved, saved);
    const TensorObs* after = obs(t, write, saved);
    if (v.expect(before && after, "missing observations"))
      v.expect(after->version > before->version, "the write did not bump the saved tensor's version: ",
               before->version, " -> ", after->version);
    const StepObs& bw = t.steps[static_cast<std::size_t>(back)];
    v.expect(bw.status == StepObs::Status::Error && bw.category == judge::ErrorCategory::VersionMismatch,
             "backward after writing a saved tensor (", kVariants[variant], ", through ", name(how),
             ") should raise version_mismatch, got ", outcome(bw));
  });
}

RC_GTEST_PROP(SavedTensorProperties, WritingAnUnsavedTensorRaisesNothing, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *floating_dtypes();
  const Through how = *throughs();
  const int which = *rc::gen::inRange(0, 6);
  const int variant = *rc::gen::inRange(0, 5);
  const std::size_t nd = l.sizes.size();
  const std::int64_t size0 = nd ? l.sizes[0] : 1;
  static const char* const kVariants[] = {"add saves nothing", "sub saves nothing",
                                          "mul by a tensor not requiring grad does not save x",
                                          "add of a scalar saves nothing", "sum saves nothing"};
  RC_TAG(kVariants[variant], name(how));

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, true, *seeds());
  int y = -1, written = -1;
  bool grad_write = true;
  bool written_overlapping = false;
  switch (variant) {
    case 0:
    case 1: {
      const LayoutSpec cl = *rc::gen::element(l, generators::contiguous_of(l));
      written = add_leaf(b, cl, dtype, false, 77);
      written_overlapping = overlapping(cl);
      y = b.step(variant == 0 ? OpId::Add : OpId::Sub, {x, written});
      break;
    }
    case 2: {
      const int c = add_leaf(b, generators::contiguous_of(l), dtype, false, 77);
      y = b.step(OpId::Mul, {x, c});
      written = x;  // a leaf requiring grad: written under no_grad (or through its detached alias)
      written_overlapping = overlapping(l);
      grad_write = false;
      break;
    }
    case 3:
      written = b.step(OpId::Clone, {x});
      y = b.scalar_op(OpId::AddScalar, written, {Scalar::Kind::Float, 2.0});
      break;
    default:
      written = b.step(OpId::Clone, {x});
      y = written;
      break;
  }
  const int s = b.step(OpId::Sum, {y});
  // For "sum saves nothing" the write comes after the reduction that used the tensor.
  const int write = write_through(b, written, how, written_overlapping, nd, size0, which, grad_write);
  const int back = b.backward(s);

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, write)) return;
    const StepObs& bw = t.steps[static_cast<std::size_t>(back)];
    v.expect(bw.status == StepObs::Status::Ok, "backward after writing a tensor no op saved (", kVariants[variant],
             ", through ", name(how), ") should succeed, got ", outcome(bw));
    const TensorObs* xg = obs(t, back, x);
    if (bw.status == StepObs::Status::Ok && v.expect(xg && xg->grad, "the leaf got no gradient"))
      v.expect(xg->grad->sizes == xg->sizes, "leaf gradient sizes ", xg->grad->sizes, " != ", xg->sizes);
  });
}

}  // namespace
}  // namespace parity::properties
