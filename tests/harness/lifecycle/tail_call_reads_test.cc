// What a tail call may have read while its prog_array entry changed, the
// values the interpreter replays, and the names of what stays not
// comparable.
#include <gtest/gtest.h>

#include "harness/lifecycle/not_comparable.h"
#include "harness/lifecycle/tail_call_reads.h"

namespace bpfdiff::lifecycle {
namespace {

constexpr uint64_t kSite = 0x1000'0100;  // the tail call's first instruction
constexpr uint64_t kP = 0x5000, kQ = 0x5040, kR = 0x5080;  // program objects

TEST(TailCallReads, ValuesOfEveryOperationThatRanTheTailCall) {
  TailCallReads reads;
  reads.BlockInside(kSite, kSite, 1, kP);
  reads.Stopped(kSite + 8);  // two instructions ran
  reads.BlockInside(kSite, kSite + 8, 1, kQ);  // resumed after an update
  reads.BlockInside(kSite, kSite + 20, 1, kQ);
  reads.BlockOutside(kQ);
  ASSERT_EQ(reads.reads().size(), 1u);
  const TailCallRead& read = reads.reads().front();
  EXPECT_EQ(read.site, kSite);
  EXPECT_EQ(read.slot, 1u);
  EXPECT_EQ(read.held, (std::vector<uint64_t>{kP, kQ}));
  EXPECT_EQ(read.reached, kQ);
}

TEST(TailCallReads, ABlockStoppedInFrontOfDoesNotCount) {
  TailCallReads reads;
  // The block's hook ran, then the machine stopped before its first
  // instruction; the entry changed; the call resumed there.
  reads.BlockInside(kSite, kSite + 12, 0, kP);
  reads.Stopped(kSite + 12);
  reads.BlockInside(kSite, kSite + 12, 0, kQ);
  reads.BlockOutside(kQ);
  ASSERT_EQ(reads.reads().size(), 1u);
  EXPECT_EQ(reads.reads().front().held, (std::vector<uint64_t>{kQ}));
}

TEST(TailCallReads, FallingThroughIntoTheNextTailCallClosesTheFirst) {
  TailCallReads reads;
  reads.BlockInside(kSite, kSite, 0, 0);
  reads.BlockInside(kSite + 0x40, kSite + 0x40, 2, kR);  // the next instruction is a tail call too
  reads.Ended();
  ASSERT_EQ(reads.reads().size(), 2u);
  EXPECT_EQ(reads.reads()[0].held, (std::vector<uint64_t>{0}));
  EXPECT_EQ(reads.reads()[0].reached, std::nullopt);
  EXPECT_EQ(reads.reads()[1].slot, 2u);
  EXPECT_EQ(reads.reads()[1].held, (std::vector<uint64_t>{kR}));
  EXPECT_EQ(reads.reads()[1].reached, std::nullopt);
}

TEST(TailCallReads, ATailCallOfNoWorldEntryHoldsNothing) {
  TailCallReads reads;
  reads.BlockInside(kSite, kSite, std::nullopt, 0);
  reads.BlockOutside(std::nullopt);
  ASSERT_EQ(reads.reads().size(), 1u);
  EXPECT_FALSE(reads.reads().front().slot);
  EXPECT_TRUE(reads.reads().front().held.empty());
  EXPECT_TRUE(ReplaySlots(reads.reads())->empty());
}

TEST(ReplaySlots, FollowsTheValueReachedWhenTheEntryHeldIt) {
  const std::vector<TailCallRead> reads = {{kSite, 0, {kP, kQ}, kP}, {kSite + 0x40, 1, {kQ, 0}, std::nullopt}};
  auto slots = ReplaySlots(reads);
  ASSERT_TRUE(slots) << slots.message();
  EXPECT_EQ(*slots, (std::map<uint32_t, uint64_t>{{0, kP}, {1, 0}}));
}

TEST(ReplaySlots, KeepsTheEntryWhenTheCallWentWhereItNeverPointed) {
  // Into R, which entry 0 never named; fell through while entry 1 was
  // never empty (a bound of the tail call, or a JIT bug: the interpreter
  // decides which).
  const std::vector<TailCallRead> reads = {{kSite, 0, {kP, kQ}, kR}, {kSite + 0x40, 1, {kQ}, std::nullopt}};
  auto slots = ReplaySlots(reads);
  ASSERT_TRUE(slots) << slots.message();
  EXPECT_EQ(*slots, (std::map<uint32_t, uint64_t>{{0, kQ}, {1, kQ}}));
}

TEST(ReplaySlots, OneEntryReadAsTwoValuesCannotBeReplayed) {
  const std::vector<TailCallRead> same = {{kSite, 0, {kP}, kP}, {kSite, 0, {kP}, kP}};
  EXPECT_TRUE(ReplaySlots(same));
  const std::vector<TailCallRead> two = {{kSite, 0, {kP}, kP}, {kSite, 0, {kP, kQ}, kQ}};
  auto slots = ReplaySlots(two);
  ASSERT_FALSE(slots);
  EXPECT_NE(slots.message().find("slot 0"), std::string::npos) << slots.message();
}

TEST(NotComparableReason, NamesEachOfComparesReasons) {
  Outcome exit;
  exit.end = EndKind::kExit;
  Outcome error;
  error.end = EndKind::kHarnessError;
  Outcome budget;
  budget.end = EndKind::kBudget;
  Outcome partial;
  partial.end = EndKind::kFault;
  partial.fault = FaultInfo{3, 0, 0x1000, AccessKind::kWrite, true};
  struct Case {
    const Outcome& expected;
    const Outcome& actual;
    std::string_view reason;
  };
  for (const Case& c : {Case{error, exit, kInterpreterError}, Case{exit, error, kJitHarnessError},
                        Case{budget, exit, kInterpreterBudget}, Case{partial, partial, kPartialStoreFault}}) {
    const Verdict verdict = Compare(c.expected, c.actual);
    ASSERT_EQ(verdict.kind, Verdict::Kind::kNotComparable) << c.reason;
    EXPECT_EQ(NotComparableReason(c.expected, c.actual, verdict), c.reason);
  }
  EXPECT_EQ(NotComparableReason(exit, exit, Verdict{Verdict::Kind::kNotComparable, "", "new"}), kOtherVerdict);
}

}  // namespace
}  // namespace bpfdiff::lifecycle
