// The reference model alone: interrupt_context_level(), each policy's path
// and its effects on the per-CPU state, and the errors it reports when asked
// to go where its path does not lead.
#include <gtest/gtest.h>

#include "oracle/recursion_model.h"

namespace bpfdiff::recursion {
namespace {

TEST(recursionModel, InterruptContextLevelReadsTheRightBits) {
  EXPECT_EQ(InterruptContextLevel(0), 0);
  EXPECT_EQ(InterruptContextLevel(kPreemptOffset), 0);         // preempt_disable()
  EXPECT_EQ(InterruptContextLevel(kSoftirqDisableOffset), 0);  // local_bh_disable(): still task
  EXPECT_EQ(InterruptContextLevel(kSoftirqOffset), 1);         // serving a softirq
  EXPECT_EQ(InterruptContextLevel(kSoftirqOffset + kSoftirqDisableOffset), 1);
  EXPECT_EQ(InterruptContextLevel(kHardirqOffset), 2);
  EXPECT_EQ(InterruptContextLevel(kHardirqOffset + kSoftirqOffset), 2);  // hardirq in softirq
  EXPECT_EQ(InterruptContextLevel(kNmiOffset + kHardirqOffset), 3);      // nmi_enter()
  EXPECT_EQ(InterruptContextLevel(kNmiOffset), 3);
}

// Runs invocation `id` to completion.
void Finish(Model& model, int id) { ASSERT_TRUE(model.Advance(id, Point::kDone)); }

TEST(recursionModel, AtomicCountsEveryContextInOneInt) {
  Model model(Policy::kAtomic, 1, 1);
  const int task = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(task, Point::kInProgram));
  EXPECT_EQ(model.invocation(task).decision, Decision::kRun);
  EXPECT_EQ(model.cpu(0).active[0], 1u);

  model.AddPreemptCount(0, kHardirqOffset);
  const int irq = model.Begin(0, 0);
  EXPECT_EQ(model.invocation(irq).level, 2);
  ASSERT_TRUE(model.Advance(irq, Point::kEntered));
  EXPECT_EQ(model.invocation(irq).decision, Decision::kMiss);
  EXPECT_EQ(model.cpu(0).active[0], 2u);
  Finish(model, irq);
  EXPECT_EQ(model.cpu(0).active[0], 1u);  // the exit always runs
  EXPECT_EQ(model.cpu(0).misses[0], 1u);
  model.AddPreemptCount(0, -static_cast<int64_t>(kHardirqOffset));

  Finish(model, task);
  EXPECT_EQ(model.cpu(0).active[0], 0u);
  EXPECT_EQ(model.cpu(0).misses[0], 1u);
}

TEST(recursionModel, PerContextRunsInAHigherContextAndMissesInTheSame) {
  Model model(Policy::kPerContext, 1, 1);
  const int task = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(task, Point::kInProgram));
  EXPECT_EQ(model.cpu(0).active[0], 0x00000001u);

  model.AddPreemptCount(0, kSoftirqOffset);
  const int softirq = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(softirq, Point::kInProgram));  // its own byte: runs
  EXPECT_EQ(model.cpu(0).active[0], 0x00000101u);
  const int nested = model.Begin(0, 0);  // a trigger in the same context
  ASSERT_TRUE(model.Advance(nested, Point::kEntered));
  EXPECT_EQ(model.invocation(nested).decision, Decision::kMiss);
  EXPECT_EQ(model.cpu(0).active[0], 0x00000201u);
  Finish(model, nested);
  Finish(model, softirq);
  model.AddPreemptCount(0, -static_cast<int64_t>(kSoftirqOffset));
  Finish(model, task);
  EXPECT_EQ(model.cpu(0).active[0], 0u);
  EXPECT_EQ(model.cpu(0).misses[0], 1u);
}

TEST(recursionModel, LandedMissesWhenAnyOtherContextHoldsTheProgram) {
  Model model(Policy::kLanded, 1, 1);
  const int task = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(task, Point::kPreemptDisabled));
  EXPECT_EQ(model.cpu(0).preempt_count, kPreemptOffset);  // preempt_disable()
  ASSERT_TRUE(model.Advance(task, Point::kInProgram));
  EXPECT_EQ(model.cpu(0).preempt_count, 0u);  // preempt_enable()
  EXPECT_EQ(model.invocation(task).decision, Decision::kRun);

  model.AddPreemptCount(0, kNmiOffset + kHardirqOffset);
  const int nmi = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(nmi, Point::kChecked));
  EXPECT_EQ(model.cpu(0).active[0], 0x01000001u);  // u32 != 1 << 24
  EXPECT_EQ(model.invocation(nmi).decision, Decision::kMiss);
  Finish(model, nmi);
  EXPECT_EQ(model.cpu(0).active[0], 0x00000001u);
  EXPECT_EQ(model.cpu(0).preempt_count, kNmiOffset + kHardirqOffset);  // balanced
}

TEST(recursionModel, ANonAtomicStoreWritesTheValueLoadedBefore) {
  // Task A loads active[0] = 0, task B runs the program (1), A stores its
  // stale 0 + 1 and runs too: the lost update, as the code does it.
  Model model(Policy::kPerContext, 1, 1);
  const int a = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(a, Point::kActiveLoaded));
  const int b = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(b, Point::kInProgram));
  EXPECT_EQ(model.cpu(0).active[0], 1u);
  ASSERT_TRUE(model.Advance(a, Point::kInProgram));
  EXPECT_EQ(model.invocation(a).decision, Decision::kRun);
  EXPECT_EQ(model.cpu(0).active[0], 1u);  // one update lost
  Finish(model, a);
  Finish(model, b);
  EXPECT_EQ(model.cpu(0).active[0], 0xffu);  // and the byte underflows
  const int c = model.Begin(0, 0);
  Finish(model, c);
  EXPECT_EQ(model.invocation(c).decision, Decision::kMiss);  // 0xff + 1 = 0 != 1
  EXPECT_EQ(model.cpu(0).active[0], 0xffu);
}

TEST(recursionModel, ReportsAPathTheCodeCannotHaveTaken) {
  Model model(Policy::kAtomic, 1, 1);
  const int first = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(first, Point::kInProgram));
  const int second = model.Begin(0, 0);
  ASSERT_TRUE(model.Advance(second, Point::kEntered));
  const Status ran = model.Advance(second, Point::kInProgram);  // the model says miss
  ASSERT_FALSE(ran);
  EXPECT_NE(ran.message().find("path differs"), std::string::npos) << ran.message();

  Model other(Policy::kPerContext, 1, 1);
  const int inv = other.Begin(0, 0);
  ASSERT_TRUE(other.Advance(inv, Point::kEntered));
  const Status back = other.Advance(inv, Point::kActiveLoaded);  // behind it
  ASSERT_FALSE(back);
  EXPECT_NE(back.message().find("not on the path"), std::string::npos) << back.message();
}

TEST(recursionModel, PointsNotInAPolicyArePassedThroughInOrder) {
  // atomic has no load point: asking for one is an error, not a no-op.
  Model model(Policy::kAtomic, 1, 1);
  const int inv = model.Begin(0, 0);
  EXPECT_FALSE(model.Advance(inv, Point::kActiveLoaded));
}

}  // namespace
}  // namespace bpfdiff::recursion
