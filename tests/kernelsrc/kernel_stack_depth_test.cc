// The stack depths the kernel's JIT is given (prog->aux->stack_depth): a
// case's named ones, or the verifier's. Programs of one case that reserve
// different depths are compared each over the stack it owns.
#include <gtest/gtest.h>

#include <string>

#include "fuzz/diff/diff_harness.h"
#include "harness/conformance/case_file.h"
#include "harness/diff/engines.h"

namespace bpfdiff::fuzz {
namespace {

// Program 0 keeps a value in its stack and tail-calls program 1, which keeps
// another in its own (the two reserve different depths, as two test_bpf
// tail-call tests do), and returns what it read back.
constexpr const char* kTwoDepths = R"(-- map 1 prog_array key=4 value=4 entries=1
1
-- asm
stdw [%r10-8], 7
lddw %r2, map:1
mov %r3, 0
tail_call
mov %r0, 0
exit
-- asm 1
stdw [%r10-40], 0x1234
ldxdw %r0, [%r10-40]
exit
-- result
0x1234
)";

TEST(KernelStackDepth, ProgramsOfOneCaseWithTheirOwnDepthsAgreeOnEveryKernelEngine) {
  auto harness = DiffHarness::Create({}, {}, kKernelEngines);
  ASSERT_TRUE(harness.ok()) << harness.message();
  auto file = ParseCaseText(kTwoDepths, /*is_data=*/true, "two-depths.data");
  ASSERT_TRUE(file.ok()) << file.message();
  CaseSource* source = &file->source;
  for (const std::vector<uint32_t>& depths : {std::vector<uint32_t>{}, {8, 40}, {16, 48}, {512, 40}}) {
    source->stack_depths = depths;
    const CaseRun run = (*harness)->RunCase(*source);
    ASSERT_FALSE(run.load_error) << *run.load_error;
    for (const EngineRun& engine_run : run.runs) {
      ASSERT_TRUE(engine_run.outcome) << engine_run.engine << ": " << engine_run.WhyNotRun();
      EXPECT_EQ(engine_run.outcome->r0, 0x1234u) << engine_run.engine;
    }
    EXPECT_EQ(run.FirstDivergence(), nullptr) << (depths.empty() ? 0 : depths[0]);
  }
  // A depth short of an access through r10 is the case's error.
  source->stack_depths = {0, 40};
  EXPECT_TRUE((*harness)->RunCase(*source).load_error);
}

}  // namespace
}  // namespace bpfdiff::fuzz
