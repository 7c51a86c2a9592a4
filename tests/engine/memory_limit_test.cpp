// An evaluating process's memory limit holds whichever backend allocates past it: impl's tensor allocator and
// LibTorch's (which reports a failure as a c10::Error) both end the process as out of memory, as operator new
// does, instead of the allocation becoming a step that raised and the process going on near its limit; and a
// drift worker that ends so is out of memory too. And an evaluating process, which lives for many cases, gives back
// the memory of the large blocks it frees.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "engine/evaluate.h"
#include "engine/evaluation_process.h"
#include "engine/isolation.h"
#include "engine/trace_worker.h"
#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"

namespace parity::engine {
namespace {

using namespace std::chrono_literals;

// The address space this process has mapped (/proc/self/statm's first field), or its resident set (the second),
// in bytes.
std::size_t statm_bytes(int field) {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  for (int i = 0; i <= field; ++i) statm >> pages;
  return pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}
std::size_t mapped_bytes() { return statm_bytes(0); }
std::size_t resident_bytes() { return statm_bytes(1); }

// `count` tensors of 8 MiB each. `empty` so that observing them reads no values: the tensors are the only large
// allocations.
program::Program large_tensors(int count = 64) {
  program::ProgramBuilder b;
  program::Attrs a;
  a.sizes = {std::int64_t{1} << 20};
  a.dtype = program::DType::Float64;
  for (int i = 0; i < count; ++i) b.step(program::OpId::Empty, {}, a);
  return b.program();
}

// Runs 512 MiB of tensors on one backend in a child whose limit is what it has mapped plus 256 MiB.
ChildEnd run_limited(bool libtorch, Progress* progress) {
  const program::Program p = large_tensors();
  return run_isolated(
      [&] {
        enter_evaluating_process(mapped_bytes() + (std::size_t{256} << 20), progress);
        auto backend = libtorch ? oracle::make_torch_backend() : impl_backend::make_impl_backend();
        // Reached only when the allocations that failed became steps that raised: say how, for the failure.
        std::string raised;
        for (const auto& s : judge::run(*backend, p).steps)
          if (s.status != judge::StepObs::Status::Ok) raised += s.message.substr(0, 200) + "; ";
        return "finished; steps that raised: " + raised;
      },
      60000ms);
}

void expect_out_of_memory(bool libtorch) {
  if (!kAddressSpaceLimitSupported)
    GTEST_SKIP() << "an AddressSanitizer build caps no address space (engine/evaluation_process.h)";
  static Progress* const progress = map_shared_progress(1);
  progress->reset();
  const ChildEnd end = run_limited(libtorch, progress);
  EXPECT_EQ(end.how, ChildEnd::How::Exit) << end.describe(60000ms) << " " << end.output;
  EXPECT_EQ(end.code, kOutOfMemoryStatus);
  EXPECT_EQ(progress->out_of_memory.load(), 1);
}

TEST(MemoryLimit, ImplAllocatingPastTheLimitEndsTheProcessOutOfMemory) { expect_out_of_memory(false); }

TEST(MemoryLimit, LibTorchAllocatingPastTheLimitEndsTheProcessOutOfMemory) { expect_out_of_memory(true); }

// `parity drift`'s worker (another build's parity, exec'd) past its limit: an out_of_memory answer, as a
// campaign's worker gives, not a crash.
TEST(MemoryLimit, ADriftWorkerPastItsLimitAnswersOutOfMemory) {
  if (!kAddressSpaceLimitSupported)
    GTEST_SKIP() << "an AddressSanitizer build caps no address space (engine/evaluation_process.h)";
  TraceWorker worker(PARITY_CLI_PATH, 60000ms, std::size_t{1} << 30, nullptr);
  worker.send(large_tensors(256));  // 2 GiB of tensors under 1 GiB
  const TraceAnswer answer = worker.receive();
  EXPECT_EQ(answer.process.kind, ProcessOutcome::Kind::OutOfMemory) << answer.failure();
  EXPECT_NE(answer.failure().find("memory limit of 1024 MiB"), std::string::npos) << answer.failure();
}

// The pattern of a worker's cases: one large tensor, then many smaller ones, all freed. glibc's default raises its
// mmap threshold to the large block's size when that is freed, after which the smaller blocks come from the heap
// and stay resident once freed (the soak saw a worker grow by a third in an hour). Each allocation is written
// whole so that it is resident while it lives.
TEST(MemoryLimit, AnEvaluatingProcessGivesBackTheLargeBlocksItFrees) {
  if (!kAddressSpaceLimitSupported)
    GTEST_SKIP() << "AddressSanitizer's allocator keeps freed blocks in quarantine, whatever glibc's policy";
  static Progress* const progress = map_shared_progress(1);
  const ChildEnd end = run_isolated(
      [] {
        enter_evaluating_process(0, progress);
        auto touched = [](std::size_t bytes) {
          void* block = std::malloc(bytes);
          if (block) std::memset(block, 1, bytes);
          asm volatile("" : : "r"(block) : "memory");  // keeps the compiler from eliding the block
          return block;
        };
        std::free(touched(std::size_t{16} << 20));
        const std::size_t before = resident_bytes();
        std::vector<void*> blocks;
        for (int i = 0; i < 12; ++i) blocks.push_back(touched(std::size_t{1} << 20));
        for (void* b : blocks) std::free(b);
        const std::size_t kept = resident_bytes() > before ? resident_bytes() - before : 0;
        return std::to_string(kept >> 10);
      },
      60000ms);
  ASSERT_EQ(end.how, ChildEnd::How::Finished) << end.describe(60000ms) << " " << end.output;
  // 12 MiB were freed; what stays resident is at most a few pages of bookkeeping.
  EXPECT_LT(std::stoul(end.output), 1024u) << "KiB still resident after the blocks were freed";
}

}  // namespace
}  // namespace parity::engine
