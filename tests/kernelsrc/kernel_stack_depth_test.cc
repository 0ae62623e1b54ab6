// The stack depths the kernel's JIT is given (prog->aux->stack_depth): a
// case's named ones, or the verifier's. Programs of one case that reserve
// different depths are compared each over the stack it owns.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/diff/triage.h"
#include "harness/diff/engines.h"

namespace bpfdiff::fuzz {
namespace {

Result<CaseSource> LoadText(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name + ".data";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return Fail("cannot write {}", path);
  std::fputs(text.c_str(), out);
  std::fclose(out);
  auto source = LoadArtifact(path);
  std::remove(path.c_str());
  return source;
}

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
  auto source = LoadText("two-depths", kTwoDepths);
  ASSERT_TRUE(source.ok()) << source.message();
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
