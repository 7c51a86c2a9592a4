// The claims of seed file 000_8f20afcace787d72.txt (shared/seeds), each restated as a program and a check.
#include <string>
#include <vector>

#include "cli/claims/seed_claim_support.h"

namespace parity::cli::claims {
namespace {

using judge::TensorObs;
using judge::Trace;
using program::DType;
using program::MemoryFormat;
using program::OpId;
using program::ProgramBuilder;
using program::render_ints;

Claim clone_own_memory() {
  ProgramBuilder b;
  const int x = int_tensor_11_10_9(b);
  const int c = b.clone(x);
  return claim("clone-own-memory", kSeed0, {kSeed2},
               "clone() gives a tensor with its source's values, shape and dtype, held in a storage of its own.", b,
               {}, [=](const Trace& t) {
                 const TensorObs &xo = made(t, x), &co = made(t, c);
                 const bool same = co.values == xo.values && co.sizes == xo.sizes && co.dtype == xo.dtype;
                 const bool own = !shares_storage(xo, co);
                 return Verdict{same && own, "clone " + nums(co.values) + " " + dtype_of(co) + " sizes " +
                                                 render_ints(co.sizes) + " (source " + nums(xo.values) + " " +
                                                 dtype_of(xo) + " sizes " + render_ints(xo.sizes) + "), " +
                                                 storage_vs(xo, co)};
               });
}

Claim clone_write_leaves_source() {
  ProgramBuilder b;
  const int x = int_tensor_11_10_9(b);
  const int c = b.clone(x);
  const int e = b.select(c, 0, 0);
  const int w = b.int_scalar(OpId::Fill_, e, 100);
  return claim("clone-write-leaves-source", kSeed0, {}, "Setting an element of a clone leaves the source as it was.",
               b, {}, [=](const Trace& t) {
                 const auto& before = made(t, x).values;
                 const auto& xo = seen(t, w, x);
                 const auto& co = seen(t, w, c);
                 const bool written = !co.values.empty() && co.values[0] == 100;
                 return Verdict{written && xo.values == before,
                                "after clone[0] = 100: source " + nums(xo.values) + ", clone " + nums(co.values)};
               });
}

Claim clone_recorded_in_graph() {
  ProgramBuilder b;
  const int x = b.rand_strided({2, 3}, {3, 1}, 0, DType::Float32, true, 5);
  const int c = b.clone(x);
  return claim("clone-recorded-in-graph", kSeed0, {kSeed2},
               "The clone of a tensor that requires grad is a node of the autograd graph: not a leaf, with a grad_fn.",
               b, {}, [=](const Trace& t) {
                 const TensorObs& co = made(t, c);
                 return Verdict{co.requires_grad && !co.is_leaf && !co.grad_fn.empty(),
                                "requires_grad=" + flag(co.requires_grad) + ", leaf=" + flag(co.is_leaf) +
                                    ", grad_fn " + grad_fn_of(co)};
               });
}

// x = randn(3, 4, 1, 1) in channels_last (a clone to channels_last stands for .to(memory_format=...)), then a
// clone with the default (preserve) format and one with contiguous_format.
struct ChannelsLastProgram {
  ProgramBuilder b;
  int x, cl, kept, dense;
  ChannelsLastProgram() {
    x = b.rand_strided({3, 4, 1, 1}, {4, 1, 1, 1}, 0, DType::Float32, false, 11);
    cl = b.clone(x, MemoryFormat::ChannelsLast);
    kept = b.clone(cl);
    dense = b.clone(cl, MemoryFormat::Contiguous);
  }
};

std::string layout_of(const TensorObs& o) {
  return "channels_last=" + flag(o.channels_last) + ", contiguous=" + flag(o.contiguous) + ", strides " +
         render_ints(o.strides);
}

Claim to_channels_last() {
  ChannelsLastProgram p;
  const int cl = p.cl;
  return claim("to-channels-last", kSeed0, {},
               "A (3, 4, 1, 1) tensor converted to channels_last is contiguous in the channels_last format.", p.b,
               {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, cl);
                 return Verdict{o.channels_last, layout_of(o)};
               });
}

Claim clone_preserve_keeps_channels_last() {
  ChannelsLastProgram p;
  const int kept = p.kept;
  return claim("clone-preserve-keeps-channels-last", kSeed0, {},
               "clone() with the default memory format (preserve) of a channels_last (3, 4, 1, 1) tensor is "
               "channels_last too.",
               p.b, {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, kept);
                 return Verdict{o.channels_last, layout_of(o)};
               });
}

Claim clone_contiguous_format() {
  ChannelsLastProgram p;
  const int dense = p.dense;
  return claim("clone-contiguous-format", kSeed0, {},
               "clone(memory_format=contiguous_format) of a channels_last tensor is contiguous.", p.b, {},
               [=](const Trace& t) {
                 const TensorObs& o = made(t, dense);
                 return Verdict{o.contiguous, layout_of(o)};
               });
}

Claim clone_channels_last_format() {
  ProgramBuilder b;
  const int x = b.rand_strided({2, 3, 4, 5}, {60, 20, 5, 1}, 0, DType::Float32, false, 12);
  const int c = b.clone(x, MemoryFormat::ChannelsLast);
  return claim("clone-channels-last-format", kSeed0, {},
               "clone(memory_format=channels_last) of a contiguous 4-d tensor lays it out channels-last (NHWC).", b,
               {}, [=](const Trace& t) {
                 const TensorObs& o = made(t, c);
                 return Verdict{o.channels_last && !o.contiguous, layout_of(o)};
               });
}

Claim clone_gradient_flows() {
  ProgramBuilder b;
  const int x = b.full({1}, 1.0, true);
  const int c = b.clone(x);
  const int s = b.unary(OpId::Sum, c);
  const int back = b.backward(s);
  return claim("clone-gradient-flows", kSeed0, {kSeed2},
               "Gradients flow back through clone(): for x = [1.] requiring grad, the sum of its clone gives x a "
               "gradient of [1.].",
               b, {}, [=](const Trace& t) {
                 const TensorObs& xo = seen(t, back, x);
                 return Verdict{xo.grad && xo.grad->values == std::vector<double>{1.0}, "x.grad = " + grad_of(xo)};
               });
}

}  // namespace

std::vector<Claim> seed_000_claims() {
  return {clone_own_memory(), clone_write_leaves_source(), clone_recorded_in_graph(), to_channels_last(), clone_preserve_keeps_channels_last(), clone_contiguous_format(), clone_channels_last_format(), clone_gradient_flows()};
}

}  // namespace parity::cli::claims
