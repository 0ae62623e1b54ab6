// Pack scripts: the format's edges, determinism, and a planted bug found
// through a script as pack_fuzzer would find it.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "fuzz/pack/pack_script.h"
#include "kernelsrc/kernel_jit.h"
#include "support/files.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint8_t kLoad = 0, kFree = 1, kStep = 2, kStale = 4, kInterrupt = 9;

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
  EXPECT_FALSE(RunScript({0, 0, 0}).is_script);
  EXPECT_FALSE(RunScript({kPackScriptVersion + 1, 0, 0}).is_script);
  EXPECT_TRUE(RunScript({1, 0, 0}).is_script);
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

TEST(PackScript, DecodesWithoutAWorld) {
  EXPECT_FALSE(DecodePackScript(std::vector<uint8_t>{}));
  EXPECT_FALSE(DecodePackScript(std::vector<uint8_t>{4, 0, 0}));
  std::vector<uint8_t> script = Header(3);
  AppendLoad(script, 2, 140);
  // Kinds are read modulo 11; a step (2 + 11) and a free whose argument is
  // missing (read as zero).
  script.insert(script.end(), {13, 1, 2, 3, kFree});
  const auto decoded = DecodePackScript(script);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->cpus, 3);
  EXPECT_EQ(decoded->seed, 7u);
  ASSERT_EQ(decoded->ops.size(), 3u);
  EXPECT_EQ(decoded->ops[0].kind, PackOpKind::kLoad);
  EXPECT_EQ(decoded->ops[0].args, (std::array<uint8_t, 3>{0, 140, 2}));
  EXPECT_EQ(decoded->ops[0].records.size(), 16u);
  EXPECT_EQ(decoded->ops[1].kind, PackOpKind::kStep);
  EXPECT_EQ(decoded->ops[1].args, (std::array<uint8_t, 3>{1, 2, 3}));
  EXPECT_EQ(decoded->ops[2].kind, PackOpKind::kFree);
  EXPECT_EQ(decoded->ops[2].args, (std::array<uint8_t, 3>{0, 0, 0}));
}

// Version 1 has no interrupts: its kinds are read modulo 9, so that the
// scripts written before version 2 mean what they meant.
TEST(PackScript, VersionOneKeepsItsMeaning) {
  std::vector<uint8_t> script = Header(1);
  script[0] = 1;
  script.insert(script.end(), {kInterrupt, 0, 0, 0, 11, 1, 2, 3});
  const auto v1 = DecodePackScript(script);
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->version, 1);
  ASSERT_EQ(v1->ops.size(), 2u);
  EXPECT_EQ(v1->ops[0].kind, PackOpKind::kLoad);  // 9 % 9
  EXPECT_EQ(v1->ops[1].kind, PackOpKind::kStep);  // 11 % 9
  auto encoded = EncodePackScript(*v1);
  ASSERT_TRUE(encoded) << encoded.message();
  EXPECT_EQ((*encoded)[0], 1);
  EXPECT_EQ(DecodePackScript(*encoded), v1);

  script[0] = 2;
  const auto v2 = DecodePackScript(script);
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->ops[0].kind, PackOpKind::kInterrupt);
  EXPECT_EQ(v2->ops[1].kind, PackOpKind::kFree);  // 11 % 10

  // Version 3 has failing reloads: kinds modulo 11.
  script[0] = 3;
  const auto v3 = DecodePackScript(script);
  ASSERT_TRUE(v3);
  EXPECT_EQ(v3->ops[0].kind, PackOpKind::kInterrupt);
  EXPECT_EQ(v3->ops[1].kind, PackOpKind::kLoad);  // 11 % 11

  PackScript with_interrupt = *v2;
  with_interrupt.version = 1;
  auto refused = EncodePackScript(with_interrupt);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("version 1"), std::string::npos) << refused.message();
  with_interrupt.version = 4;
  EXPECT_FALSE(EncodePackScript(with_interrupt));
  PackScript with_failing_reload = *v3;
  with_failing_reload.ops.push_back({PackOpKind::kFailingReload, {0, 3, 0}, {}});
  with_failing_reload.version = 2;
  EXPECT_FALSE(EncodePackScript(with_failing_reload)) << "version 2 has no failing reloads";
}

TEST(PackScript, AnInterruptRunsAProgramAndTheInterruptedCallGoesOn) {
  std::vector<uint8_t> script = Header(1);
  AppendLoad(script, 30);
  // Interrupting an idle CPU does nothing; then the program, stopped 10
  // instructions in, interrupted by tail caller 1; the free waits.
  script.insert(script.end(), {kInterrupt, 0, 4, 9, kStep, 0, 4, 9, kInterrupt, 0, 1, 4, kFree, 0});
  const auto result = RunScript(script);
  EXPECT_EQ(result.interrupts, 1u);
  EXPECT_EQ(result.calls_compared, 2u) << "the interrupt's call and the one it interrupted";
  EXPECT_TRUE(result.violations.empty());
  std::string trace;
  for (const auto& line : result.trace) trace += line + "\n";
  EXPECT_NE(trace.find("cpu 0 interrupted: program 1 runs 5 instructions in the interrupt"), std::string::npos)
      << trace;
  EXPECT_NE(trace.find("with an interrupt"), std::string::npos) << trace;
}

TEST(PackScript, TheEncodingDecodesToTheSameScriptAndRunsTheSame) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 3);
  script.insert(script.end(), {kPackOpKinds + kStep, 0, 0, 20, kStale, 1});
  script.insert(script.end(), {kLoad, 0, 0, 5, 1, 2, 3});  // records cut short by the end of the input
  const auto decoded = DecodePackScript(script);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->ops.back().records.size(), 3u);
  auto encoded = EncodePackScript(*decoded);
  ASSERT_TRUE(encoded) << encoded.message();
  EXPECT_NE(*encoded, script);
  EXPECT_EQ(DecodePackScript(*encoded), decoded);
  EXPECT_EQ(RunScript(*encoded).trace, RunScript(script).trace);
}

TEST(PackScript, EncodingRefusesWhatNoInputDecodesTo) {
  PackScript script;
  script.cpus = 5;
  EXPECT_FALSE(EncodePackScript(script));
  script.cpus = 1;
  script.ops.push_back({PackOpKind::kSynchronize, {1, 0, 0}, {}});
  EXPECT_FALSE(EncodePackScript(script));
  script.ops[0] = {PackOpKind::kLoad, {0, 0, 1}, std::vector<uint8_t>(4)};  // short records...
  EXPECT_TRUE(EncodePackScript(script));
  script.ops.push_back({PackOpKind::kSynchronize, {}, {}});  // ...on an operation that is not the last
  auto refused = EncodePackScript(script);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("operation 0"), std::string::npos) << refused.message();
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

// A tail caller stopped before its tail call while its prog_array entry is
// emptied: the call falls through, and the interpreter, following the entry
// the call read, agrees. Every call is compared; none is left by reason.
TEST(PackScript, CallsWhoseEntryChangesAreComparedAlongWhatTheyRead) {
  constexpr uint8_t kFinish = 3, kTailTarget = 5, kTailCall = 7;
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 6);
  script.insert(script.end(), {kTailTarget, 0, 0,     // prog_array[0] = the loaded program
                               kTailCall, 0, 0, 1,    // cpu 0: tail caller 0, 2 instructions
                               kTailCall, 1, 0, 1,    // cpu 1: the same
                               kTailTarget, 0, 255,   // prog_array[0] emptied
                               kFinish, 0, kFinish, 1});
  const auto result = RunScript(script);
  EXPECT_TRUE(result.violations.empty());
  EXPECT_EQ(result.calls_compared, 2u);
  EXPECT_EQ(result.calls_replayed, 2u);
  EXPECT_EQ(result.calls_not_comparable, 0u);
  EXPECT_TRUE(result.not_comparable_reasons.empty());
}

// Found by pack_fuzzer: a program loads prog_array[1] through an
// untrusted pointer while the free of a program empties that entry; the
// call saw the new value, the interpreter (run as the call started) the
// old. Named, not a divergence. (When the entries moved to offset 64 of
// the map object, two bytes of its bpf_probe_read record changed: it
// reads 64 bytes from 0x3000010 now, where it read 0x30 from 0x3000000.)
TEST(PackScript, ALoadOfAnEntryUpdatedDuringTheCallIsNotADivergence) {
  auto script =
      ReadBinaryFile(std::string(BPFDIFF_SOURCE_DIR) + "/tests/fuzz/pack/prog-array-loaded-while-updated.pack");
  ASSERT_TRUE(script) << script.message();
  const auto result = RunScript(*script, "", false);
  EXPECT_TRUE(result.violations.empty()) << result.violations.front().Describe();
  EXPECT_EQ(result.not_comparable_reasons, (std::map<std::string, uint64_t>{{"prog-array-loaded-while-updated", 1}}));
  EXPECT_EQ(result.calls_not_comparable, 1u);
}

// A tree whose verifier predates the cpu v4 instructions (6.1) refuses
// them at load, as it refuses them in diff_fuzzer: its JIT never sees one.
// Found by pack_fuzzer_kernel on 6.1 as a stack byte that differed under
// blinding: the world had loaded a movsx (mov32 with off 16), which 6.1's
// JIT, trusting its verifier, compiles as a plain mov.
TEST(PackScript, ATreeBeforeCpuV4RefusesTheirLoadsAsItsVerifierWould) {
  const kernelsrc::KernelTree* older = nullptr;
  for (const auto& tree : kernelsrc::LinkedKernelTrees()) {
    if (!tree.features.cpu_v4) older = &tree;
  }
  if (older == nullptr) GTEST_SKIP() << "this build links no tree before cpu v4";
  auto script = ReadBinaryFile(std::string(BPFDIFF_SOURCE_DIR) + "/tests/fuzz/pack/cpu-v4-on-an-older-tree.pack");
  ASSERT_TRUE(script) << script.message();
  PackScriptOptions options;
  options.trace = true;
  for (const char* engine : {"kernel-jit-blind", "kernel-jit-llsc-blind", "kernel-jit"}) {
    options.jit_engine = fmt::format("{}@{}", engine, older->version);
    auto result = RunPackScript(*script, options);
    ASSERT_TRUE(result) << result.message();
    EXPECT_TRUE(result->violations.empty()) << engine << ": " << result->violations.front().Describe();
    const auto refused = std::count_if(result->trace.begin(), result->trace.end(), [](const std::string& line) {
      return line.find("the tree predates the cpu v4 instructions") != std::string::npos;
    });
    EXPECT_GE(refused, 3) << engine;
  }
}

}  // namespace
}  // namespace bpfdiff::fuzz
