// A session frees what its program made when it ends, autograd's reference cycles included: a persistent
// worker runs thousands of programs, each in a session of its own, and must not keep what any of them made. The
// heap's size says so here; in the sanitizer build (ci/sanitize.sh), where ASan's allocator leaves glibc's heap
// untouched, LeakSanitizer says so at exit.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdint>

#include "impl/storage.h"
#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"

namespace parity {
namespace {

using program::Attrs;
using program::DType;
using program::OpId;

judge::Backend& torch_backend() {
  static auto b = oracle::make_torch_backend();
  return *b;
}
judge::Backend& impl_backend() {
  static auto b = impl_backend::make_impl_backend();
  return *b;
}

// x.grad = y; y.grad = x: each holds the other.
program::Program gradients_of_each_other() {
  program::ProgramBuilder b;
  const int x = b.rand({2}, DType::Float32);
  const int y = b.rand({2}, DType::Float32, false, 2);
  b.step(OpId::SetGrad, {x, y});
  b.step(OpId::SetGrad, {y, x});
  return b.program();
}

// y.mul_(y) on a tensor with history: the node saves y (as `other`) and becomes y's grad_fn.
program::Program saved_by_its_own_node() {
  program::ProgramBuilder b;
  const int x = b.rand({2}, DType::Float32, true);
  const int y = b.unary(OpId::Neg, x);
  b.step(OpId::Mul_, {y, y});
  return b.program();
}

// backward(create_graph=True): LibTorch's leaf gets a gradient whose history ends in the leaf's AccumulateGrad,
// which holds the leaf (PyTorch's docs warn of this cycle; Python's collector frees it).
program::Program gradient_with_history() {
  program::ProgramBuilder b;
  const int x = b.rand({2}, DType::Float32, true);
  const int loss = b.unary(OpId::Sum, b.unary(OpId::Exp, x));
  Attrs recorded;
  recorded.retain_graph = recorded.create_graph = true;
  b.step(OpId::Backward, {loss}, recorded);
  return b.program();
}

std::int64_t heap_in_use() { return static_cast<std::int64_t>(::mallinfo2().uordblks); }

// Runs the program many times, each in a session of its own, after a first run that makes what the backend makes
// once for good. A cycle left behind by each run costs at least a tensor each time, over a MiB in all; the margin
// is for the allocator's own caches.
void expect_nothing_kept(judge::Backend& backend, const program::Program& p) {
  constexpr int kRuns = 2000;
  judge::run(backend, p);
  const std::int64_t before = heap_in_use();
  for (int i = 0; i < kRuns; ++i) judge::run(backend, p);
  EXPECT_LT(heap_in_use() - before, 64 * 1024) << backend.name() << ": the heap grew over " << kRuns << " runs";
}

TEST(SessionEnd, LibTorchTensorsThatAreEachOthersGradientAreFreed) {
  expect_nothing_kept(torch_backend(), gradients_of_each_other());
}

TEST(SessionEnd, ImplTensorsThatAreEachOthersGradientAreFreed) {
  expect_nothing_kept(impl_backend(), gradients_of_each_other());
}

TEST(SessionEnd, LibTorchTensorSavedByItsOwnNodeIsFreed) {
  expect_nothing_kept(torch_backend(), saved_by_its_own_node());
}

TEST(SessionEnd, ImplTensorSavedByItsOwnNodeIsFreed) { expect_nothing_kept(impl_backend(), saved_by_its_own_node()); }

TEST(SessionEnd, LibTorchGradientWithHistoryIsFreed) { expect_nothing_kept(torch_backend(), gradient_with_history()); }

TEST(SessionEnd, ImplGradientWithHistoryIsFreed) { expect_nothing_kept(impl_backend(), gradient_with_history()); }

// impl's CPU allocator caches freed large blocks for reuse; the oracle's session that runs next in the evaluating
// process, under the same address-space cap, must not find them taken.
TEST(SessionEnd, ImplGivesBackTheBlocksItsAllocatorCached) {
  program::ProgramBuilder b;
  const int x = b.rand({1 << 20}, DType::Float32);  // 4 MiB: a cached size, three of them freed at the end
  b.unary(OpId::Neg, b.unary(OpId::Neg, x));
  auto session = impl_backend().start();
  const auto& steps = b.program().steps;
  for (std::size_t i = 0; i < steps.size(); ++i) session->execute(steps[i], static_cast<int>(i));
  session.reset();
  EXPECT_EQ(impl::cpu_cached_bytes(), 0u);
}

}  // namespace
}  // namespace parity
