// Localization on the kernel's own JIT: the lockstep run steps its code as
// it does the model's, and names the instruction the kernel miscompiles.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/diff/triage.h"
#include "fuzz/findings/known_kernel_findings.h"
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

// A case loaded from `text` (a `.data` file's), through a file as a
// maintainer's would be.
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

std::string ReadVector(const std::string& name) {
  std::string text;
  if (std::FILE* in = std::fopen((std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/" + name).c_str(), "r")) {
    for (int c; (c = std::fgetc(in)) != EOF;) text += static_cast<char>(c);
    std::fclose(in);
  }
  return text;
}

// The slot the lockstep runs of `source` on the kernel's engines blame.
std::optional<uint32_t> CulpritSlot(DiffHarness& harness, CaseSource source) {
  EXPECT_TRUE(ToKernelVerifierForms(source));
  const CaseRun run = harness.RunCase(source);
  const EngineRun* diverged = run.FirstDivergence();
  EXPECT_NE(diverged, nullptr);
  if (diverged == nullptr) return std::nullopt;
  EXPECT_EQ(diverged->engine, "kernel-jit-llsc");
  const Localization localization = harness.Localize(run);
  EXPECT_TRUE(localization.culprit) << localization.why_not;
  if (!localization.culprit) return std::nullopt;
  return localization.culprit->slot;
}

// The same, for a case written out here.
std::optional<uint32_t> CulpritOfCase(const std::string& name, const std::string& text) {
  auto harness = KernelHarness();
  if (harness == nullptr) return std::nullopt;
  auto source = LoadText(name, text);
  EXPECT_TRUE(source.ok()) << source.message();
  if (!source) return std::nullopt;
  return CulpritSlot(*harness, *source);
}

// The same case after a call of get_smp_processor_id, which the kernel's
// JIT performs inline: the interpreter's call of it is no difference in
// the calls made, and the culprit is still the atomic, one slot further.
TEST(KernelLocalize, AHelperTheKernelInlinesIsNoDifferenceInTheCallsMade) {
  std::string text = ReadVector("atomic-fetch-src-is-dst.data");
  const size_t asm_start = text.find("-- asm\n");
  ASSERT_NE(asm_start, std::string::npos);
  text.insert(asm_start + 7, "call 8\n");
  EXPECT_EQ(CulpritOfCase("inlined-call-then-fetch-src-is-dst", text), 5u);  // lock fetch add, after the call
}

// A callee that does not name r10 keeps its caller's in the kernel's code
// (its prologue sets the frame pointer only for a function that uses it):
// no difference while it runs, and the culprit is the atomic in it.
TEST(KernelLocalize, R10IsNoDifferenceInAFunctionThatDoesNotNameIt) {
  EXPECT_EQ(CulpritOfCase("callee-without-r10",
                          "-- asm\nstdw [%r10-8], 0\ncall local f\nexit\nf:\n"
                          "lock fetch add32 [%r1+0], %r1\nmov %r0, 0\nexit\n"
                          "-- mem\n00 00 00 00 00 00 00 00\n"),
            3u);
}

// A callee after an inlined kptr_xchg (two slots where the case has one):
// stepping, the interpreter runs the rewritten case and finds the callee's
// frame by its slot there, so r10 in it is the kernel's.
TEST(KernelLocalize, ACalleeAfterAnInlinedKptrXchgHasTheKernelsFrame) {
  EXPECT_EQ(CulpritOfCase("callee-after-inlined-kptr-xchg",
                          "-- map 1 array key=4 value=16 entries=4\n-- options\nkptr_xchg_inline\n"
                          "-- asm\ncall local f\nexit\ncall 194\nexit\nf:\nstdw [%r10-8], 0\nmov %r1, %r10\n"
                          "add %r1, -8\nlock fetch add [%r1+0], %r1\nmov %r0, 0\nexit\n"),
            8u);  // the atomic: slot 7 as written, 8 with call 194 in two
}

// The kernel's tail call restores the caller's r6..r9 (the target sees
// them as its caller's caller left them); a target that writes them before
// it reads them shows no difference there, and the culprit is the atomic.
TEST(KernelLocalize, RegistersATailCallRestoresAreNoDifferenceUntilWritten) {
  EXPECT_EQ(CulpritOfCase("tail-call-then-fetch-src-is-dst",
                          "-- map 1 prog_array key=4 value=4 entries=1\n1\n"
                          "-- asm\nmov %r6, 6\nmov %r7, 7\nlddw %r2, map:1\nmov %r3, 0\ntail_call\nmov %r0, 0\nexit\n"
                          "-- asm 1\nmov %r6, 1\nmov %r7, %r1\nlock fetch add32 [%r7+0], %r7\nmov %r0, %r6\nexit\n"
                          "-- mem\n00 00 00 00 00 00 00 00\n"),
            2u);  // of program 1
}

// The names of kernelsrc/known_findings.txt: its lines are "^NAME[.]data$".
std::vector<std::string> KnownFindingNames() {
  std::ifstream in(std::string(BPFDIFF_SOURCE_DIR) + "/kernelsrc/known_findings.txt");
  std::vector<std::string> names;
  const std::string head = "^", tail = "[.]data$";
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(line.starts_with(head) && line.ends_with(tail)) << line;
    names.push_back(line.substr(head.size(), line.size() - head.size() - tail.size()));
  }
  return names;
}

// The fuzzers know the findings when they meet them (and go on): every
// case of kernelsrc/known_findings.txt is recognized as what it is.
TEST(KernelLocalize, TheKnownFindingsAreRecognizedByWhatTheyAre) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  const std::vector<std::string> names = KnownFindingNames();
  EXPECT_GE(names.size(), 3u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    auto source = LoadArtifact(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/" + name + ".data");
    ASSERT_TRUE(source.ok()) << source.message();
    ASSERT_TRUE(ToKernelVerifierForms(*source));
    const CaseRun run = harness->RunCase(*source);
    const EngineRun* diverged = run.FirstDivergence();
    ASSERT_NE(diverged, nullptr);
    const Localization localization = harness->Localize(run);
    EXPECT_EQ(KnownKernelFinding(run, *diverged, &localization), name);
  }
}

// The arena store's finding is told by its semantics, without a culprit:
// the interpreter, with each such store dropped (6.12 stores to a faulting
// address, which its exception table skips), gives what each kernel
// engine that diverged gave.
TEST(KernelLocalize, TheArenaStoreFindingIsToldByItsSemantics) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  auto source = LoadArtifact(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/arena-st-offsets.data");
  ASSERT_TRUE(source.ok()) << source.message();
  ASSERT_TRUE(ToKernelVerifierForms(*source));
  const CaseRun run = harness->RunCase(*source);
  int diverged = 0;
  for (const EngineRun& engine_run : run.runs) {
    if (engine_run.verdict.kind != Verdict::Kind::kDivergence) continue;
    SCOPED_TRACE(engine_run.engine);
    ++diverged;
    EXPECT_EQ(KnownKernelFindingBySemantics(harness->runner(), *source, run, engine_run), "arena-st-offsets");
  }
  EXPECT_GE(diverged, 1);
}

// ...and only when they explain the whole outcome: the same stores beside
// the LL/SC atomic's finding leave the LL/SC engine's outcome unexplained
// (it is found by its culprit instead), while the LSE engine's still is.
TEST(KernelLocalize, TheArenaStoreSemanticsDoNotExplainASecondFinding) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  auto source = LoadText("arena-store-and-llsc-fetch",
                         "-- asm\n"
                         "mov32 %r1, 0x400\n"
                         "mov32 %r3, 0x3f0\n"
                         "probe32 stdw [%r1-8], 0x1234\n"
                         "probe32 ldxdw %r0, [%r3+8]\n"
                         "mov %r2, %r10\n"
                         "add %r2, -8\n"
                         "stdw [%r10-8], 5\n"
                         "lock fetch add [%r2+0], %r2\n"
                         "add %r0, %r2\n"
                         "exit\n"
                         "-- result\n0x1239\n");
  ASSERT_TRUE(source.ok()) << source.message();
  ASSERT_TRUE(ToKernelVerifierForms(*source));
  const CaseRun run = harness->RunCase(*source);
  bool llsc_seen = false;
  for (const EngineRun& engine_run : run.runs) {
    if (engine_run.verdict.kind != Verdict::Kind::kDivergence) continue;
    SCOPED_TRACE(engine_run.engine);
    const auto known = KnownKernelFindingBySemantics(harness->runner(), *source, run, engine_run);
    if (engine_run.engine.starts_with("kernel-jit-llsc")) {
      llsc_seen = true;
      EXPECT_EQ(known, std::nullopt);
    } else {
      EXPECT_EQ(known, "arena-st-offsets");
    }
  }
  EXPECT_TRUE(llsc_seen);
}

// Agreement where the kernel is right: the LSE lowering of the same case.
TEST(KernelLocalize, TheLseLoweringOfTheSameCaseAgrees) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  auto source = LoadArtifact(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/atomic-fetch-src-is-dst.data");
  ASSERT_TRUE(source.ok()) << source.message();
  const CaseRun run = harness->RunCase(*source);
  ASSERT_GE(run.runs.size(), 3u);
  EXPECT_EQ(run.runs[2].engine, "kernel-jit");
  EXPECT_EQ(run.runs[2].verdict.kind, Verdict::Kind::kMatch) << run.runs[2].verdict.Describe();
}

// Functions whose prologues save different registers: the interpreter
// follows the kernel's frames per function, so these cases are compared
// in full (no "not comparable" for the frames), and agree.
TEST(KernelFrames, CasesWhoseFramesDifferPerFunctionAreCompared) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  for (const char* file :
       {"call-frames-differ.data", "tailcall-frames-differ.data", "call-frames-after-inlined-kptr-xchg.data"}) {
    auto source = LoadArtifact(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/" + file);
    ASSERT_TRUE(source.ok()) << source.message();
    const CaseRun run = harness->RunCase(*source);
    ASSERT_GE(run.runs.size(), 2u) << file;
    for (size_t i = 1; i < run.runs.size(); ++i) {
      // kernel-jit-cbpf, when the campaign samples the case, refuses a
      // tail call as the kernel's verifier would a classic program's.
      if (run.runs[i].verifier_refused && run.runs[i].engine == "kernel-jit-cbpf") continue;
      if (run.runs[i].engine == "kernel-interp") continue;  // its frames are evenly spaced: no prologue of its own
      EXPECT_TRUE(run.runs[i].geometry.per_function()) << file << " " << run.runs[i].engine;
      EXPECT_EQ(run.runs[i].verdict.kind, Verdict::Kind::kMatch)
          << file << " " << run.runs[i].engine << ": " << run.runs[i].verdict.Describe();
    }
  }
}

// r10 of each callee as the kernel's code sets it: main less 512 less the
// callee's prologue (bti, paciasp: none; fp/lr 16; the tail-call counter
// 16; the callee-saved registers in pairs: x25 alone 16, x19..x22 and x25
// 48). The interpreter, laying frames out as the kernel does, agrees; with
// the model's frames (every prologue 80 bytes) it would not.
TEST(KernelFrames, EachCalleesR10IsWhereTheKernelsPrologueLeavesIt) {
  auto harness = KernelHarness();
  ASSERT_NE(harness, nullptr);
  const std::string path = ::testing::TempDir() + "/kernel-frames-r10.data";
  {
    std::FILE* out = std::fopen(path.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs(
        "-- asm\n"
        "mov %r6, 1\nmov %r7, 2\nmov %r8, 3\n"
        "call local small\nmov %r9, %r10\nsub %r9, %r0\n"
        "call local big\nmov %r1, %r10\nsub %r1, %r0\n"
        "lsh %r9, 16\nor %r9, %r1\nmov %r0, %r9\nexit\n"
        "small:\nmov %r0, %r10\nexit\n"
        "big:\nmov %r6, 5\nmov %r7, 6\nmov %r8, 7\nmov %r9, 8\nmov %r0, %r10\nexit\n",
        out);
    std::fclose(out);
  }
  auto source = LoadArtifact(path);
  ASSERT_TRUE(source.ok()) << source.message();
  const CaseRun run = harness->RunCase(*source);
  ASSERT_GE(run.runs.size(), 2u);
  for (size_t i = 1; i < run.runs.size(); ++i) {
    ASSERT_TRUE(run.runs[i].outcome) << run.runs[i].engine;
    EXPECT_EQ(run.runs[i].verdict.kind, Verdict::Kind::kMatch) << run.runs[i].verdict.Describe();
    // The kernel's interpreter keeps its frames where core.c's functions
    // leave them, the same distance apart at every depth.
    if (run.runs[i].engine == "kernel-interp") {
      EXPECT_EQ(run.runs[i].outcome->r0 >> 16, run.runs[i].outcome->r0 & 0xffff);
      continue;
    }
    EXPECT_EQ(run.runs[i].outcome->r0, ((512u + 48u) << 16) | (512u + 80u)) << run.runs[i].engine;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace bpfdiff::fuzz
