// Each planted-bug control is caught, by the check that should catch it, on
// a small schedule; without the bug the same schedules pass.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/planted/planted_bugs.h"
#include "tests/harness/recursion/recursion_test_support.h"

namespace bpfdiff::recursion {
namespace {

jit::TrampolineBugs Bug(std::string_view name) {
  auto bugs = PlantedBugsNamed(name);
  EXPECT_TRUE(bugs) << bugs.message();
  return bugs ? bugs->trampoline : jit::TrampolineBugs{};
}

bool CaughtByModel(const RunResult& run) {
  for (const auto& f : run.findings) {
    if (f.kind == Finding::Kind::kModel) return true;
  }
  return false;
}

TEST(recursionPlantedBug, ExitWrongContextIsCaught) {
  constexpr std::string_view kSchedule = "program 0 loop 1\ntask 0 A fire 0\n";
  for (Policy p : {Policy::kPerContext, Policy::kLanded}) {
    SCOPED_TRACE(PolicyName(p));
    const RunResult buggy = RunText(kSchedule, MakeConfig(p, jit::AtomicLowering::kLse,
                                                          Bug("recursion-exit-wrong-context")));
    ASSERT_TRUE(CaughtByModel(buggy));
    EXPECT_NE(buggy.findings.front().message.find("active is [01 ff 00 00], the model says [00 00 00 00]"),
              std::string::npos)
        << buggy.findings.front().Describe();
    EXPECT_TRUE(RunText(kSchedule, MakeConfig(p)).ok());
  }
  // The int counter has no per-context byte: nothing to get wrong.
  EXPECT_TRUE(RunText(kSchedule, MakeConfig(Policy::kAtomic, jit::AtomicLowering::kLse,
                                            Bug("recursion-exit-wrong-context")))
                  .ok());
}

TEST(recursionPlantedBug, RctxWrongBitsIsCaughtInABhDisabledTask) {
  constexpr std::string_view kSchedule = "program 0 loop 2\ntask 0 A fire 0 bh\nuntil 0 program\n";
  for (Policy p : {Policy::kPerContext, Policy::kLanded}) {
    SCOPED_TRACE(PolicyName(p));
    const RunResult buggy = RunText(kSchedule, MakeConfig(p, jit::AtomicLowering::kLse,
                                                          Bug("recursion-rctx-wrong-bits")));
    ASSERT_TRUE(CaughtByModel(buggy));
    EXPECT_NE(buggy.findings.front().message.find("active is [00 01 00 00], the model says [01 00 00 00]"),
              std::string::npos)
        << buggy.findings.front().Describe();
    EXPECT_TRUE(RunText(kSchedule, MakeConfig(p)).ok());
    // Without local_bh_disable() the wrong mask reads the same bits.
    EXPECT_TRUE(RunText("program 0 loop 2\ntask 0 A fire 0\nuntil 0 program\n",
                        MakeConfig(p, jit::AtomicLowering::kLse, Bug("recursion-rctx-wrong-bits")))
                    .ok());
  }
}

// A transient error: the hardirq increments the interrupted context's byte
// and decrements the same byte on exit, so every byte is right again when
// the hardirq returns. With nothing scheduled inside the hardirq, no
// run/miss decision depends on the wrong byte and the machine does not stop
// while it is wrong: the comparisons at stops alone (check_every_event off,
// the checker before issue 23) pass the schedule; the comparison after the
// enter update's store catches it.
TEST(recursionPlantedBug, HardirqAsInterruptedIsCaughtOnlyByThePerEventCheck) {
  struct Case {
    std::string_view schedule;
    std::string_view message;
  };
  const Case cases[] = {
      // On an idle CPU: the task's byte instead of the hardirq's.
      {"program 0 loop 1\nhardirq 0 fire 0\n", "program 0 active is [01 00 00 00], the model says [00 00 01 00]"},
      // Over a task inside another program, and over a softirq: the byte of
      // the level interrupted.
      {"program 0 loop 1\nprogram 1 loop 2\ntask 0 A fire 1\nuntil 0 program\nhardirq 0 fire 0\n",
       "program 0 active is [01 00 00 00], the model says [00 00 01 00]"},
      {"program 0 loop 1\nprogram 1 loop 2\nsoftirq 0 fire 1\nuntil 0 program\nhardirq 0 fire 0\n",
       "program 0 active is [00 01 00 00], the model says [00 00 01 00]"},
  };
  for (const Case& c : cases) {
    for (Policy p : {Policy::kPerContext, Policy::kLanded}) {
      SCOPED_TRACE(fmt::format("{}: {}", PolicyName(p), c.schedule));
      RunConfig buggy = MakeConfig(p, jit::AtomicLowering::kLse, Bug("recursion-hardirq-as-interrupted"));
      const RunResult caught = RunText(c.schedule, buggy);
      ASSERT_TRUE(CaughtByModel(caught));
      EXPECT_NE(caught.findings.front().message.find(c.message), std::string::npos)
          << caught.findings.front().Describe();
      // The same bug, compared only at stops: every decision is right and
      // every byte is back by then, so the old checker passes it.
      buggy.check_every_event = false;
      const RunResult missed = RunText(c.schedule, buggy);
      EXPECT_TRUE(missed.ok()) << (missed.findings.empty() ? "" : missed.findings.front().Describe());
      // Without the bug both checkers pass.
      RunConfig clean = MakeConfig(p);
      EXPECT_TRUE(RunText(c.schedule, clean).ok());
      clean.check_every_event = false;
      EXPECT_TRUE(RunText(c.schedule, clean).ok());
    }
  }
  // A hardirq over the same program at task level is a false recursion: the
  // decision differs, which both checkers see.
  constexpr std::string_view kSameProgram = "program 0 loop 2\ntask 0 A fire 0\nuntil 0 program\nhardirq 0 fire 0\n";
  RunConfig stops_only = MakeConfig(Policy::kPerContext, jit::AtomicLowering::kLse,
                                    Bug("recursion-hardirq-as-interrupted"));
  stops_only.check_every_event = false;
  EXPECT_TRUE(CaughtByModel(RunText(kSameProgram, stops_only)));
  // The int counter has no per-context byte, and an NMI still counts as NMI.
  EXPECT_TRUE(RunText(cases[0].schedule, MakeConfig(Policy::kAtomic, jit::AtomicLowering::kLse,
                                                    Bug("recursion-hardirq-as-interrupted")))
                  .ok());
  EXPECT_TRUE(RunText("program 0 loop 1\nnmi 0 fire 0\n", MakeConfig(Policy::kPerContext, jit::AtomicLowering::kLse,
                                                                   Bug("recursion-hardirq-as-interrupted")))
                  .ok());
}

TEST(recursionPlantedBug, CheckThenIncrementIsCaughtWithATaskSwitchInBetween) {
  // The named schedule of the report catches it under atomic: A has read the
  // counter (0) when B takes the CPU, B runs, A increments to 2 and runs.
  constexpr std::string_view kNamed =
      "program 0 loop 2\ntask 0 A fire 0\nuntil 0 loaded\ntask 0 B fire 0\nuntil 0 program\nswitch 0 A\n";
  const RunResult atomic = RunText(kNamed, MakeConfig(Policy::kAtomic, jit::AtomicLowering::kLse,
                                                      Bug("recursion-check-then-increment")));
  ASSERT_TRUE(CaughtByModel(atomic));
  EXPECT_TRUE(RunText(kNamed, MakeConfig(Policy::kAtomic)).ok());

  // Every policy: a switch at some boundary between the check and the
  // increment (found by trying each one) is caught; none is without the bug.
  for (Policy p : kPolicies) {
    for (auto lowering : {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc}) {
      SCOPED_TRACE(fmt::format("{} {}", PolicyName(p), lowering == jit::AtomicLowering::kLse ? "lse" : "llsc"));
      bool caught = false;
      for (int k = 1; k < 60 && !caught; ++k) {
        const std::string schedule = fmt::format(
            "program 0 loop 2\ntask 0 A fire 0\nrun 0 {}\ntask 0 B fire 0\nuntil 0 program\nswitch 0 A\n", k);
        caught = CaughtByModel(RunText(schedule, MakeConfig(p, lowering, Bug("recursion-check-then-increment"))));
        EXPECT_TRUE(RunText(schedule, MakeConfig(p, lowering)).ok()) << "k=" << k;
      }
      EXPECT_TRUE(caught);
    }
  }
}

}  // namespace
}  // namespace bpfdiff::recursion
