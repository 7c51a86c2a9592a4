// Every op of the table runs on the LibTorch backend, in one program that reaches each at least once, and its
// result is what LibTorch documents: sizes, strides, aliasing, grad_fn and values (an op added to program/ops.def
// fails here until the program below calls it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "judge/backend.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"
#include "tests/support/torch_trace.h"
#include "tests/support/unary_ops.h"

namespace parity::oracle {
namespace {

using judge::StepObs;
using judge::Trace;
using program::Attrs;
using program::DType;
using program::MemoryFormat;
using program::OpId;
using program::Scalar;
using testing::Builder;
using testing::obs;
using testing::result;

Scalar float_scalar(double v) { return {Scalar::Kind::Float, v}; }

// torch.tensor([[1, 2.5], [True, -0.0]], requires_grad=True).
Attrs literal_list() {
  Attrs a;
  a.sizes = {2, 2};
  a.elements = {{Scalar::Kind::Int, 1}, float_scalar(2.5), {Scalar::Kind::Bool, 1}, float_scalar(-0.0)};
  a.requires_grad = true;
  return a;
}

// A literal list is made as Python makes it (oracle/literal_tensor_recipe.inc): no element is a write.
TEST(OracleBackend, LiteralListIsPythons) {
  Builder b;
  const int t = b.step(OpId::Tensor, {}, literal_list());
  const Trace tr = b.run();
  EXPECT_EQ(result(tr, t).values, (std::vector<double>{1, 2.5, 1, -0.0}));
  EXPECT_EQ(result(tr, t).strides, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(result(tr, t).version, 0);  // C++'s torch::tensor of braced lists says 4
  EXPECT_TRUE(result(tr, t).is_leaf);
  EXPECT_TRUE(result(tr, t).requires_grad);
}

// One step of every op in the table, on an input it accepts: the dispatch covers the whole table.
TEST(OracleBackend, EveryOpRuns) {
  Builder b;
  std::vector<OpId> seen;
  auto with = [&](OpId op, std::vector<int> in, Attrs a = {}) {
    seen.push_back(op);
    return b.step(op, std::move(in), std::move(a));
  };
  Attrs a;
  a.sizes = {2, 3};
  a.strides = {3, 1};
  a.requires_grad = true;
  int x = with(OpId::Rand, {}, a);
  Attrs empty_rand{.sizes = {0, 3}, .strides = {3, 1}};
  int e0 = with(OpId::Rand, {}, empty_rand);
  Attrs f;
  f.sizes = {2, 3};
  with(OpId::Zeros, {}, f);
  int ones = with(OpId::Ones, {}, f);
  f.scalar = float_scalar(1.5);
  int full = with(OpId::Full, {}, f);
  with(OpId::Tensor, {}, literal_list());
  Attrs r;
  r.end = 6;
  r.dtype = DType::Int64;
  int ar = with(OpId::Arange, {}, r);
  with(OpId::Empty, {}, f);
  with(OpId::EmptyLike, {x});
  with(OpId::ZerosLike, {x});
  int c = with(OpId::Clone, {x});
  Attrs cf;
  cf.memory_format = MemoryFormat::Contiguous;
  with(OpId::Contiguous, {x}, cf);
  int d = with(OpId::Detach, {c});  // of the clone: the writes through d below must leave x alone
  int c2 = with(OpId::Clone, {c});
  with(OpId::Detach_, {c2});
  with(OpId::Copy_, {d, ones});
  Attrs vs;
  vs.sizes = {3, -1};
  with(OpId::View, {x}, vs);
  with(OpId::Reshape, {x}, vs);
  Attrs tp;
  tp.dim = 0;
  tp.dim1 = -1;
  with(OpId::Transpose, {x}, tp);
  Attrs pm;
  pm.dims = {1, 0};
  with(OpId::Permute, {x}, pm);
  Attrs sl;
  sl.dim = 1;
  sl.start = 0;
  sl.end = 3;
  sl.step = 2;
  int sliced = with(OpId::Slice, {x}, sl);
  Attrs se;
  se.dim = 1;
  se.index = -1;
  with(OpId::Select, {x}, se);
  Attrs nr;
  nr.dim = 1;
  nr.start = 1;
  nr.length = 2;
  with(OpId::Narrow, {x}, nr);
  Attrs ex;
  ex.sizes = {4, 2, 3};
  with(OpId::Expand, {x}, ex);
  Attrs us;
  us.dim = 0;
  int u = with(OpId::Unsqueeze, {x}, us);
  with(OpId::Squeeze, {u});
  with(OpId::SqueezeDim, {u}, us);
  Attrs as;
  as.sizes = {2, 2};
  as.strides = {1, 2};
  as.offset = 1;
  int ast = with(OpId::AsStrided, {x}, as);
  with(OpId::Add, {x, full});
  with(OpId::Sub, {x, full});
  with(OpId::Mul, {x, full});
  with(OpId::Div, {x, full});
  Attrs sc;
  sc.scalar = float_scalar(2.0);
  for (OpId op : {OpId::AddScalar, OpId::SubScalar, OpId::MulScalar, OpId::DivScalar, OpId::Pow}) with(op, {x}, sc);
  for (OpId op : {OpId::Neg, OpId::Exp}) with(op, {x});
  with(OpId::FullLike, {x}, sc);
  with(OpId::Sum, {x});
  Attrs rd;
  rd.dims = {1};
  rd.keepdim = true;
  with(OpId::SumDims, {x}, rd);
  with(OpId::Mean, {x});
  with(OpId::MeanDims, {x}, rd);
  int w = with(OpId::Clone, {x});
  for (OpId op : {OpId::Add_, OpId::Sub_, OpId::Mul_, OpId::Div_}) with(op, {w, full});
  // Every out= form into a tensor of no elements, resized to the result's [2, 3] (div's write, last, the one seen).
  Attrs no_elements;
  no_elements.sizes = {0};
  const int out = with(OpId::Zeros, {}, no_elements);
  for (const program::OpSpec& op : program::op_table())
    if (op.out_of) with(op.id, op.arity == 3 ? std::vector<int>{out, full, ones} : std::vector<int>{out, full});
  const int out_written = with(OpId::DivOut, {out, full, ones});
  for (OpId op : {OpId::AddScalar_, OpId::SubScalar_, OpId::MulScalar_, OpId::DivScalar_, OpId::Fill_}) with(op, {w}, sc);
  with(OpId::Zero_, {d});
  for (OpId op : testing::unary_ops(program::OpKind::Arithmetic)) with(op, {x});
  Attrs cl;
  cl.min = float_scalar(0.25);
  with(OpId::Clamp, {x}, cl);
  int xt = with(OpId::T, {x});
  int mm = with(OpId::Mm, {x, xt});
  int mv = with(OpId::Matmul, {x, with(OpId::Select, {xt}, se)});
  Attrs dg;
  dg.offset = 1;
  dg.dim = 0;
  dg.dim1 = 1;
  with(OpId::Diagonal, {x}, dg);
  Attrs uf;
  uf.dim = 1;
  uf.size = 2;
  uf.step = 1;
  int unf = with(OpId::Unfold, {x}, uf);
  Attrs mo;
  mo.dim = 1;
  mo.index = 1;
  mo.size = 2;
  mo.chunks = 2;
  for (OpId op : {OpId::Unbind, OpId::Split, OpId::Chunk}) with(op, {x}, mo);
  with(OpId::Data, {x});
  Attrs to;
  to.dtype = DType::Float64;
  to.copy = true;
  with(OpId::To, {x}, to);
  to.memory_format = MemoryFormat::Contiguous;
  with(OpId::ToDTypeMemoryFormat, {x}, to);
  with(OpId::NewTensor, {x});
  with(OpId::Deepcopy, {x});
  int w2 = with(OpId::Clone, {x});
  for (OpId op : testing::unary_ops(program::OpKind::InPlace)) with(op, {w2});
  with(OpId::Clamp_, {w2}, cl);
  int mms = with(OpId::Sum, {mm});
  Attrs gs;
  gs.sizes = {4, 2};  // summed down to mv's shape [2]
  Attrs kept;
  kept.retain_graph = true;
  with(OpId::AutogradGradOutputs, {mv, x, with(OpId::Ones, {}, gs)}, kept);
  with(OpId::BackwardGrad, {mv, with(OpId::Ones, {}, gs)});
  with(OpId::RetainGrad, {w});
  Attrs rq;
  rq.requires_grad = true;
  int rqv = with(OpId::RequiresGrad_, {ones}, rq);
  int s = with(OpId::Sum, {with(OpId::Add, {w, rqv})});
  with(OpId::Backward, {s});
  int xg = with(OpId::Grad, {x});
  with(OpId::SetGrad, {x, with(OpId::Clone, {xg})});
  with(OpId::ResetGrad, {x});
  for (OpId op : {OpId::OnesLike, OpId::RandLike, OpId::RandnLike, OpId::RandintLike}) with(op, {x});
  Attrs emf;
  emf.sizes = {2, 3, 2, 2};
  emf.memory_format = MemoryFormat::ChannelsLast;
  int em = with(OpId::EmptyMemoryFormat, {}, emf);
  int eqv = with(OpId::Eq, {x, full});
  int wh = with(OpId::Where, {eqv, x, full});
  with(OpId::Ne, {x, full});
  Attrs tmf;
  tmf.memory_format = MemoryFormat::Contiguous;
  int same_x = with(OpId::ToMemoryFormat, {x}, tmf);
  Attrs cpu;  // to(cpu) of a CPU tensor is the tensor itself; with copy=True a fresh one
  int to_here = with(OpId::ToDevice, {x}, cpu);
  cpu.copy = true;
  int to_copy = with(OpId::ToDevice, {x}, cpu);
  Attrs sws;
  sws.dim = 1;
  sws.dims = {1, 2};
  sws.index = 1;
  int sw = with(OpId::SplitWithSizes, {x}, sws);
  int usw = with(OpId::UnsafeSplitWithSizes, {x}, sws);
  int usp = with(OpId::UnsafeSplit, {x}, mo);
  with(OpId::UnsafeChunk, {x}, mo);
  Attrs fillv;
  fillv.scalar = float_scalar(-2.5);
  int mf = with(OpId::MaskedFill, {x, eqv}, fillv);
  int acm = with(OpId::Addcmul, {x, full, c2}, fillv);
  int c3 = with(OpId::Clone, {c2});
  int mf_ = with(OpId::MaskedFill_, {c3, eqv}, fillv);
  with(OpId::Addcmul_, {c3, full, x}, fillv);
  Attrs two;
  two.end = 2;
  two.dtype = DType::Int64;
  int ix = with(OpId::Arange, {}, two);
  int gathered = with(OpId::Index, {x, ix});
  Attrs acc;
  acc.accumulate = true;
  int put = with(OpId::IndexPut_, {c3, ix, x}, acc);
  int xsum = with(OpId::Sum, {x});
  Attrs keep;
  keep.retain_graph = true;
  int dx = with(OpId::AutogradGrad, {xsum, x}, keep);
  int xmean = with(OpId::Mean, {x});
  with(OpId::BackwardRoots, {xsum, xmean}, keep);
  Attrs four;
  four.sizes = {4};
  int holder = with(OpId::Zeros, {}, four);
  with(OpId::SetData, {holder, ar});
  Trace tr = b.run();
  for (std::size_t i = 0; i < tr.steps.size(); ++i)
    EXPECT_EQ(tr.steps[i].status, StepObs::Status::Ok)
        << "step " << i << " (" << program::spec(seen[i]).name << "): " << tr.steps[i].message;
  for (const auto& op : program::op_table())
    EXPECT_NE(std::find(seen.begin(), seen.end(), op.id), seen.end()) << op.name << " not exercised";
  EXPECT_EQ(result(tr, e0).sizes, (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(result(tr, out_written).sizes, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(result(tr, out_written).same_as, out);
  EXPECT_EQ(result(tr, out_written).values, std::vector<double>(6, 1.5));
  EXPECT_EQ(result(tr, same_x).same_as, x);
  EXPECT_EQ(result(tr, to_here).same_as, x);
  EXPECT_NE(result(tr, to_copy).alias_of, x);
  EXPECT_EQ(result(tr, to_copy).grad_fn, "ToCopyBackward0");
  EXPECT_EQ(result(tr, to_copy).device, "cpu");
  EXPECT_EQ(result(tr, em).strides, (std::vector<std::int64_t>{12, 1, 6, 3}));
  EXPECT_FALSE(result(tr, em).values_defined);
  EXPECT_EQ(result(tr, eqv).dtype, DType::Bool);
  EXPECT_FALSE(result(tr, eqv).requires_grad);
  EXPECT_EQ(result(tr, wh).grad_fn, "WhereBackward0");
  EXPECT_EQ(result(tr, mf).grad_fn, "MaskedFillBackward0");
  EXPECT_EQ(result(tr, acm).grad_fn, "AddcmulBackward0");
  EXPECT_EQ(result(tr, mf_).same_as, c3);
  EXPECT_EQ(result(tr, gathered).grad_fn, "IndexBackward0");
  EXPECT_EQ(result(tr, gathered).values, result(tr, x).values);  // rows 0 and 1 of a 2-row x
  EXPECT_EQ(result(tr, put).grad_fn, "IndexPutBackward0");
  EXPECT_EQ(result(tr, dx).values, (std::vector<double>(6, 1.0)));
  EXPECT_EQ(obs(tr.steps.back(), holder).sizes, (std::vector<std::int64_t>{6}));  // set_data: arange's data
  EXPECT_EQ(obs(tr.steps.back(), holder).dtype, DType::Int64);
  EXPECT_EQ(obs(tr.steps.back(), holder).alias_of, ar);
  EXPECT_FALSE(result(tr, dx).requires_grad);  // already contiguous: to() returns x itself
  EXPECT_EQ(result(tr, sw).sizes, (std::vector<std::int64_t>{2, 2}));
  EXPECT_TRUE(result(tr, sw).is_view);
  for (auto [v, node] : {std::pair{usp, "UnsafeSplitBackward0"}, std::pair{usw, "UnsafeSplitWithSizesBackward0"}})
    EXPECT_TRUE(!result(tr, v).is_view && result(tr, v).alias_of == x && result(tr, v).grad_fn == node) << node;
  EXPECT_EQ(result(tr, mm).sizes, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(result(tr, mms).sizes, (std::vector<std::int64_t>{}));
  EXPECT_EQ(result(tr, unf).sizes, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(result(tr, unf).strides, (std::vector<std::int64_t>{3, 1, 1}));
  EXPECT_TRUE(result(tr, unf).is_view);
  EXPECT_EQ(result(tr, unf).base, x);
  EXPECT_TRUE(result(tr, e0).values.empty());
  EXPECT_EQ(result(tr, ar).values, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(result(tr, ar).dtype, DType::Int64);
  const auto& xs = result(tr, x).values;
  EXPECT_EQ(result(tr, sliced).values, (std::vector<double>{xs[0], xs[2], xs[3], xs[5]}));
  EXPECT_EQ(result(tr, sliced).strides, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(result(tr, ast).values, (std::vector<double>{xs[1], xs[3], xs[2], xs[4]}));
  EXPECT_EQ(result(tr, ast).offset, 1);
  EXPECT_EQ(result(tr, ast).grad_fn, "AsStridedBackward0");
}

// full_like is empty_like then fill_ below autograd: the operand's layout, its dtype (2.5 truncated into an
// integer one), version 0, no grad whatever the operand's, and fill_'s overflow check.
TEST(OracleBackend, FullLikeFillsBelowAutograd) {
  Builder b;
  Attrs a;
  a.sizes = {2, 3};
  a.strides = {1, 2};  // a transposed layout, which preserve_format keeps
  a.requires_grad = true;
  const int x = b.step(OpId::Rand, {}, a);
  Attrs fill;
  fill.scalar = float_scalar(2.5);
  const int fl = b.step(OpId::FullLike, {x}, fill);
  a.dtype = DType::Int64;
  a.requires_grad = false;
  const int il = b.step(OpId::FullLike, {b.step(OpId::Rand, {}, a)}, fill);
  a.dtype = DType::Float16;
  fill.scalar = float_scalar(1e6);
  const int too_big = b.step(OpId::FullLike, {b.step(OpId::Rand, {}, a)}, fill);
  const Trace tr = b.run();
  EXPECT_EQ(result(tr, fl).values, std::vector<double>(6, 2.5));
  EXPECT_EQ(result(tr, fl).strides, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(result(tr, fl).version, 0);
  EXPECT_FALSE(result(tr, fl).requires_grad);
  EXPECT_EQ(result(tr, il).values, std::vector<double>(6, 2.0));
  EXPECT_EQ(tr.steps[static_cast<std::size_t>(too_big)].status, StepObs::Status::Error);
}

}  // namespace
}  // namespace parity::oracle
