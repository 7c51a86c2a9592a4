// detach() aliases but blocks gradients: the detached tensor shares storage, offset, strides and version
// counter with its source, does not require grad, is a leaf without grad_fn; a write through it is visible in
// the source and bumps the source's version; and no gradient flows back through it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "properties/on_both_backends.h"

namespace parity::properties {
namespace {

using generators::LayoutSpec;
using program::Scalar;

bool all_equal(const std::vector<double>& v, double x) {
  return std::all_of(v.begin(), v.end(), [x](double e) { return e == x; });
}

RC_GTEST_PROP(DetachProperties, DetachAliasesAndBlocksGrad, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *floating_dtypes();
  // The source is a leaf requiring grad, or a non-leaf computed from one (x = 2 * leaf, dense).
  const bool nonleaf = *rc::gen::arbitrary<bool>();
  // The graph after the write uses the source and the detached tensor (x + d), or only d (d * w).
  const bool source_in_graph = *rc::gen::arbitrary<bool>();
  RC_TAG(std::string(to_string(l.kind)));
  RC_CLASSIFY(nonleaf, "non-leaf source");
  RC_CLASSIFY(source_in_graph, "x + d");

  ProgramBuilder b;
  const int leaf = add_leaf(b, l, dtype, true, *seeds());
  const int x = nonleaf ? b.scalar_op(OpId::MulScalar, leaf, {Scalar::Kind::Float, 2.0}) : leaf;
  const int d = b.step(OpId::Detach, {x});
  const bool fill = !nonleaf && overlapping(l);  // overlapping memory takes only fill_
  const int write = fill ? b.scalar_op(OpId::Fill_, d, {Scalar::Kind::Float, 0.5})
                         : b.scalar_op(OpId::AddScalar_, d, {Scalar::Kind::Float, 1.0});
  int w = -1;
  int z = -1;
  if (source_in_graph) {
    z = b.step(OpId::Add, {x, d});
  } else {
    w = add_leaf(b, generators::contiguous_of(l), dtype, true, 99);
    z = b.step(OpId::Mul, {d, w});
  }
  const int s = b.step(OpId::Sum, {z});
  const int back = b.backward(s);

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, back)) return;
    const TensorObs* x_made = obs(t, x, x);
    const TensorObs* d_made = obs(t, d, d);
    const TensorObs* x_written = obs(t, write, x);
    const TensorObs* d_written = obs(t, write, d);
    const TensorObs* leaf_after = obs(t, back, leaf);
    if (!v.expect(x_made && d_made && x_written && d_written && leaf_after, "missing observations")) return;
    // aliasing
    v.expect(d_made->alias_of == x_made->alias_of, "detach does not share the source's storage: alias_of ",
             d_made->alias_of, " vs ", x_made->alias_of);
    v.expect(d_made->offset == x_made->offset, "detach offset ", d_made->offset, " != ", x_made->offset);
    v.expect(d_made->strides == x_made->strides, "detach strides ", d_made->strides, " != ", x_made->strides);
    v.expect(d_made->version == x_made->version, "detach version ", d_made->version, " != ", x_made->version);
    // no autograd
    v.expect(!d_made->requires_grad, "detached tensor requires grad");
    v.expect(d_made->is_leaf, "detached tensor is not a leaf");
    v.expect(d_made->grad_fn.empty(), "detached tensor has grad_fn ", d_made->grad_fn);
    // the write is the source's
    v.expect(x_written->values == d_written->values, "write through detach not visible in the source: ",
             x_written->values, " vs ", d_written->values);
    v.expect(x_written->version == x_made->version + 1, "write through detach: source version ", x_made->version,
             " -> ", x_written->version);
    v.expect(d_written->version == x_written->version, "detached and source versions differ after the write");
    if (fill) v.expect(all_equal(x_written->values, 0.5), "fill_ through detach: source values ", x_written->values);
    // no gradient through d: with x + d the leaf gets only the x path (1, times 2 for x = 2 * leaf)
    if (source_in_graph) {
      double expected = nonleaf ? 2.0 : 1.0;
      if (v.expect(leaf_after->grad.has_value(), "the source's leaf got no gradient through x"))
        v.expect(all_equal(leaf_after->grad->values, expected), "gradient flowed through detach: leaf grad ",
                 leaf_after->grad->values, ", expected all ", expected);
    } else {
      v.expect(!leaf_after->grad.has_value(), "gradient flowed through detach into the source: ",
               leaf_after->grad ? leaf_after->grad->values : std::vector<double>{});
      const TensorObs* w_after = obs(t, back, w);
      if (v.expect(w_after && w_after->grad.has_value(), "the other factor got no gradient"))
        v.expect(w_after->grad->values == d_written->values, "d(d*w)/dw ", w_after->grad->values, " != d ",
                 d_written->values);
    }
  });
}

}  // namespace
}  // namespace parity::properties
