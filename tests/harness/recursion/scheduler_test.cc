// The interrupt scheduler's nesting rules, task switching, the trigger
// helper, and the schedule text format.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/recursion/programs.h"
#include "harness/recursion/schedule.h"
#include "isa/insn.h"
#include "tests/harness/recursion/recursion_test_support.h"

namespace bpfdiff::recursion {
namespace {

// preempt_count in the timeline row whose `what` starts with `what`.
uint32_t PreemptCountAt(const RunResult& run, std::string_view what) {
  for (const auto& row : run.timeline) {
    if (row.what.rfind(what, 0) == 0) return row.preempt_count;
  }
  ADD_FAILURE() << "no row " << what;
  return ~0u;
}

TEST(recursionScheduler, NestsAsTheHardwareAllows) {
  // NMI in hardirq in softirq in task: each level taken, preempt_count adds up.
  const RunResult run = RunText(
      "program 0 loop 3\n"
      "task 0 A fire 0\nuntil 0 program\n"
      "softirq 0 fire 0\nuntil 0 program\n"
      "hardirq 0 fire 0\nuntil 0 program\n"
      "nmi 0 fire 0\nuntil 0 program\n",
      MakeConfig(Policy::kPerContext));
  ASSERT_TRUE(run.ok()) << run.findings.front().Describe();
  EXPECT_EQ(PreemptCountAt(run, "softirq3 taken"), kSoftirqOffset);
  EXPECT_EQ(PreemptCountAt(run, "hardirq5 taken"), kSoftirqOffset + kHardirqOffset);
  EXPECT_EQ(PreemptCountAt(run, "nmi7 taken"), kSoftirqOffset + 2 * kHardirqOffset + kNmiOffset);
  // percontext: one byte per level, so all four run, nested.
  for (const char* id : {"A.1", "softirq3.1", "hardirq5.1", "nmi7.1"}) EXPECT_EQ(DecisionOf(run, id), "run") << id;
  EXPECT_EQ(run.Find("nmi7.1")->level, 3);
  EXPECT_EQ(PreemptCountAt(run, "task A ends"), 0u);
}

TEST(recursionScheduler, RefusesWhatTheKernelCannotNest) {
  struct Case {
    const char* first;
    const char* second;
    const char* refusal;
  };
  const Case cases[] = {
      {"softirq", "softirq", "already serving a softirq"},
      {"hardirq", "softirq", "in hardirq/NMI"},
      {"nmi", "softirq", "in hardirq/NMI"},
      {"hardirq", "hardirq", "IRQs are masked"},
      {"nmi", "hardirq", "IRQs are masked"},
      {"nmi", "nmi", "NMIs do not nest"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.first) + " then " + c.second);
    const RunResult run = RunText(fmt::format("program 0 loop 2\n{} 0 fire 0\nuntil 0 program\n{} 0 fire 0\n",
                                              c.first, c.second),
                                  MakeConfig(Policy::kLanded));
    ASSERT_TRUE(run.ok());
    EXPECT_TRUE(Mentions(run, std::string(c.second) + "3 refused: ")) << "not refused";
    EXPECT_TRUE(Mentions(run, c.refusal));
    EXPECT_EQ(run.invocations.size(), 1u);
  }
  // And what it can: hardirq in softirq, NMI in hardirq, anything in a task.
  const RunResult ok = RunText("program 0 loop 2\nsoftirq 0 fire 0\nuntil 0 program\nhardirq 0 fire 0\n"
                               "until 0 program\nnmi 0 fire 0\n",
                               MakeConfig(Policy::kLanded));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.invocations.size(), 3u);
}

TEST(recursionScheduler, BottomHalvesDisabledBlockSoftirqsAndPreemptionButNotIrqs) {
  const RunResult run = RunText(
      "program 0 loop 3\ntask 0 A fire 0 bh\nuntil 0 program\n"
      "softirq 0 fire 0\ntask 0 B fire 0\nhardirq 0 fire 0\n",
      MakeConfig(Policy::kPerContext));
  ASSERT_TRUE(run.ok()) << run.findings.front().Describe();
  EXPECT_TRUE(Mentions(run, "softirq3 refused: softirqs run only when !in_interrupt()"));
  EXPECT_TRUE(Mentions(run, "bottom halves disabled"));
  EXPECT_TRUE(Mentions(run, "task B refused: preemption is disabled"));
  EXPECT_EQ(run.Find("A.1")->level, 0);  // bh disabled is still task context
  EXPECT_EQ(DecisionOf(run, "hardirq5.1"), "run");
  EXPECT_EQ(PreemptCountAt(run, "hardirq5 taken"), kSoftirqDisableOffset + kHardirqOffset);
}

TEST(recursionScheduler, TaskSwitchesOnlyWherePreemptible) {
  // In an interrupt: no switch. At task level with preempt_count 0: yes.
  const RunResult run = RunText(
      "program 0 loop 4\nprogram 1 loop 4\n"
      "task 0 A fire 0\nuntil 0 program\n"         // 1, 2
      "hardirq 0 fire 0\ntask 0 B fire 0\n"         // 3, 4: refused in hardirq3
      "until 0 done\n"                              // 5: hardirq3.1 returns, so does hardirq3
      "task 0 C fire 1\nuntil 0 program\n"         // 6, 7: C preempts A
      "switch 0 A\nswitch 0 A\n"                    // 8, 9
      "task 0 D fire 0\n",                          // 10: D preempts A, and misses
      MakeConfig(Policy::kAtomic));
  ASSERT_TRUE(run.ok()) << run.findings.front().Describe();
  EXPECT_TRUE(Mentions(run, "task B refused: CPU 0 is in hardirq3"));
  EXPECT_TRUE(Mentions(run, "task C preempts task A"));
  EXPECT_TRUE(Mentions(run, "task C preempted, task A resumes"));
  EXPECT_TRUE(Mentions(run, "switch to A refused: it is running"));
  EXPECT_TRUE(Mentions(run, "task D preempts task A"));
  EXPECT_TRUE(Mentions(run, "task C resumes"));  // after A ends: the oldest preempted last
  EXPECT_EQ(DecisionOf(run, "C.1"), "run");
  EXPECT_EQ(DecisionOf(run, "D.1"), "miss");  // A holds program 0's counter
  EXPECT_EQ(run.Find("D.1")->origin, "task D");
  EXPECT_EQ(run.Find("B.1"), nullptr);
}

TEST(recursionScheduler, TheTriggerHelperRunsTheTargetInTheCallersContext) {
  const RunResult run = RunText(
      "program 0 loop 2 trigger 1 at 1 trigger 0 at 2\nprogram 1 loop 1\n"
      "hardirq 0 fire 0\n",
      MakeConfig(Policy::kLanded));
  ASSERT_TRUE(run.ok()) << run.findings.front().Describe();
  const InvocationRecord* nested = run.Find("hardirq1.1/t1");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->program, 1);
  EXPECT_EQ(nested->level, 2);  // the caller's context
  EXPECT_EQ(DecisionOf(run, "hardirq1.1/t1"), "run");
  EXPECT_EQ(DecisionOf(run, "hardirq1.1/t2"), "miss");  // program 0 calling itself
  EXPECT_EQ(run.Find("hardirq1.1")->triggers, (std::vector<int>{1, 0}));
}

TEST(recursionScheduler, CpusKeepSeparateState) {
  const RunResult run = RunText(
      "cpus 2\nprogram 0 loop 3\ntask 0 A fire 0\ntask 1 B fire 0\nuntil 0 program\nuntil 1 program\n"
      "nmi 1 fire 0\n",
      MakeConfig(Policy::kAtomic));
  ASSERT_TRUE(run.ok()) << run.findings.front().Describe();
  EXPECT_EQ(DecisionOf(run, "A.1"), "run");
  EXPECT_EQ(DecisionOf(run, "B.1"), "run");   // the same program, another CPU
  EXPECT_EQ(DecisionOf(run, "nmi5.1"), "miss");  // CPU 1's counter is held by B
}

TEST(recursionScheduleFormat, RoundTrips) {
  constexpr std::string_view kText =
      "cpus 2\n"
      "program 0 loop 3 trigger 1 at 0\n"
      "program 1 loop 0\n"
      "task 1 A fire 0 1 arg 7 bh\n"
      "switch 1 A\n"
      "nmi 0 fire 1\n"
      "run 1 12\n"
      "until 0 program+5\n"
      "until 1 exit-loaded\n"
      "finish\n";
  auto parsed = ParseSchedule(kText);
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(FormatSchedule(*parsed), kText);
  EXPECT_FALSE(InterruptOnly(*parsed));
  EXPECT_FALSE(PolicyIndependent(*parsed));
}

TEST(recursionScheduleFormat, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"program 0 loop 2\nhardirq 0 fire 3\n", "program 3 is not declared"},
      {"program 1 loop 2\n", "line 1: programs are declared in order"},
      {"program 0 loop 2\nuntil 0 middle\n", "line 2: 'middle' is not a position"},
      {"program 0 loop 2\ntask 0 A fire 0\ntask 0 A fire 0\n", "task A was started before"},
      {"program 0 loop 2\nswitch 0 B\n", "no task B was started on CPU 0"},
      {"program 0 loop 2\ntask 2 A fire 0\n", "CPU 2 is not one of the 1 CPUs"},
      {"program 0 loop 2 trigger 0 at 3\n", "line 1: iteration '3' is not a number in 0..2"},
      {"program 0 loop 2\nrun 0 0\n", "run 1..100000 instructions"},
      {"program 0 loop 2\nfrobnicate 0\n", "line 2: unknown directive 'frobnicate'"},
      {"", "no program declared"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseSchedule(c.text);
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_NE(parsed.message().find(c.error), std::string::npos) << parsed.message();
  }
}

TEST(recursionAttachedPrograms, EachEngineSeesTheTriggerAsDocumented) {
  auto programs = LoadPrograms({ProgramSpec{2, {{0, 1}}}});
  ASSERT_TRUE(programs) << programs.message();
  int jit_calls = 0, interp_movs = 0;
  const auto& jit = programs->jit.programs[0].program.insns;
  const auto& interp = programs->interp.programs[0].program.insns;
  ASSERT_EQ(jit.size(), interp.size());
  for (size_t i = 0; i < jit.size(); ++i) {
    if (jit[i].opcode == isa::kOpCall && jit[i].imm == kTriggerHelper) {
      ++jit_calls;
      EXPECT_EQ(interp[i].opcode, isa::kClassAlu64 | isa::kAluMov | isa::kSrcK);  // r0 = 0
      EXPECT_EQ(interp[i].dst, 0);
      EXPECT_EQ(interp[i].imm, 0);
      ++interp_movs;
    }
  }
  EXPECT_EQ(jit_calls, 1);
  EXPECT_EQ(interp_movs, 1);
  EXPECT_EQ(programs->expected_triggers[0], std::vector<int>{0});
}

}  // namespace
}  // namespace bpfdiff::recursion
