// Views meet autograd: an in-place write through a view of a non-leaf rebases the base's history
// (CopySlices) and the gradient reaching the leaf is exactly the chain rule through the write; outputs of
// multi-output view ops (unbind, split, chunk) may not be written in place while grad mode is on, though the
// same write under no_grad is fine; `.data` shares storage but neither the version counter nor the graph.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

#include "properties/on_both_backends.h"

namespace parity::properties {
namespace {

using generators::LayoutSpec;
using generators::LayoutKind;
using program::Scalar;

// Views that never overlap themselves, so that an in-place write through them is allowed.
enum class ViewKind { Select, Slice, Narrow, Transpose, Diagonal, Unbind, Split };

rc::Gen<ViewKind> write_views() {
  return rc::gen::element(ViewKind::Select, ViewKind::Slice, ViewKind::Narrow, ViewKind::Transpose,
                          ViewKind::Diagonal);
}

const char* name(ViewKind k) {
  switch (k) {
    case ViewKind::Select: return "select";
    case ViewKind::Slice: return "slice";
    case ViewKind::Narrow: return "narrow";
    case ViewKind::Transpose: return "transpose";
    case ViewKind::Diagonal: return "diagonal";
    case ViewKind::Unbind: return "unbind";
    case ViewKind::Split: return "split";
  }
  return "?";
}

// A view of `x` (with `ndim` >= 1 dims, size0 > 0 along dim 0) of the given kind.
int add_view(ProgramBuilder& b, int x, ViewKind k, std::size_t ndim, std::int64_t size0, bool grad = true) {
  program::Attrs a;
  a.dim = 0;
  switch (k) {
    case ViewKind::Select: a.index = size0 - 1; return b.step(OpId::Select, {x}, a, grad);
    case ViewKind::Slice: a.start = 0; a.end = size0; a.step = 2; return b.step(OpId::Slice, {x}, a, grad);
    case ViewKind::Narrow: a.start = size0 / 2; a.length = size0 - size0 / 2; return b.step(OpId::Narrow, {x}, a, grad);
    case ViewKind::Transpose: a.dim1 = -1; return b.step(OpId::Transpose, {x}, a, grad);
    case ViewKind::Diagonal:
      a.dim1 = ndim >= 2 ? 1 : 0;
      if (ndim < 2) return b.step(OpId::Select, {x}, a, grad);  // a 1-d tensor has no diagonal
      return b.step(OpId::Diagonal, {x}, a, grad);
    case ViewKind::Unbind: a.index = size0 - 1; return b.step(OpId::Unbind, {x}, a, grad);
    case ViewKind::Split: a.size = 1; a.index = size0 - 1; return b.step(OpId::Split, {x}, a, grad);
  }
  return x;
}

// Storage offsets a tensor's elements occupy, by logical (row-major) position.
std::vector<std::int64_t> element_offsets(const TensorObs& o) {
  std::vector<std::int64_t> out;
  const std::size_t n = o.sizes.size();
  std::int64_t numel = 1;
  for (auto s : o.sizes) numel *= s;
  std::vector<std::int64_t> idx(n, 0);
  for (std::int64_t e = 0; e < numel; ++e) {
    std::int64_t off = o.offset;
    for (std::size_t d = 0; d < n; ++d) off += idx[d] * o.strides[d];
    out.push_back(off);
    for (std::size_t d = n; d-- > 0;) {
      if (++idx[d] < o.sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

LayoutSpec nonempty_layout() {
  return *rc::gen::suchThat(generators::layouts({LayoutKind::Contiguous, LayoutKind::ChannelsLast,
                                                 LayoutKind::Permuted, LayoutKind::Sliced}),
                            [](const LayoutSpec& l) {
                              std::int64_t n = 1;
                              for (auto s : l.sizes) n *= s;
                              return !l.sizes.empty() && n > 0;
                            });
}

RC_GTEST_PROP(ViewAutogradProperties, InPlaceThroughAViewOfANonLeafRebasesHistory, ()) {
  const LayoutSpec l = nonempty_layout();
  const DType dtype = *floating_dtypes();
  const ViewKind kind = *write_views();
  const double c = *rc::gen::element(2.0, -3.0, 0.5);
  RC_TAG(name(kind), std::string(to_string(l.kind)));

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, true, *seeds());
  const int base = b.step(OpId::Clone, {x});
  const int v = add_view(b, base, kind, l.sizes.size(), l.sizes[0]);
  const int w = b.scalar_op(OpId::MulScalar_, v, {Scalar::Kind::Float, c});
  const int s = b.step(OpId::Sum, {base});
  const int bw = b.backward(s);

  check_on_both(b.program(), [&](const Trace& t, Expectations& verdict) {
    if (!steps_ok(verdict, t, 0, bw)) return;
    const TensorObs* bo = obs(t, w, base);
    const TensorObs* vo = obs(t, w, v);
    const TensorObs* xo = obs(t, bw, x);
    if (!verdict.expect(bo && vo && xo && xo->grad, "missing observations")) return;
    verdict.expect(bo->grad_fn == "torch::autograd::CopySlices", "after writing through a view, the base's grad_fn is ",
                   bo->grad_fn, ", expected CopySlices");
    verdict.expect(vo->is_view && vo->base == base, "the written view is no longer a view of its base: is_view=",
                   vo->is_view, " base=v", vo->base);
    verdict.expect(bo->version == 1 && vo->version == 1, "base and view share one version counter, bumped once: ",
                   bo->version, " and ", vo->version);
    // d sum(base) / dx: 1 for elements outside the view, c for those the write scaled.
    const auto base_offsets = element_offsets(*bo);
    const auto view_offsets = element_offsets(*vo);
    const std::set<std::int64_t> written(view_offsets.begin(), view_offsets.end());
    std::vector<double> expected;
    for (auto off : base_offsets) expected.push_back(written.count(off) ? c : 1.0);
    verdict.expect(xo->grad->values == expected, "x.grad ", xo->grad->values, " expected ", expected);
  });
}

RC_GTEST_PROP(ViewAutogradProperties, MultiOutputViewsRefuseInPlaceWithGradOn, ()) {
  const LayoutSpec l = nonempty_layout();
  const DType dtype = *floating_dtypes();
  const ViewKind kind = *rc::gen::element(ViewKind::Unbind, ViewKind::Split);
  const bool grad_on = *rc::gen::arbitrary<bool>();
  RC_TAG(name(kind), grad_on ? "grad on" : "no_grad");

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, true, *seeds());
  const int base = b.step(OpId::MulScalar, {x}, [] {
    program::Attrs a;
    a.scalar = {Scalar::Kind::Float, 2.0};
    return a;
  }());
  const int v = add_view(b, base, kind, l.sizes.size(), l.sizes[0]);
  const int w = b.scalar_op(OpId::AddScalar_, v, {Scalar::Kind::Float, 1.0}, grad_on);

  check_on_both(b.program(), [&](const Trace& t, Expectations& verdict) {
    if (!steps_ok(verdict, t, 0, v)) return;
    const StepObs& ws = t.steps[static_cast<std::size_t>(w)];
    if (grad_on) {
      verdict.expect(ws.status == StepObs::Status::Error && ws.category == judge::ErrorCategory::ViewInPlace,
                     "in-place on an output of ", name(kind), " with grad on: ", outcome(ws), ", expected view_inplace");
      return;
    }
    if (!verdict.expect(ws.status == StepObs::Status::Ok, "the same write under no_grad: ", outcome(ws))) return;
    const TensorObs* bo = obs(t, w, base);
    verdict.expect(bo && bo->version == 1, "the base shares the view's version counter");
  });
}

RC_GTEST_PROP(ViewAutogradProperties, DataSharesStorageButNotVersionNorGraph, ()) {
  const LayoutSpec l = nonempty_layout();
  const DType dtype = *floating_dtypes();

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, true, *seeds());
  const int d = b.step(OpId::Data, {x});
  const int w = b.scalar_op(OpId::Fill_, d, {Scalar::Kind::Float, 0.5});

  check_on_both(b.program(), [&](const Trace& t, Expectations& verdict) {
    if (!steps_ok(verdict, t, 0, w)) return;
    const TensorObs* xo = obs(t, w, x);
    const TensorObs* dobs = obs(t, w, d);
    if (!verdict.expect(xo && dobs, "missing observations")) return;
    verdict.expect(dobs->alias_of == x, ".data shares x's storage: alias_of=v", dobs->alias_of);
    verdict.expect(!dobs->requires_grad && dobs->is_leaf && dobs->grad_fn.empty() && !dobs->is_view,
                   ".data is a plain leaf outside the graph: ", render(*dobs));
    verdict.expect(dobs->version == 1 && xo->version == 0, "writing .data bumps its own counter only: data ",
                   dobs->version, ", x ", xo->version);
    verdict.expect(xo->values == dobs->values, "x sees the write through .data");
  });
}

}  // namespace
}  // namespace parity::properties
