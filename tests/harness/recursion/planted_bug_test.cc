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
