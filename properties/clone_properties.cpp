// clone() owns its memory: whatever the source's layout and the memory format asked for, the copy has its own
// storage, the same values, and a write on either side is invisible on the other and leaves the other's
// version counter alone.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/on_both_backends.h"

namespace parity::properties {
namespace {

using generators::LayoutSpec;
using program::Scalar;

RC_GTEST_PROP(CloneProperties, CloneDoesNotAlias, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *any_dtype();
  const bool rg = program::is_floating(dtype) && *rc::gen::arbitrary<bool>();
  const MemoryFormat mf = *rc::gen::elementOf(formats_for(l.sizes.size(), true));
  const bool write_source = *rc::gen::arbitrary<bool>();
  RC_TAG(std::string(to_string(l.kind)));
  RC_CLASSIFY(write_source, "write source");

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, rg, *seeds());
  const int c = b.with_format(OpId::Clone, x, mf);
  // fill_ is the one write overlapping memory accepts; bool tensors take no arithmetic scalar.
  const int target = write_source ? x : c;
  const bool fill = dtype == DType::Bool || (write_source && overlapping(l));
  // A leaf requiring grad is written under no_grad, as PyTorch requires.
  const bool grad = !(write_source && rg);
  if (fill) b.scalar_op(OpId::Fill_, target, {Scalar::Kind::Int, 1}, grad);
  else b.scalar_op(OpId::AddScalar_, target, {Scalar::Kind::Int, 1}, grad);

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, 2)) return;
    const TensorObs* x0 = obs(t, 0, x);
    const TensorObs* c1 = obs(t, 1, c);
    const TensorObs* x2 = obs(t, 2, x);
    const TensorObs* c2 = obs(t, 2, c);
    if (!v.expect(x0 && c1 && x2 && c2, "missing observations")) return;
    v.expect(c1->alias_of == c, "the clone shares storage with v", c1->alias_of);
    v.expect(c1->sizes == x0->sizes, "clone sizes ", c1->sizes, " != source sizes ", x0->sizes);
    v.expect(c1->dtype == x0->dtype, "clone dtype differs from the source's");
    v.expect(c1->values == x0->values, "clone values ", c1->values, " != source values ", x0->values);
    v.expect(c1->requires_grad == rg, "clone requires_grad ", c1->requires_grad, ", source ", rg);
    v.expect(!rg || c1->grad_fn == "CloneBackward0", "clone of a tensor requiring grad has grad_fn '", c1->grad_fn,
             "'");
    v.expect(c2->alias_of != x2->alias_of, "after the write, clone and source share storage");
    if (write_source) {
      v.expect(x2->version == x0->version + 1, "the write did not bump the source's version: ", x0->version, " -> ",
               x2->version);
      v.expect(c2->values == c1->values, "writing the source changed the clone: ", c1->values, " -> ", c2->values);
      v.expect(c2->version == c1->version, "writing the source bumped the clone's version: ", c1->version, " -> ",
               c2->version);
    } else {
      v.expect(c2->version == c1->version + 1, "the write did not bump the clone's version: ", c1->version, " -> ",
               c2->version);
      v.expect(x2->values == x0->values, "writing the clone changed the source: ", x0->values, " -> ", x2->values);
      v.expect(x2->version == x0->version, "writing the clone bumped the source's version: ", x0->version, " -> ",
               x2->version);
    }
  });
}

}  // namespace
}  // namespace parity::properties
