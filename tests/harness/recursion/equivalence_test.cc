// The equivalence claims on the report's schedules and on random ones.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/recursion/compare_report.h"
#include "harness/recursion/percpu_layout.h"
#include "harness/recursion/schedule_generator.h"
#include "tests/harness/recursion/recursion_test_support.h"

namespace bpfdiff::recursion {
namespace {

RunResult RunPolicy(const Schedule& s, Policy p, jit::AtomicLowering l = jit::AtomicLowering::kLse) {
  auto run = RunSchedule(TestSandbox(), s, MakeConfig(p, l));
  EXPECT_TRUE(run) << run.message();
  return run ? std::move(run).value() : RunResult{};
}

TEST(recursionEquivalence, PerContextRunsTheNestedInvocationAndOnlyIt) {
  const Schedule s = NestedRunSchedule();
  const RunResult atomic = RunPolicy(s, Policy::kAtomic);
  const RunResult per = RunPolicy(s, Policy::kPerContext);
  const RunResult landed = RunPolicy(s, Policy::kLanded);
  EXPECT_EQ(DecisionOf(atomic, "softirq3.1"), "miss");
  EXPECT_EQ(DecisionOf(per, "softirq3.1"), "run");
  EXPECT_EQ(DecisionOf(landed, "softirq3.1"), "miss");
  EXPECT_TRUE(NestedInHigherContext(atomic, "softirq3.1"));
  EXPECT_FALSE(NestedInHigherContext(atomic, "A.1"));
  const DecisionDiff d = CompareDecisions(atomic, per);
  ASSERT_FALSE(d.identical);
  EXPECT_EQ(d.id_a, "softirq3.1");
  EXPECT_TRUE(CompareDecisions(atomic, landed).identical);
  EXPECT_TRUE(CheckEquivalence(s, atomic, RunPolicy(s, Policy::kAtomic, jit::AtomicLowering::kLlSc), per, landed).empty());
}

TEST(recursionEquivalence, PreemptionInsideTheIncrementLosesAnUpdateOnlyForPerContext) {
  Schedule s = LostUpdateSchedule();
  Event finish;
  finish.kind = Event::Kind::kFinish;
  s.events.push_back(finish);
  Event c;
  c.kind = Event::Kind::kTask;
  c.task = "C";
  c.programs = {0};
  s.events.push_back(c);
  const RunResult atomic = RunPolicy(s, Policy::kAtomic);
  const RunResult per = RunPolicy(s, Policy::kPerContext);
  const RunResult landed = RunPolicy(s, Policy::kLanded);
  ASSERT_TRUE(atomic.ok() && per.ok() && landed.ok());
  EXPECT_EQ(DecisionOf(atomic, "A.1"), "miss");
  EXPECT_EQ(DecisionOf(atomic, "B.1"), "run");
  EXPECT_EQ(DecisionOf(atomic, "C.1"), "run");
  EXPECT_TRUE(per.split_by_preemption);
  EXPECT_EQ(DecisionOf(per, "A.1"), "run");  // with B.1: two at once
  EXPECT_EQ(DecisionOf(per, "B.1"), "run");
  EXPECT_EQ(DecisionOf(per, "C.1"), "miss");  // the byte is stuck at 0xff
  EXPECT_EQ(per.model->cpu(0).active[0], 0xffu);
  EXPECT_TRUE(Mentions(landed, "task B refused: preemption is disabled (preempt_count 0x1)"));
  EXPECT_EQ(DecisionOf(landed, "A.1"), "run");
  EXPECT_EQ(DecisionOf(landed, "C.1"), "run");
}

TEST(recursionEquivalence, ClaimsHoldOnRandomInterruptOnlySchedules) {
  GeneratorOptions options;
  options.preemption = false;
  options.raw_steps = false;
  size_t differences = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    SeededSource source(seed);
    const Schedule s = GenerateSchedule(source, options);
    ASSERT_TRUE(InterruptOnly(s) && PolicyIndependent(s));
    const RunResult a = RunPolicy(s, Policy::kAtomic);
    const RunResult l = RunPolicy(s, Policy::kAtomic, jit::AtomicLowering::kLlSc);
    const RunResult p = RunPolicy(s, Policy::kPerContext);
    const RunResult d = RunPolicy(s, Policy::kLanded);
    for (const RunResult* r : {&a, &l, &p, &d}) {
      ASSERT_TRUE(r->ok()) << FormatSchedule(s) << r->findings.front().Describe();
    }
    const auto problems = CheckEquivalence(s, a, l, p, d);
    EXPECT_TRUE(problems.empty()) << FormatSchedule(s) << problems.front();
    differences += CompareDecisions(a, p).identical ? 0 : 1;
  }
  EXPECT_GT(differences, 0u);  // the generator does reach the interesting case
}

TEST(recursionEquivalence, GeneratorIsDeterministicAndValid) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    SeededSource a(seed), b(seed);
    const Schedule x = GenerateSchedule(a, {});
    const Schedule y = GenerateSchedule(b, {});
    EXPECT_EQ(x, y);
    EXPECT_TRUE(ValidateSchedule(x)) << FormatSchedule(x);
    auto reparsed = ParseSchedule(FormatSchedule(x));
    ASSERT_TRUE(reparsed) << reparsed.message();
    EXPECT_EQ(*reparsed, x);
  }
}

// Found by schedule_fuzzer: options beyond the format (9 programs, loops
// of 65, hundreds of events) made schedules ValidateSchedule refuses.
TEST(recursionEquivalence, GeneratorKeepsOptionsBeyondTheFormatToIt) {
  GeneratorOptions options;
  options.max_cpus = 255;
  options.max_programs = 255;
  options.max_loop = 255;
  options.max_events = 100'000;
  size_t most_programs = 0, most_events = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    SeededSource source(seed);
    const Schedule s = GenerateSchedule(source, options);
    EXPECT_TRUE(ValidateSchedule(s)) << ValidateSchedule(s).message();
    most_programs = std::max(most_programs, s.programs.size());
    most_events = std::max(most_events, s.events.size());
  }
  EXPECT_EQ(most_programs, size_t{kMaxPrograms});
  EXPECT_GT(most_events, kMaxScheduleEvents - 3);
}

// The compare report is data first: without a bug every claim holds and
// the text says so; with a planted bug the comparison is not ok and the
// formatter names each problem.
TEST(recursionCompareReport, HoldsWithoutABugAndSaysWhatBrokeWithOne) {
  CompareOptions options;
  options.schedules = 10;
  auto clean = ComparePolicies(options);
  ASSERT_TRUE(clean) << clean.message();
  EXPECT_TRUE(clean->ok());
  EXPECT_EQ(clean->random.clean, 10u);
  ASSERT_TRUE(clean->nested.schedule);
  ASSERT_TRUE(clean->lost_update.schedule);
  EXPECT_EQ(clean->lost_update.percontext_both, "A.1 and B.1");
  EXPECT_EQ(clean->atomics.size(), 6u);
  const std::string text = FormatPolicyComparison(*clean);
  EXPECT_NE(text.find("All claims hold."), std::string::npos) << text;
  EXPECT_EQ(text.find("PROBLEM"), std::string::npos) << text;

  options.bugs.exit_wrong_context = true;
  auto broken = ComparePolicies(options);
  ASSERT_TRUE(broken) << broken.message();
  EXPECT_FALSE(broken->ok());
  const std::string broken_text = FormatPolicyComparison(*broken);
  EXPECT_NE(broken_text.find("  PROBLEM: "), std::string::npos) << broken_text;
  EXPECT_NE(broken_text.find("SOME CLAIMS DO NOT HOLD"), std::string::npos) << broken_text;
}

}  // namespace
}  // namespace bpfdiff::recursion
