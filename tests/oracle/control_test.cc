// lddw, local calls, helper calls, unwind, callx, tail calls, the
// instruction budget and the legacy packet loads.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

// --- lddw ---

TEST(oracle_control, LddwLoadsAll64Bits) {
  EXPECT_TRUE(ExitsWith(RunAsm("lddw %r0, 0x1122334455667788\nexit"), 0x1122334455667788));
  EXPECT_TRUE(ExitsWith(RunAsm("lddw %r0, 0x80000000ffffffff\nexit"), 0x80000000ffffffff));
  // The low slot's imm is not sign-extended into the high half.
  EXPECT_TRUE(ExitsWith(RunAsm("lddw %r0, 0x00000000ffffffff\nexit"), 0xffffffff));
}

TEST(oracle_control, LddwMapFdGivesTheMapObjectAddress) {
  Case c;
  c.maps = {ArrayMap(3, 8, 4), ArrayMap(7, 16, 2)};
  // GuestMap objects are 0x400 apart from 0x03000000, in declaration order.
  c.programs = {"lddw %r0, map:7\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 0x3000400));
  c.programs = {"lddw %r0, map:3\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 0x3000000));
  // The object's fields: u32 type, key_size, value_size, max_entries; u64 values.
  c.programs = {"lddw %r1, map:7\nldxw %r0, [%r1+8]\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 16));
  c.programs = {"lddw %r1, map:7\nldxw %r0, [%r1+12]\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 2));
  c.programs = {"lddw %r1, map:7\nldxdw %r0, [%r1+16]\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 0x2000040));  // after map 3's 32 bytes, 64-aligned
}

TEST(oracle_control, LddwMapValueGivesTheValueAddress) {
  Case c;
  c.maps = {ArrayMap(3, 8, 4, Bytes64({0x11, 0x22, 0x33, 0x44})), ArrayMap(7, 16, 2)};
  c.programs = {"lddw %r0, map_value:3\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 0x2000000));
  c.programs = {"lddw %r0, map_value:7+24\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 0x2000040 + 24));
  c.programs = {"lddw %r1, map_value:3+16\nldxdw %r0, [%r1]\nexit"};
  EXPECT_TRUE(ExitsWith(RunCase(c), 0x33));
}

// --- Local calls ---

TEST(oracle_control, LocalCallGetsANewFramePointer) {
  const Outcome outcome = RunAsm(
      "call local f\n"
      "exit\n"
      "f:\n"
      "mov %r0, %r10\n"
      "exit");
  EXPECT_TRUE(ExitsWith(outcome, FramePointer(1)));
  EXPECT_EQ(FramePointer(1), 0x400fd60u);  // 0x04010000 - 80 - 592
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, %r10\nexit"), 0x400ffb0));
}

TEST(oracle_control, LocalCallRestoresR6ToR9AndReturnsR0) {
  const Outcome outcome = RunAsm(
      "mov %r6, 6\n"
      "mov %r7, 7\n"
      "mov %r8, 8\n"
      "mov %r9, 9\n"
      "mov %r1, 100\n"
      "call local f\n"
      // r0 = f's result + r6 + r7 + r8 + r9 + (r10 is the caller's again)
      "add %r0, %r6\n"
      "add %r0, %r7\n"
      "add %r0, %r8\n"
      "add %r0, %r9\n"
      "mov %r2, %r10\n"
      "sub %r2, 0x400ffb0\n"
      "add %r0, %r2\n"
      "exit\n"
      "f:\n"
      "mov %r6, 1000\n"
      "mov %r7, 1000\n"
      "mov %r8, 1000\n"
      "mov %r9, 1000\n"
      "mov %r0, %r1\n"  // arguments arrive in r1..r5
      "add %r0, 1\n"
      "exit");
  EXPECT_TRUE(ExitsWith(outcome, 101 + 6 + 7 + 8 + 9));
}

TEST(oracle_control, EachCallDepthHasItsOwnStackFrame) {
  const Outcome outcome = RunAsm(
      "stdw [%r10-8], 1\n"
      "call local f\n"
      "ldxdw %r0, [%r10-8]\n"  // the caller's slot is untouched
      "exit\n"
      "f:\n"
      "stdw [%r10-8], 2\n"
      "stdw [%r10-512], 3\n"
      "mov %r0, 0\n"
      "exit");
  ASSERT_TRUE(ExitsWith(outcome, 1));
  EXPECT_EQ(Read64(outcome.memory.stack, StackIndex(0, -8)), 1u);
  EXPECT_EQ(Read64(outcome.memory.stack, StackIndex(1, -8)), 2u);
  EXPECT_EQ(Read64(outcome.memory.stack, StackIndex(1, -512)), 3u);
}

TEST(oracle_control, EightFramesDeep) {
  // main -> f1 -> ... -> f7: 8 frames (MAX_CALL_FRAMES). Each frame stores
  // its depth at r10-8; the deepest returns its r10.
  std::string text = "stdw [%r10-8], 0\ncall local f1\nexit\n";
  for (int d = 1; d <= 7; ++d) {
    text += fmt::format("f{}:\nstdw [%r10-8], {}\n", d, d);
    text += d < 7 ? fmt::format("call local f{}\n", d + 1) : "mov %r0, %r10\n";
    text += "exit\n";
  }
  const Outcome outcome = RunAsm(text);
  ASSERT_TRUE(ExitsWith(outcome, 0x400ef80));  // 0x0400ffb0 - 7 * 592
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(Read64(outcome.memory.stack, StackIndex(d, -8)), static_cast<uint64_t>(d)) << "frame " << d;
  }
}

// --- Helper calls ---

TEST(oracle_control, HelperCallIsTracedWithArgumentsAndResult) {
  // Helper 5 (bpf_conformance's unwind) returns r1 when r1 != 0.
  const Outcome outcome = RunAsm(
      "mov %r1, 0x11\nmov %r2, 0x22\nmov %r3, 0x33\nmov %r4, 0x44\nmov %r5, 0x55\n"
      "call 5\n"
      "add %r0, 1\n"
      "exit");
  ASSERT_TRUE(ExitsWith(outcome, 0x12));
  ASSERT_EQ(outcome.helper_calls.size(), 1u);
  // Unwind takes one argument; the other registers are not part of the call.
  EXPECT_EQ(outcome.helper_calls[0], (HelperCall{5, {0x11, 0, 0, 0, 0}, 0x11}));
}

TEST(oracle_control, MapLookupFromAProgram) {
  Case c;
  c.maps = {ArrayMap(3, 8, 4, Bytes64({0x10, 0x42}))};
  c.programs = {
      "lddw %r1, map:3\n"
      "stw [%r10-4], 1\n"
      "mov %r2, %r10\n"
      "add %r2, -4\n"
      "call 1\n"
      "ldxdw %r0, [%r0]\n"
      "exit"};
  const Outcome outcome = RunCase(c);
  ASSERT_TRUE(ExitsWith(outcome, 0x42));
  ASSERT_EQ(outcome.helper_calls.size(), 1u);
  // r3..r5 still hold their initial 0; the element is at values + 1 * 8.
  EXPECT_EQ(outcome.helper_calls[0],
            (HelperCall{1, {0x3000000, FramePointer(0) - 4, 0, 0, 0}, 0x2000008}));
}

TEST(oracle_control, UnwindStopsTheProgramWithR0Zero) {
  const Outcome outcome = RunAsm("mov %r0, 9\nmov %r1, 0\ncall 5\nmov %r0, 7\nexit");
  EXPECT_EQ(outcome.end, EndKind::kUnwind) << outcome.Describe();
  EXPECT_EQ(outcome.r0, 0u);
  ASSERT_EQ(outcome.helper_calls.size(), 1u);
  EXPECT_EQ(outcome.helper_calls[0].id, 5);
  EXPECT_EQ(outcome.helper_calls[0].ret, 0u);
}

TEST(oracle_control, UnwindFromASubprogramStopsEverything) {
  const Outcome outcome = RunAsm(
      "call local f\n"
      "mov %r0, 7\n"
      "exit\n"
      "f:\n"
      "mov %r1, 0\n"
      "call 5\n"
      "mov %r0, 8\n"
      "exit");
  EXPECT_EQ(outcome.end, EndKind::kUnwind) << outcome.Describe();
  EXPECT_EQ(outcome.r0, 0u);
}

TEST(oracle_control, CallxTakesTheHelperIdFromTheRegister) {
  // get_prandom_u32 (7): the first value of the xorshift64 sequence.
  const Outcome outcome = RunAsm("mov %r2, 7\ncall %r2\nexit");
  ASSERT_TRUE(ExitsWith(outcome, 0xeaa8e3e7));
  ASSERT_EQ(outcome.helper_calls.size(), 1u);
  EXPECT_EQ(outcome.helper_calls[0].id, 7);
  // get_smp_processor_id (8) via r9.
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r9, 8\nmov %r0, 5\ncall %r9\nexit"), 0));
}

TEST(oracle_control, CallxBeyondTheHelperIdsIsAHelperError) {
  const Outcome outcome = RunAsm("mov %r2, 256\ncall %r2\nmov %r0, 0\nexit");
  EXPECT_EQ(outcome.end, EndKind::kHelperError) << outcome.Describe();
  EXPECT_EQ(outcome.message, "callx target is not a helper id");
  EXPECT_TRUE(outcome.helper_calls.empty());
  const Outcome huge = RunAsm("lddw %r2, 0x100000007\ncall %r2\nmov %r0, 0\nexit");
  EXPECT_EQ(huge.end, EndKind::kHelperError) << huge.Describe();
}

TEST(oracle_control, CallxOfAnUnknownHelperIdIsAHelperError) {
  const Outcome outcome = RunAsm("mov %r2, 99\ncall %r2\nmov %r0, 0\nexit");
  EXPECT_EQ(outcome.end, EndKind::kHelperError) << outcome.Describe();
  EXPECT_EQ(outcome.message, "call to unknown helper 99");
}

// --- Tail calls ---

// A prog_array (fd 5) and programs; program 0 tail-calls slot `index`.
Case TailCallCase(std::vector<int32_t> slots, uint32_t entries, std::string index) {
  Case c;
  c.maps = {ProgArray(5, entries, std::move(slots))};
  c.programs = {
      "lddw %r2, map:5\nmov %r3, " + index + "\ntail_call\nmov %r0, 1\nexit",
      "mov %r0, 42\nexit",
      "mov %r0, 43\nexit",
  };
  return c;
}

TEST(oracle_control, TailCallRunsTheTargetProgram) {
  const Outcome one = RunCase(TailCallCase({-1, 1, 2}, 3, "1"));
  ASSERT_TRUE(ExitsWith(one, 42));
  EXPECT_EQ(one.tail_calls, (std::vector<uint32_t>{1}));
  const Outcome two = RunCase(TailCallCase({-1, 1, 2}, 3, "2"));
  ASSERT_TRUE(ExitsWith(two, 43));
  EXPECT_EQ(two.tail_calls, (std::vector<uint32_t>{2}));
}

TEST(oracle_control, TailCallToAnEmptySlotFallsThrough) {
  const Outcome outcome = RunCase(TailCallCase({-1, 1, 2}, 3, "0"));
  ASSERT_TRUE(ExitsWith(outcome, 1));
  EXPECT_TRUE(outcome.tail_calls.empty());
  // Slots beyond the listed programs are empty too.
  EXPECT_TRUE(ExitsWith(RunCase(TailCallCase({1}, 3, "2")), 1));
}

TEST(oracle_control, TailCallOutOfRangeFallsThrough) {
  EXPECT_TRUE(ExitsWith(RunCase(TailCallCase({1, 2}, 2, "2")), 1));
  EXPECT_TRUE(ExitsWith(RunCase(TailCallCase({1, 2}, 2, "-1")), 1));  // 0xffffffff
}

TEST(oracle_control, TailCallIndexIsThirtyTwoBits) {
  // bpf_tail_call's index is a u32: the upper half of r3 is ignored.
  Case c = TailCallCase({-1, 1, 2}, 3, "0");
  c.programs[0] = "lddw %r2, map:5\nlddw %r3, 0x100000002\ntail_call\nmov %r0, 1\nexit";
  EXPECT_TRUE(ExitsWith(RunCase(c), 43));
}

TEST(oracle_control, AtMost33TailCalls) {
  // Program 1 counts its runs in an array map value and tail-calls itself.
  // MAX_TAIL_CALL_CNT = 33: 33 tail calls succeed, the 34th falls through.
  Case c;
  c.maps = {ProgArray(5, 1, {1}), ArrayMap(1, 8, 1)};
  c.programs = {
      "lddw %r2, map:5\nmov %r3, 0\ntail_call\nmov %r0, -1\nexit",
      "lddw %r6, map_value:1\n"
      "ldxdw %r0, [%r6]\n"
      "add %r0, 1\n"
      "stxdw [%r6], %r0\n"
      "lddw %r2, map:5\n"
      "mov %r3, 0\n"
      "tail_call\n"
      "ldxdw %r0, [%r6]\n"
      "exit",
  };
  const Outcome outcome = RunCase(c);
  ASSERT_TRUE(ExitsWith(outcome, 33));
  EXPECT_EQ(outcome.tail_calls, std::vector<uint32_t>(33, 1));
  EXPECT_EQ(Read64(outcome.memory.map_values, 0), 33u);
}

TEST(oracle_control, TailCallsToEmptySlotsCountTowardsTheLimit) {
  // As the kernel's interpreter (and arm64 JIT): tail_call_cnt++ comes
  // before the NULL check of the slot. 33 attempts on an empty slot leave no
  // tail call for the populated one.
  Case c;
  c.maps = {ProgArray(5, 2, {-1, 1})};
  c.programs = {
      "  mov %r7, %r1\n"
      "  mov %r6, 0\n"
      "loop:\n"
      "  mov %r1, %r7\n"
      "  lddw %r2, map:5\n"
      "  mov %r3, 0\n"
      "  tail_call\n"
      "  add %r6, 1\n"
      "  jlt %r6, 33, loop\n"
      "  mov %r1, %r7\n"
      "  lddw %r2, map:5\n"
      "  mov %r3, 1\n"
      "  tail_call\n"
      "  mov %r0, 1\n"
      "  exit",
      "mov %r0, 2\nexit",
  };
  const Outcome outcome = RunCase(c);
  EXPECT_TRUE(ExitsWith(outcome, 1));
  EXPECT_TRUE(outcome.tail_calls.empty());
  // With 32 failed attempts, one tail call remains.
  c.programs[0].replace(c.programs[0].find("33"), 2, "32");
  EXPECT_TRUE(ExitsWith(RunCase(c), 2));
}

// Every bpf_tail_call is accounted for, taken or not, with why: what the
// fuzzers' tail-call state coverage counts (fuzz/stats/tail_call_states.h).
TEST(oracle_control, EveryTailCallAttemptIsRecordedWithItsResult) {
  using Result = TailCallAttempt::Result;
  const Outcome taken = RunCase(TailCallCase({-1, 1, 2}, 3, "1"));
  ASSERT_EQ(taken.tail_call_attempts.size(), 1u);
  EXPECT_EQ(taken.tail_call_attempts[0], (TailCallAttempt{1, 3, false, Result::kTaken}));
  const Outcome empty = RunCase(TailCallCase({-1, 1, 2}, 3, "0"));
  ASSERT_EQ(empty.tail_call_attempts.size(), 1u);
  EXPECT_EQ(empty.tail_call_attempts[0], (TailCallAttempt{0, 3, false, Result::kEmptySlot}));
  const Outcome at = RunCase(TailCallCase({1, 2}, 2, "2"));
  ASSERT_EQ(at.tail_call_attempts.size(), 1u);
  EXPECT_EQ(at.tail_call_attempts[0], (TailCallAttempt{2, 2, false, Result::kIndexOutOfRange}));
  Case upper = TailCallCase({-1, 1, 2}, 3, "0");
  upper.programs[0] = "lddw %r2, map:5\nlddw %r3, 0x100000002\ntail_call\nmov %r0, 1\nexit";
  const Outcome garbage = RunCase(upper);
  ASSERT_EQ(garbage.tail_call_attempts.size(), 1u);
  EXPECT_EQ(garbage.tail_call_attempts[0], (TailCallAttempt{2, 3, true, Result::kTaken}));
}

TEST(oracle_control, TheAttemptAfterThe33rdTailCallIsRefusedAtTheLimit) {
  Case c;
  c.maps = {ProgArray(5, 1, {1})};
  c.programs = {"lddw %r2, map:5\nmov %r3, 0\ntail_call\nmov %r0, -1\nexit",
                "lddw %r2, map:5\nmov %r3, 0\ntail_call\nmov %r0, 7\nexit"};
  const Outcome outcome = RunCase(c);
  ASSERT_TRUE(ExitsWith(outcome, 7));
  ASSERT_EQ(outcome.tail_call_attempts.size(), 34u);
  EXPECT_EQ(outcome.tail_call_attempts[32].result, TailCallAttempt::Result::kTaken);
  EXPECT_EQ(outcome.tail_call_attempts[33].result, TailCallAttempt::Result::kCountAtLimit);
}

TEST(oracle_control, FaultInATailCalledProgramNamesThatProgram) {
  Case c = TailCallCase({1}, 1, "0");
  c.programs[1] = "mov %r0, 0\nmov %r2, 0\nldxw %r0, [%r2+4]\nexit";
  const Outcome outcome = RunCase(c);
  EXPECT_TRUE(FaultsAt(outcome, 2, 4, AccessKind::kRead, /*program=*/1));
}

TEST(oracle_control, TailCallKeepsTheContextInR1) {
  Case c = TailCallCase({1}, 1, "0");
  c.memory = {0x5a, 0, 0, 0};
  c.programs[1] = "ldxb %r0, [%r1]\nexit";
  EXPECT_TRUE(ExitsWith(RunCase(c), 0x5a));
}

// --- Budget ---

TEST(oracle_control, BudgetCountsInstructions) {
  Case c;
  c.programs = {"mov %r0, 1\nexit"};
  c.budget = 2;
  EXPECT_TRUE(ExitsWith(RunCase(c), 1));
  c.budget = 1;
  const Outcome outcome = RunCase(c);
  EXPECT_EQ(outcome.end, EndKind::kBudget) << outcome.Describe();
}

TEST(oracle_control, InfiniteLoopEndsWithBudgetExhausted) {
  Case c;
  c.programs = {"mov %r0, 0\nloop: add %r0, 1\nja loop"};
  c.budget = 1000;
  const Outcome outcome = RunCase(c);
  EXPECT_EQ(outcome.end, EndKind::kBudget) << outcome.Describe();
  EXPECT_EQ(outcome.message, "1000 instructions");
}

// --- Legacy packet access ---

TEST(oracle_control, LdAbsLoadsBigEndian) {
  const std::vector<uint8_t> packet = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66};
  EXPECT_TRUE(ExitsWith(RunAsm("ldabsw 1\nexit", packet), 0x22334455));
  EXPECT_TRUE(ExitsWith(RunAsm("ldabsh 4\nexit", packet), 0x5566));
  EXPECT_TRUE(ExitsWith(RunAsm("ldabsb 5\nexit", packet), 0x66));
  EXPECT_TRUE(ExitsWith(RunAsm("ldabsw 2\nexit", packet), 0x33445566));  // the last whole word
}

TEST(oracle_control, LdIndAddsTheRegister) {
  const std::vector<uint8_t> packet = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66};
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r3, 2\nldindh %r3, 1\nexit", packet), 0x4455));
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r3, 4\nldindb %r3, -1\nexit", packet), 0x44));
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r3, 1\nldindw %r3, 0\nexit", packet), 0x22334455));
}

TEST(oracle_control, OutOfBoundsPacketLoadsExitWithZero) {
  const std::vector<uint8_t> packet = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66};
  EXPECT_TRUE(ExitsWith(RunAsm("ldabsw 3\nmov %r0, 7\nexit", packet), 0));
  EXPECT_TRUE(ExitsWith(RunAsm("ldabsb 6\nmov %r0, 7\nexit", packet), 0));
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r3, 10\nldindh %r3, -5\nmov %r0, 7\nexit", packet), 0));
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r3, 0\nldindb %r3, -1\nmov %r0, 7\nexit", packet), 0));
  EXPECT_TRUE(ExitsWith(RunAsm("ldabsb 0\nmov %r0, 7\nexit"), 0));  // no packet at all
}

}  // namespace
}  // namespace bpfdiff::testing
