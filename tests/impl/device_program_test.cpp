// Programs with cuda steps, run on impl and on LibTorch and compared as a campaign compares them. They need a CUDA
// device on both backends (a build with nvcc and -DPARITY_ORACLE_CUDA=ON on the GPU machine, ci/device_check.sh);
// elsewhere each test says why it skips. They ran on an H100 against the GPU machine's LibTorch 2.11 wheel. Each
// program also runs on the impl-cpu oracle (`--oracle impl-cpu`: impl with its cuda in host memory), which must
// agree with LibTorch-CUDA as impl on the device does: that is what makes it a stand-in for the device.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/device_probe.h"
#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "judge/compare.h"
#include "judge/coverage.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"

namespace parity::judge {

using program::Attrs;
using program::Device;
using program::DType;
using program::OpId;
using program::Program;
using program::ProgramBuilder;
using program::Scalar;

namespace {

// GTEST_SKIP must run in the test body itself to end the test.
#define PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS()                                              \
  if (auto why = engine::probe_cuda().refusal())                                             \
  GTEST_SKIP() << "programs on cuda need a CUDA device on both backends: " << *why

std::string describe(const Divergence& d) {
  return "step " + std::to_string(d.step) + " value " + std::to_string(d.value) + ": " +
         std::string(to_string(d.kind)) + "\n  impl:    " + d.impl + "\n  LibTorch: " + d.oracle;
}

struct Traces {
  Trace impl, torch, impl_cpu;
};

Traces run_all(const Program& p) {
  auto impl = impl_backend::make_impl_backend();
  auto torch = oracle::make_torch_backend();
  auto impl_cpu = impl_backend::make_impl_cpu_oracle();
  return {run(*impl, p), run(*torch, p), run(*impl_cpu, p)};
}

// impl on the device, and the impl-cpu oracle, each against LibTorch on the device.
void expect_agree(const Traces& t) {
  auto d = compare(t.impl, t.torch);
  EXPECT_FALSE(d) << (d ? describe(*d) : "");
  auto j = compare(t.impl_cpu, t.torch);
  EXPECT_FALSE(j) << "the impl-cpu oracle: " << (j ? describe(*j) : "");
}

void expect_agree(const Program& p) { expect_agree(run_all(p)); }

Attrs on(Device d) {
  Attrs a;
  a.device = d;
  return a;
}

TEST(DevicePrograms, FactoriesAndToOnCuda) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  Attrs z = on(Device::CUDA);
  z.sizes = {2, 3};
  int zeros = b.step(OpId::Zeros, {}, z);
  int x = b.rand({2, 3}, DType::Float32, /*requires_grad=*/true);
  int xc = b.step(OpId::ToDevice, {x}, on(Device::CUDA));            // a copy, with ToCopyBackward0
  int same = b.step(OpId::ToDevice, {xc}, on(Device::CUDA));         // already there: xc itself
  b.step(OpId::ToDevice, {xc}, on(Device::CPU));                     // back: a copy
  Attrs like;
  like.like_device = Device::CPU;
  b.step(OpId::ZerosLike, {xc}, like);                               // cuda operand, device='cpu'
  b.step(OpId::OnesLike, {xc});                                      // None: the operand's device
  int s = b.step(OpId::Sum, {b.step(OpId::Add, {xc, zeros})});
  b.step(OpId::Backward, {s});
  b.step(OpId::Grad, {x});                                           // the gradient came back to the CPU
  Traces t = run_all(b.program());
  EXPECT_EQ(t.torch.steps[static_cast<std::size_t>(same)].observed.at(0).same_as, xc);
  expect_agree(t);
  // The backward went through to(): a campaign counts only what its coverage dimensions know.
  const auto& known = backward_through_ops();
  for (const std::string& op : coverage_tags(b.program(), t.torch).backward_through)
    EXPECT_NE(std::find(known.begin(), known.end(), op), known.end()) << op;
}

// PyTorch's device rules: copy_ across devices is allowed; TensorIterator refuses two devices but takes a CPU
// zero-dim tensor as a scalar beside a CUDA one; mm has its own wrapper's check.
TEST(DevicePrograms, DeviceRules) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  int cpu = b.rand({2, 2});
  int cuda = b.step(OpId::ToDevice, {b.rand({2, 2}, DType::Float32, false, 2)}, on(Device::CUDA));
  b.step(OpId::Copy_, {cuda, cpu});
  b.step(OpId::Copy_, {cpu, cuda});
  b.step(OpId::Add, {cuda, cpu});                                    // raises: two devices
  b.step(OpId::Add, {cuda, b.full({}, 2.0)});                        // a CPU scalar tensor: allowed
  b.step(OpId::Mm, {cuda, cpu});                                     // raises: mm's own message
  b.step(OpId::Mm, {cpu, cuda});
  expect_agree(b.program());
}

// What the first campaign on a device (torch 2.11, H100) found, each as the smallest program it shrank to.

// A leaf's first gradient copied into .grad (create_graph, or a gradient the engine cannot steal) stays on the
// leaf's device; a later backward then adds on that device.
TEST(DevicePrograms, GradientsStayOnTheLeafsDevice) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  Attrs r = on(Device::CUDA);
  r.sizes = {2, 1, 1, 1};
  r.strides = {1, 1, 1, 1};
  r.dtype = DType::Float32;
  r.requires_grad = true;
  r.seed = 302298969;
  int x = b.step(OpId::Rand, {}, r);
  int m = b.step(OpId::Mean, {x});
  Attrs cg;
  cg.create_graph = true;
  b.step(OpId::BackwardRoots, {m, m}, cg);
  b.step(OpId::Grad, {x});
  Attrs f = on(Device::CUDA);
  f.sizes = {1, 1};
  f.dtype = DType::Float16;
  f.scalar = {Scalar::Kind::Float, 1.5};
  f.requires_grad = true;
  int h = b.step(OpId::Full, {}, f);
  int relu = b.step(OpId::Relu, {h});
  Attrs keep;
  keep.retain_graph = true;
  b.step(OpId::Backward, {relu}, keep, /*grad_enabled=*/false);
  b.step(OpId::Backward, {relu});
  b.step(OpId::Grad, {h});
  expect_agree(b.program());
}

// A gradient given for a root on another device: a 0-dim one moves there, any other is refused.
TEST(DevicePrograms, AGradientOnAnotherDevice) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  int x = b.step(OpId::ToDevice, {b.rand({2}, DType::Float32, true)}, on(Device::CUDA));
  b.step(OpId::BackwardGrad, {b.step(OpId::Sum, {x}), b.full({}, 2.0)});
  b.step(OpId::BackwardGrad, {b.unary(OpId::Exp, x), b.rand({2})});
  expect_agree(b.program());
}

// The generated CUDA wrappers' device check, in the release's words: matmul reaches mm, bmm, dot and mv's addmv_.
TEST(DevicePrograms, ProductsOnTwoDevices) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  int m = b.rand({2, 2});
  int v = b.rand({2});
  int bm = b.rand({2, 2, 2});
  int cm = b.step(OpId::ToDevice, {m}, on(Device::CUDA));
  int cv = b.step(OpId::ToDevice, {v}, on(Device::CUDA));
  int cbm = b.step(OpId::ToDevice, {bm}, on(Device::CUDA));
  for (auto [x, y] : std::initializer_list<std::pair<int, int>>{
           {cm, m}, {m, cm}, {cm, v}, {m, cv}, {cv, v}, {v, cv}, {cbm, bm}, {bm, cbm}, {cbm, v}, {v, cm}})
    b.step(OpId::Matmul, {x, y});
  b.step(OpId::Mm, {cm, m});
  b.step(OpId::Mm, {m, cm});
  expect_agree(b.program());
}

// Advanced indexing of a cuda tensor, with indices and masks on either device, and index_put_'s device rule.
TEST(DevicePrograms, IndexingOnCuda) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  int x = b.step(OpId::ToDevice, {b.rand({3, 2}, DType::Float32, true)}, on(Device::CUDA));
  int cpu_index = b.arange(3, DType::Int64);
  Attrs a = on(Device::CUDA);
  a.end = 2;
  a.dtype = DType::Int64;
  int cuda_index = b.step(OpId::Arange, {}, a);
  b.step(OpId::Index, {x, cpu_index});
  int picked = b.step(OpId::Index, {x, cuda_index});
  b.step(OpId::Backward, {b.step(OpId::Sum, {picked})});
  b.step(OpId::Grad, {0});
  int cpu_mask = b.rand({3}, DType::Bool);
  b.step(OpId::Index, {x, cpu_mask});
  int y = b.step(OpId::ToDevice, {b.rand({3, 2}, DType::Float32, false, 3)}, on(Device::CUDA));
  Attrs acc;
  acc.accumulate = true;
  b.step(OpId::IndexPut_, {y, cpu_index, b.step(OpId::ToDevice, {b.rand({3, 2}, DType::Float32, false, 4)}, on(Device::CUDA))}, acc);
  b.step(OpId::IndexPut_, {y, cpu_mask, b.step(OpId::ToDevice, {b.full({}, 7.0)}, on(Device::CUDA))});
  b.step(OpId::IndexPut_, {y, cpu_mask, b.full({}, 5.0, false, DType::Float64)});   // a CPU value: masked_fill_
  int cpu_y = b.rand({3, 2}, DType::Float32, false, 5);
  b.step(OpId::IndexPut_, {cpu_y, cpu_index, b.step(OpId::ToDevice, {b.rand({3, 2})}, on(Device::CUDA))});  // raises
  b.step(OpId::Index, {cpu_y, cuda_index});                                                                  // raises
  expect_agree(b.program());
}

// What the second campaign on a device found: masked_fill and index_put_ check in the CUDA kernels' order and
// words, out= results grow on the device, and as_strided's backward reads a device gradient.
TEST(DevicePrograms, CudaKernelsOwnChecks) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  int x = b.step(OpId::ToDevice, {b.rand({2, 2}, DType::Float32, true)}, on(Device::CUDA));
  int mask = b.step(OpId::ToDevice, {b.rand({2, 2}, DType::Bool)}, on(Device::CUDA));
  Attrs half;
  half.scalar = {Scalar::Kind::Float, 0.5};
  b.step(OpId::MaskedFill, {b.rand({2, 2}), mask}, half);           // raises: self on the CPU
  b.step(OpId::MaskedFill, {x, x}, half);                           // raises: a float mask
  b.step(OpId::MaskedFill, {x, b.step(OpId::ToDevice, {b.rand({3}, DType::Bool)}, on(Device::CUDA))}, half);
  int y = b.step(OpId::ToDevice, {b.rand({4})}, on(Device::CUDA));
  Attrs acc;
  acc.accumulate = true;
  b.step(OpId::IndexPut_, {y, b.arange(4, DType::Int64), b.rand({4})}, acc);  // raises: values on the CPU
  b.step(OpId::IndexPut_, {y, y, y}, acc);                                     // raises: overlap, before the dtype
  b.step(OpId::AddOut, {b.step(OpId::ToDevice, {b.rand({0})}, on(Device::CUDA)), x, x});
  Attrs view;
  view.sizes = {1, 1};
  view.strides = {1, 1};
  b.step(OpId::Backward, {b.step(OpId::Sum, {b.step(OpId::AsStrided, {x}, view)})});
  b.step(OpId::Grad, {0});
  expect_agree(b.program());
}

// What the third campaign found: the CUDA kernels' own dtypes and names (cuBLAS takes no integers, abs takes
// bool), addcmul's CPU scalars, and the layout of a result whose input TensorIterator converts only on the CPU.
TEST(DevicePrograms, CudaKernelsDtypes) {
  PARITY_REQUIRE_CUDA_ON_BOTH_BACKENDS();
  ProgramBuilder b;
  int x = b.step(OpId::ToDevice, {b.rand({2, 2})}, on(Device::CUDA));
  int ints = b.step(OpId::ToDevice, {b.rand({2, 2}, DType::Int64)}, on(Device::CUDA));
  int bools = b.step(OpId::ToDevice, {b.rand({3, 2}, DType::Bool)}, on(Device::CUDA));
  b.step(OpId::Mm, {ints, ints});
  b.step(OpId::Matmul, {ints, b.step(OpId::Select, {ints}, [] { Attrs a; a.dim = 0; return a; }())});
  b.step(OpId::Abs, {bools});
  Attrs both;
  both.min = Scalar{Scalar::Kind::Bool, 0};
  both.max = Scalar{Scalar::Kind::Bool, 1};
  b.step(OpId::Clamp, {bools}, both);
  b.step(OpId::Addcmul, {bools, bools, bools});
  b.step(OpId::Addcmul, {x, b.full({}, 2.0), x});
  b.step(OpId::Addcmul, {x, x, b.full({}, 2.0)});
  Attrs arange = on(Device::CUDA);
  arange.end = 3;
  arange.dtype = DType::Bool;
  b.step(OpId::Arange, {}, arange);
  Attrs strided = on(Device::CUDA);
  strided.sizes = {1, 1, 3};
  strided.strides = {16, 1, 6};
  strided.dtype = DType::Bool;
  strided.seed = 2021690286;
  const int odd = b.step(OpId::Rand, {}, strided);
  b.unary(OpId::Sigmoid, odd);   // converted by the kernel: the input's own layout decides the result's
  Attrs half;
  half.min = Scalar{Scalar::Kind::Float, 0.5};
  b.step(OpId::Clamp, {odd}, half);  // converted by clamp's meta with .to(): the copy's layout decides
  expect_agree(b.program());
}

}  // namespace
}  // namespace parity::judge
