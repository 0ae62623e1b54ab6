// Lockstep localization: for JIT bugs planted in known lowerings, the
// culprit named is the instruction the bug miscompiles, whichever part of
// the outcome the difference reaches, including an instruction whose
// lowering the bug left empty and a local call whose callee's frame is
// wrong.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "harness/conformance/case_file.h"
#include "harness/diff/engines.h"
#include "harness/diff/localize.h"
#include "harness/planted/planted_bugs.h"

namespace bpfdiff {
namespace {

struct Localized {
  CaseRun run;
  Localization localization;
};

// Runs a `.data` text on the interpreter and both JIT lowerings with the
// planted bug `bug` ("" for none), and localizes the first divergence.
Localized Localize(std::string_view text, std::string_view bug) {
  Localized out;
  auto file = ParseCaseText(text, true, "test.data");
  EXPECT_TRUE(file.ok()) << file.message();
  auto bugs = PlantedBugsNamed(bug);
  EXPECT_TRUE(bugs.ok()) << bugs.message();
  auto sandbox = Sandbox::Create();
  EXPECT_TRUE(sandbox.ok()) << sandbox.message();
  if (!file || !bugs || !sandbox) return out;
  auto engines = MakeEngines(**sandbox, "all", bugs->jit);
  EXPECT_TRUE(engines.ok()) << engines.message();
  if (!engines) return out;
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  out.run = runner.Run(file->source);
  out.localization = LocalizeFirstDivergence(runner, out.run, RunOptions{});
  return out;
}

std::string Differences(const Localization& localization) {
  std::string out;
  for (const auto& difference : localization.differences) out += difference + "\n";
  return out;
}

TEST(Localize, ARegisterTheJitClobbersNamesTheInstructionThatClobbersIt) {
  const Localized result = Localize(R"(
-- asm
mov %r1, 3
mov %r2, 1
mov %r3, 7
jset %r1, %r2, +1
mov %r3, 9
add %r3, %r1
mov %r0, %r3
exit
-- result
0xa
)", "jset-clobbers-dst");
  ASSERT_TRUE(result.localization.culprit) << result.localization.why_not;
  EXPECT_EQ(result.localization.engine, "jit");
  EXPECT_FALSE(result.localization.culprit->prologue);
  EXPECT_EQ(result.localization.culprit->slot, 3u);
  EXPECT_EQ(result.localization.agreeing_boundaries, 4u);
  EXPECT_EQ(Differences(result.localization), "r1: interp 0x3, jit 0x1\n");
  ASSERT_TRUE(result.localization.before);
  EXPECT_EQ(result.localization.before->regs[1], 3u);
  EXPECT_FALSE(result.localization.culprit->code_words.empty());
}

TEST(Localize, AJumpTakenTheWrongWayIsNamedByWhereTheRunsGoOn) {
  const Localized result = Localize(R"(
-- asm
lddw %r1, 0x100000000
lddw %r2, 0x100000000
mov %r0, 0
jset32 %r1, %r2, +1
mov %r0, 1
exit
-- result
0x1
)", "jmp32-jset-64bit");
  ASSERT_TRUE(result.localization.culprit) << result.localization.why_not;
  EXPECT_EQ(result.localization.culprit->slot, 5u);
  // The JIT jumped to the last exit, whose code is the epilogue's.
  EXPECT_EQ(Differences(result.localization), "jit ended after it (exit r0=0x0); interp went on at slot 6\n");
}

TEST(Localize, AnInstructionWhoseLoweringTheBugLeftEmptyIsTheCulprit) {
  // div32 by 1 must still zero-extend: with the bug its code is empty, so
  // the JIT has no boundary of its own there.
  const Localized result = Localize(R"(
-- asm
lddw %r1, 0x100000005
div32 %r1, 1
mov %r0, %r1
exit
-- result
0x5
)", "divmod-imm1-skipped");
  ASSERT_TRUE(result.localization.culprit) << result.localization.why_not;
  EXPECT_EQ(result.localization.culprit->slot, 2u);
  EXPECT_TRUE(result.localization.culprit->code_words.empty());
  EXPECT_EQ(Differences(result.localization), "r1: interp 0x5, jit 0x100000005\n");
}

TEST(Localize, ACalleeWithTheCallersFrameNamesTheCall) {
  // The JIT addresses r10-relative stack slots from sp, so the wrong r10
  // shows only where it is used as a value: the callee stores through a
  // copy of it, into its caller's frame.
  const Localized result = Localize(R"(
-- asm
mov %r6, 10
stxdw [%r10-8], %r6
mov %r1, 7
call local +2
ldxdw %r0, [%r10-8]
exit
mov %r2, %r10
stxdw [%r2-8], %r1
mov %r0, 0
exit
-- result
0xa
)", "subprogram-fp-unset");
  ASSERT_TRUE(result.localization.culprit) << result.localization.why_not;
  EXPECT_EQ(result.localization.culprit->slot, 3u);
  EXPECT_NE(Differences(result.localization).find("r10: interp"), std::string::npos)
      << Differences(result.localization);
}

TEST(Localize, AValueSpilledBeforeItIsReadIsStillNamedWhereItWasComputed) {
  // The wrong upper half never reaches a register compared at the exit:
  // it is stored and reloaded. The register differs right after add32.
  const Localized result = Localize(R"(
-- asm
lddw %r1, 0xffffffff
add32 %r1, 1
stxdw [%r10-8], %r1
mov %r1, 0
ldxdw %r0, [%r10-8]
exit
-- result
0x0
)", "alu32-add-no-zext");
  ASSERT_TRUE(result.localization.culprit) << result.localization.why_not;
  EXPECT_EQ(result.localization.culprit->slot, 2u);
}

TEST(Localize, EnginesThatAgreeHaveNoCulprit) {
  const Localized result = Localize(R"(
-- asm
mov %r0, 1
exit
-- result
0x1
)", "");
  EXPECT_FALSE(result.localization.culprit);
  EXPECT_EQ(result.localization.why_not, "the engines agree");
}

}  // namespace
}  // namespace bpfdiff
