// Pack scripts: the format's edges, determinism, and a planted bug found
// through a script as pack_fuzzer would find it.
#include <gtest/gtest.h>

#include "fuzz/pack/pack_script.h"
#include "support/files.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint8_t kLoad = 0, kFree = 1, kStep = 2, kStale = 4;

std::vector<uint8_t> Header(int cpus) { return {kPackScriptVersion, static_cast<uint8_t>(cpus - 1), 7, 0, 0, 0, 0, 0, 0, 0}; }

// A load of a generated program from `records` records of fixed bytes.
void AppendLoad(std::vector<uint8_t>& script, uint8_t records, uint8_t pad = 0) {
  script.insert(script.end(), {kLoad, 0, pad, records});
  for (int i = 0; i < records * 8; ++i) script.push_back(static_cast<uint8_t>(i * 37 + 11));
}

PackScriptResult RunScript(const std::vector<uint8_t>& script, std::string_view bug = "", bool trace = true) {
  PackScriptOptions options;
  auto bugs = PlantedBugsNamed(bug);
  EXPECT_TRUE(bugs) << bugs.message();
  options.bugs = *bugs;
  options.trace = trace;
  auto result = RunPackScript(script, options);
  EXPECT_TRUE(result) << result.message();
  return result ? *result : PackScriptResult{};
}

TEST(PackScript, OtherVersionsAreNotScripts) {
  EXPECT_FALSE(RunScript({}).is_script);
  EXPECT_FALSE(RunScript({2, 0, 0}).is_script);
  const auto header_only = RunScript({kPackScriptVersion});
  EXPECT_TRUE(header_only.is_script);
  EXPECT_EQ(header_only.cpus, 1);
  EXPECT_EQ(header_only.operations, 0u);
}

TEST(PackScript, CpuCountComesFromByteOne) {
  for (int cpus = 1; cpus <= 4; ++cpus) EXPECT_EQ(RunScript(Header(cpus)).cpus, cpus);
  EXPECT_EQ(RunScript({kPackScriptVersion, 4}).cpus, 1);  // 1 + 4 % 4
}

TEST(PackScript, TruncatedArgumentsReadAsZero) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 6);
  script.push_back(kStep);  // cpu, program and count missing: cpu 0, program 0, 1 instruction
  const auto result = RunScript(script);
  EXPECT_EQ(result.operations, 2u);
  EXPECT_EQ(result.loads, 1u);
  EXPECT_TRUE(result.violations.empty());
}

TEST(PackScript, SameBytesSameRun) {
  std::vector<uint8_t> script = Header(3);
  for (int i = 0; i < 6; ++i) {
    AppendLoad(script, static_cast<uint8_t>(4 + i), i % 2 ? 140 : 0);
    script.insert(script.end(), {kStep, static_cast<uint8_t>(i), static_cast<uint8_t>(4 + i), 9});
  }
  script.insert(script.end(), {kFree, 1, kFree, 2, kStale, 0, kStale, 1});
  const auto first = RunScript(script);
  const auto second = RunScript(script);
  EXPECT_EQ(first.trace, second.trace);
  EXPECT_EQ(first.calls_compared, second.calls_compared);
  EXPECT_GT(first.loads, 0u);
  EXPECT_GT(first.frees, 0u);
  EXPECT_TRUE(first.violations.empty());
}

// The seed that frees a program while two CPUs are inside it: clean as it
// is, caught when the free does not wait for the grace period.
TEST(PackScript, FreeDuringCallSeedCatchesAFreeWithoutGracePeriod) {
  auto seed = ReadBinaryFile(std::string(BPFDIFF_SOURCE_DIR) + "/fuzz/corpus/pack_fuzzer/free-during-call.pack");
  ASSERT_TRUE(seed) << seed.message();
  EXPECT_TRUE(RunScript(*seed).violations.empty());
  const auto buggy = RunScript(*seed, "free-without-grace-period");
  ASSERT_FALSE(buggy.violations.empty());
  EXPECT_EQ(buggy.violations.front().invariant, lifecycle::Invariant::kNoOverwriteInUse);
  EXPECT_GE(buggy.violations.front().cpu, 0);
  EXPECT_NE(buggy.violations.front().pc, 0u);
}

}  // namespace
}  // namespace bpfdiff::fuzz
