// Memory formats and the layouts PyTorch promises:
// - preserve_format (clone, empty_like): a non-overlapping-and-dense input's exact strides; any other input
//   gets dense strides in the input's stride order (ATen's infer_dense_strides, which is what LibTorch does;
//   see PreserveFormatKeepsDenseStridesElseTheirOrder);
// - an explicit format (clone, contiguous, empty_like, zeros_like) is obeyed, and contiguous() returns its
//   input itself when the input is already in that format;
// - a leaf's gradient follows the leaf's layout when the leaf is non-overlapping and dense, else is contiguous
//   (the gradient layout contract of AccumulateGrad).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/on_both_backends.h"

namespace parity::properties {
namespace {

using generators::Dims;
using generators::LayoutSpec;
using program::Scalar;

const char* format_name(MemoryFormat mf) {
  switch (mf) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    case MemoryFormat::Preserve: return "preserve_format";
  }
  return "?";
}

Dims canonical_strides(const Dims& sizes, MemoryFormat mf) {
  if (mf == MemoryFormat::ChannelsLast) return generators::channels_last_strides(sizes);
  if (mf == MemoryFormat::ChannelsLast3d) return generators::channels_last_3d_strides(sizes);
  return generators::contiguous_strides(sizes);
}

bool has_flag(const TensorObs& o, MemoryFormat mf) {
  if (mf == MemoryFormat::ChannelsLast) return o.channels_last;
  if (mf == MemoryFormat::ChannelsLast3d) return o.channels_last_3d;
  return o.contiguous;
}

RC_GTEST_PROP(MemoryFormatProperties, PreserveFormatKeepsDenseStridesElseTheirOrder, ()) {
  using generators::LayoutKind;
  // Half of the inputs are not dense: that is where preserve_format has to infer.
  const LayoutSpec l = *rc::gen::oneOf(generators::layouts(),
                                   generators::layouts({LayoutKind::Sliced, LayoutKind::Expanded, LayoutKind::Overlapping}));
  const DType dtype = *any_dtype();
  const OpId op = *rc::gen::element(OpId::Clone, OpId::EmptyLike, OpId::ZerosLike);
  const bool dense = generators::is_non_overlapping_and_dense(l.sizes, l.strides);
  RC_TAG(std::string(to_string(l.kind)), std::string(program::spec(op).name));
  RC_CLASSIFY(dense, "dense input");
  RC_CLASSIFY(generators::is_channels_last_strides(l.sizes, l.strides) && !dense, "channels_last-like, not dense");

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, false, *seeds());
  const int y = b.with_format(op, x, MemoryFormat::Preserve);

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, y)) return;
    const TensorObs* xo = obs(t, x, x);
    const TensorObs* yo = obs(t, y, y);
    if (!v.expect(xo && yo, "missing observations")) return;
    const bool in_dense = generators::is_non_overlapping_and_dense(xo->sizes, xo->strides);
    v.expect(xo->non_overlapping_dense == in_dense, "is_non_overlapping_and_dense of ", xo->sizes, "@", xo->strides,
             " reported ", xo->non_overlapping_dense, ", PyTorch's rule gives ", in_dense);
    const Dims expected = in_dense ? xo->strides : generators::infer_dense_strides(xo->sizes, xo->strides);
    v.expect(yo->sizes == xo->sizes, program::spec(op).name, " sizes ", yo->sizes, " != ", xo->sizes);
    v.expect(yo->strides == expected, program::spec(op).name, "(preserve_format) of ", in_dense ? "dense " : "non-dense ",
             xo->sizes, "@", xo->strides, " has strides ", yo->strides, ", expected ", expected);
    v.expect(yo->alias_of == y, program::spec(op).name, " shares storage with v", yo->alias_of);
  });
}

RC_GTEST_PROP(MemoryFormatProperties, ExplicitFormatIsObeyed, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *any_dtype();
  const OpId op = *rc::gen::element(OpId::Clone, OpId::Contiguous, OpId::EmptyLike, OpId::ZerosLike);
  const MemoryFormat mf = *rc::gen::elementOf(formats_for(l.sizes.size(), false));
  RC_TAG(std::string(program::spec(op).name), format_name(mf));

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, false, *seeds());
  const int y = b.with_format(op, x, mf);

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, y)) return;
    const TensorObs* xo = obs(t, x, x);
    const TensorObs* yo = obs(t, y, y);
    if (!v.expect(xo && yo, "missing observations")) return;
    v.expect(has_flag(*yo, mf), program::spec(op).name, "(", format_name(mf), ") of ", xo->sizes, "@", xo->strides,
             " gives strides ", yo->strides, " which are not ", format_name(mf));
    const bool already = has_flag(*xo, mf);
    if (op == OpId::Contiguous && already) {
      // Already in the format: contiguous() is the identity, strides and storage included.
      v.expect(yo->alias_of == xo->alias_of && yo->strides == xo->strides && yo->offset == xo->offset,
               "contiguous(", format_name(mf), ") of a tensor already in that format should return it: got ",
               render(*yo));
    } else {
      v.expect(yo->alias_of == y, program::spec(op).name, " should allocate, shares storage with v", yo->alias_of);
      const Dims expected = canonical_strides(xo->sizes, mf);
      v.expect(yo->strides == expected, program::spec(op).name, "(", format_name(mf), ") of ", xo->sizes,
               " has strides ", yo->strides, ", expected ", expected);
    }
  });
}

RC_GTEST_PROP(MemoryFormatProperties, LeafGradientFollowsTheLeafLayout, ()) {
  const LayoutSpec l = *generators::layouts();
  const DType dtype = *floating_dtypes();
  // How the gradient reaches the leaf decides the layout it arrives in (expanded from sum, computed by mul or
  // exp in the leaf's order, or through a permuting view); AccumulateGrad then applies the contract.
  const int path = *rc::gen::inRange(0, 5);
  static const char* const kPaths[] = {"sum", "mul_scalar+sum", "exp+mean", "clone(contiguous)+sum",
                                       "transpose+mul_scalar+sum"};
  const bool dense = generators::is_non_overlapping_and_dense(l.sizes, l.strides);
  RC_TAG(std::string(to_string(l.kind)), kPaths[path]);
  RC_CLASSIFY(dense, "dense leaf");

  ProgramBuilder b;
  const int x = add_leaf(b, l, dtype, true, *seeds());
  int y = x;
  switch (path) {
    case 0: break;
    case 1: y = b.scalar_op(OpId::MulScalar, x, {Scalar::Kind::Float, 2.0}); break;
    case 2: y = b.step(OpId::Exp, {x}); break;
    case 3: y = b.with_format(OpId::Clone, x, MemoryFormat::Contiguous); break;
    default: {
      program::Attrs a;
      a.dim = 0;
      a.dim1 = -1;
      y = b.scalar_op(OpId::MulScalar, b.step(OpId::Transpose, {x}, a), {Scalar::Kind::Float, 3.0});
      break;
    }
  }
  const int s = b.step(path == 2 ? OpId::Mean : OpId::Sum, {y});
  const int back = b.backward(s);

  check_on_both(b.program(), [&](const Trace& t, Expectations& v) {
    if (!steps_ok(v, t, 0, back)) return;
    const TensorObs* xo = obs(t, back, x);
    if (!v.expect(xo && xo->grad, "the leaf has no gradient after backward")) return;
    const auto& g = *xo->grad;
    v.expect(g.sizes == xo->sizes, "gradient sizes ", g.sizes, " != leaf sizes ", xo->sizes);
    if (g.sizes != xo->sizes) return;
    if (generators::is_non_overlapping_and_dense(xo->sizes, xo->strides)) {
      for (std::size_t d = 0; d < g.sizes.size(); ++d)
        if (g.sizes[d] != 1)
          v.expect(g.strides[d] == xo->strides[d], "gradient of a dense leaf ", xo->sizes, "@", xo->strides,
                   " has strides ", g.strides, " (via ", kPaths[path], "): dim ", d, " differs");
    } else {
      v.expect(generators::is_contiguous(g.sizes, g.strides), "gradient of a non-dense leaf ", xo->sizes, "@",
               xo->strides, " has strides ", g.strides, " (via ", kPaths[path], "), expected contiguous");
    }
  });
}

}  // namespace
}  // namespace parity::properties
