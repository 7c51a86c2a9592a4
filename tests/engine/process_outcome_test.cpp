// engine/process_outcome.h: one reading of how a process that ran programs ended, for every caller.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

#include "engine/evaluation_process.h"
#include "engine/process_outcome.h"

namespace parity::engine {
namespace {

using namespace std::chrono_literals;
using Kind = ProcessOutcome::Kind;

ChildEnd ended(ChildEnd::How how, int code = 0) {
  ChildEnd e;
  e.how = how;
  e.code = code;
  return e;
}

TEST(ProcessOutcome, ReadsEveryEnd) {
  EXPECT_EQ(outcome_of(ended(ChildEnd::How::Finished), false, 100ms, 1 << 20).kind, Kind::Answered);
  const ProcessOutcome timeout = outcome_of(ended(ChildEnd::How::Timeout), false, 100ms, 1 << 20);
  EXPECT_EQ(timeout.kind, Kind::Timeout);
  EXPECT_EQ(timeout.describe(), "timeout: no result after 100 ms");
  EXPECT_EQ(outcome_of(ended(ChildEnd::How::Interrupted), false, 100ms, 1 << 20).describe(), "interrupted");
  const ProcessOutcome segv = outcome_of(ended(ChildEnd::How::Signal, SIGSEGV), false, 100ms, 1 << 20);
  EXPECT_EQ(segv.kind, Kind::Crash);
  EXPECT_EQ(segv.signal, "SIGSEGV");
  EXPECT_EQ(segv.what.rfind("killed by signal " + std::to_string(SIGSEGV), 0), 0u) << segv.what;
  const ProcessOutcome exited = outcome_of(ended(ChildEnd::How::Exit, 3), false, 100ms, 1 << 20);
  EXPECT_EQ(exited.kind, Kind::Crash);
  EXPECT_EQ(exited.signal, "");
  EXPECT_EQ(exited.describe(), "crash: exited with status 3");
}

// A failed allocation ends the process with kOutOfMemoryStatus after marking its progress; either says so, even
// when the process was then killed by a signal.
TEST(ProcessOutcome, AFailedAllocationIsOutOfMemory) {
  const ProcessOutcome by_status = outcome_of(ended(ChildEnd::How::Exit, kOutOfMemoryStatus), false, 100ms, 64 << 20);
  EXPECT_EQ(by_status.kind, Kind::OutOfMemory);
  EXPECT_EQ(by_status.describe(), "out_of_memory: an allocation failed under the memory limit of 64 MiB");
  EXPECT_EQ(outcome_of(ended(ChildEnd::How::Signal, SIGKILL), true, 100ms, 64 << 20).kind, Kind::OutOfMemory);
  EXPECT_EQ(outcome_of(ended(ChildEnd::How::Exit, kOutOfMemoryStatus + 1), false, 100ms, 64 << 20).kind, Kind::Crash);
}

TEST(ProcessOutcome, AWaitStatusSaysHowTheProcessDied) {
  const ChildEnd signalled = ChildEnd::died(SIGABRT);  // a wait status of "killed by SIGABRT"
  ASSERT_TRUE(WIFSIGNALED(SIGABRT));
  EXPECT_EQ(signalled.how, ChildEnd::How::Signal);
  EXPECT_EQ(signalled.code, SIGABRT);
  const ChildEnd exited = ChildEnd::died(7 << 8);  // "exited with status 7"
  ASSERT_TRUE(WIFEXITED(7 << 8));
  EXPECT_EQ(exited.how, ChildEnd::How::Exit);
  EXPECT_EQ(exited.code, 7);
}

TEST(ProcessOutcome, AnUnreadableAnswerIsACrash) {
  const ProcessOutcome o = unreadable_answer("unexpected end of input");
  EXPECT_EQ(o.kind, Kind::Crash);
  EXPECT_EQ(o.describe(), "crash: ended without a complete result (unexpected end of input)");
}

}  // namespace
}  // namespace parity::engine
