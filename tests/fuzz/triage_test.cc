// Minimize (fuzz/diff/triage.h) shrinks a diverging case while the same
// divergence persists, and refuses a case that does not diverge.
#include "fuzz/diff/triage.h"

#include <gtest/gtest.h>

#include "harness/conformance/case_file.h"

namespace bpfdiff::fuzz {
namespace {

CaseSource Assembled(std::string_view text) {
  auto file = ParseCaseText(text, false, "test");
  EXPECT_TRUE(file) << file.message();
  return file ? file->source : CaseSource{};
}

// A 32-bit add that carries out of the low half, among instructions that
// do not matter to the divergence the planted bug causes.
constexpr std::string_view kPadded = R"(
  mov %r6, 5
  mov %r1, 7
  add %r6, %r1
  lddw %r0, 0x1ffffffff
  mov %r2, 3
  add32 %r0, 1
  mov %r3, 4
  mul %r3, %r2
  exit
)";

TEST(FuzzTriage, MinimizeKeepsTheDivergenceAndDropsTheRest) {
  auto bugs = PlantedBugsNamed("alu32-add-no-zext");
  ASSERT_TRUE(bugs);
  auto harness = DiffHarness::Create(*bugs);
  ASSERT_TRUE(harness) << harness.message();
  const CaseSource source = Assembled(kPadded);
  const auto before = SignatureOf(**harness, source, (*harness)->RunCase(source));
  ASSERT_TRUE(before) << "the planted bug should make the case diverge";

  auto result = Minimize(**harness, source);
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(result->slots_before, 10u);
  EXPECT_LT(result->slots_after, result->slots_before);
  EXPECT_LE(result->slots_after, 4u) << "lddw (two slots), add32, exit";
  EXPECT_GT(result->runs, 1);
  EXPECT_EQ(SignatureOf(**harness, result->source, (*harness)->RunCase(result->source)), before);
}

// Two 32-bit identity operations that the planted bug leaves without code
// (so neither zero-extends): both reach r0, the first is the culprit.
constexpr std::string_view kTwoCulprits = R"(
  lddw %r0, 0x100000005
  and32 %r0, -1
  lddw %r1, 0x100000000
  add32 %r1, 0
  add %r0, %r1
  exit
)";

TEST(FuzzTriage, MinimizeKeepsTheCulpritsFormNotJustTheField) {
  auto bugs = PlantedBugsNamed("alu32-identity-no-zext");
  ASSERT_TRUE(bugs);
  auto harness = DiffHarness::Create(*bugs);
  ASSERT_TRUE(harness) << harness.message();
  const CaseSource source = Assembled(kTwoCulprits);
  const auto before = SignatureOf(**harness, source, (*harness)->RunCase(source));
  ASSERT_TRUE(before);
  EXPECT_EQ(before->kind, "culprit and32 (jit)");
  // Without and32 the case still diverges in r0, through add32: another
  // culprit, so not the same bug.
  auto result = Minimize(**harness, source);
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(SignatureOf(**harness, result->source, (*harness)->RunCase(result->source)), before);
  bool has_and32 = false;
  for (const auto& insn : result->source.programs.front()) has_and32 |= insn.opcode == (isa::kClassAlu | isa::kAluAnd);
  EXPECT_TRUE(has_and32);
}

TEST(FuzzTriage, ACaseThatDoesNotDivergeIsNotMinimized) {
  auto harness = DiffHarness::Create(PlantedBugs{});
  ASSERT_TRUE(harness) << harness.message();
  auto result = Minimize(**harness, Assembled(kPadded));
  ASSERT_FALSE(result);
  EXPECT_NE(result.message().find("does not diverge"), std::string::npos) << result.message();
}

}  // namespace
}  // namespace bpfdiff::fuzz
