// Localization on the kernel's own JIT: the lockstep run steps its code as
// it does the model's, and names the instruction the kernel miscompiles.
#include <gtest/gtest.h>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/diff/triage.h"
#include "harness/diff/engines.h"

namespace bpfdiff::fuzz {
namespace {

std::unique_ptr<DiffHarness> KernelHarness() {
  auto harness = DiffHarness::Create({}, {}, kKernelEngines);
  EXPECT_TRUE(harness.ok()) << harness.message();
  return harness ? std::move(harness).value() : nullptr;
}

// The finding of kernelsrc/SHIMS.md: 6.12's LL/SC fetch atomic with src ==
// dst at offset 0. Its first miscompiled instruction is slot 4.
TEST(KernelLocalize, NamesTheLlscFetchAtomicOfTheKernelsFinding) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  auto source = LoadArtifact(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/atomic-fetch-src-is-dst.data");
  ASSERT_TRUE(source.ok()) << source.message();
  ASSERT_TRUE(ToKernelVerifierForms(*source));
  const CaseRun run = harness->RunCase(*source);
  const EngineRun* diverged = run.FirstDivergence();
  ASSERT_NE(diverged, nullptr);
  EXPECT_EQ(diverged->engine, "kernel-jit-llsc");
  const Localization localization = harness->Localize(run);
  ASSERT_TRUE(localization.culprit) << localization.why_not;
  EXPECT_FALSE(localization.culprit->prologue);
  EXPECT_EQ(localization.culprit->slot, 4u);  // lock fetch add [%r1+0], %r1
  EXPECT_EQ(localization.engine, "kernel-jit-llsc");
}

// Agreement where the kernel is right: the LSE lowering of the same case.
TEST(KernelLocalize, TheLseLoweringOfTheSameCaseAgrees) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  auto source = LoadArtifact(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/atomic-fetch-src-is-dst.data");
  ASSERT_TRUE(source.ok()) << source.message();
  const CaseRun run = harness->RunCase(*source);
  ASSERT_GE(run.runs.size(), 2u);
  EXPECT_EQ(run.runs[1].engine, "kernel-jit");
  EXPECT_EQ(run.runs[1].verdict.kind, Verdict::Kind::kMatch) << run.runs[1].verdict.Describe();
}

}  // namespace
}  // namespace bpfdiff::fuzz
