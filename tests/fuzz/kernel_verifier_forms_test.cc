// diff_fuzzer with the kernel's engines runs only what the kernel's verifier
// would accept (fuzz/diff/diff_harness.h, ToKernelVerifierForms).
#include <gtest/gtest.h>

#include "fuzz/diff/diff_harness.h"
#include "isa/assembler.h"

namespace bpfdiff::fuzz {
namespace {

CaseSource SourceOf(std::string_view text) {
  auto insns = isa::Assemble(text);
  EXPECT_TRUE(insns.ok()) << insns.message();
  CaseSource source;
  if (insns) source.programs.push_back(std::move(insns).value());
  return source;
}

TEST(FuzzKernelVerifierForms, ShiftsByOutOfRangeConstantsAreMaskedToTheWidth) {
  CaseSource source = SourceOf(
      "lsh %r1, 64\nrsh32 %r2, 33\narsh %r3, -1\nlsh32 %r4, -32\nrsh %r5, 63\nlsh %r6, %r7\nexit");
  ASSERT_TRUE(ToKernelVerifierForms(source));
  const auto& p = source.programs[0];
  EXPECT_EQ(p[0].imm, 0);   // 64 & 63
  EXPECT_EQ(p[1].imm, 1);   // 33 & 31
  EXPECT_EQ(p[2].imm, 63);  // -1 & 63
  EXPECT_EQ(p[3].imm, 0);   // -32 & 31
  EXPECT_EQ(p[4].imm, 63);  // in range: unchanged
  EXPECT_EQ(p[5].imm, 0);   // a register shift: unchanged
}

TEST(FuzzKernelVerifierForms, OtherConstantsStay) {
  CaseSource source = SourceOf("add %r1, 64\nmov32 %r2, -1\nexit");
  const CaseSource before = source;
  ASSERT_TRUE(ToKernelVerifierForms(source));
  EXPECT_EQ(source.programs, before.programs);
}

TEST(FuzzKernelVerifierForms, CallxCannotBeMadeOneAndLeavesTheSourceAlone) {
  CaseSource source = SourceOf("mov %r1, 8\nlsh %r2, 64\ncall %r1\nexit");
  const CaseSource before = source;
  EXPECT_FALSE(ToKernelVerifierForms(source));
  EXPECT_EQ(source.programs, before.programs);
}

// As the generator writes a callx: the register set to a helper's id just
// before. It is that helper's call; the register keeps the id.
TEST(FuzzKernelVerifierForms, ACallxOfAHelperIdSetJustBeforeBecomesItsCall) {
  CaseSource source = SourceOf("mov %r6, 8\ncall %r6\nlsh %r2, 64\nexit");
  ASSERT_TRUE(ToKernelVerifierForms(source));
  const auto& p = source.programs[0];
  EXPECT_EQ(p[0].imm, 8);
  EXPECT_EQ(p[1].opcode, isa::kOpCall);
  EXPECT_EQ(p[1].src, 0);
  EXPECT_EQ(p[1].imm, 8);
  EXPECT_EQ(p[2].imm, 0) << "the rest of the case takes its forms too";
}

// Not when the register may hold something else there, or the id is no
// helper's (a call of an unknown id is an error the verifier rejects).
TEST(FuzzKernelVerifierForms, ACallxThatABranchReachesOrOfNoHelperStays) {
  for (std::string_view text : {"mov %r6, 8\nja +0\ncall %r6\nexit",           // not set just before
                                "mov %r6, 8\njeq %r1, 0, +0\ncall %r6\nexit",  // a branch lands on it
                                "mov %r6, 99\ncall %r6\nexit",                  // no helper 99
                                "mov %r6, 12\ncall %r6\nexit"}) {               // tail_call: no helper call
    CaseSource source = SourceOf(text);
    const CaseSource before = source;
    EXPECT_FALSE(ToKernelVerifierForms(source)) << text;
    EXPECT_EQ(source.programs, before.programs) << text;
  }
}

// An artifact replayed or minimized (bpfdiff replay/minimize) runs as the
// fuzz input it came from ran: in the kernel verifier's forms on the
// kernel's engines, as it is on bpfdiff's own.
TEST(FuzzKernelVerifierForms, ACaseFromAFileTakesTheFormsOfTheHarnesssEngines) {
  auto kernel = DiffHarness::Create({}, {}, "kernel");
  auto model = DiffHarness::Create({}, {}, "all");
  ASSERT_TRUE(model.ok()) << model.message();
  CaseSource source = SourceOf("lsh %r1, 64\nexit");
  (*model)->ToEngineForms(source);
  EXPECT_EQ(source.programs[0][0].imm, 64);
  if (!kernel) GTEST_SKIP() << "this build has no kernel engines: " << kernel.message();
  (*kernel)->ToEngineForms(source);
  EXPECT_EQ(source.programs[0][0].imm, 0);
}

}  // namespace
}  // namespace bpfdiff::fuzz
