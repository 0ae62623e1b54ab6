// The known findings of the kernel's JIT as the fuzzers recognize them
// (fuzz/findings/known_kernel_findings.h), on runs made up here: each is
// recognized in its shape, and not in the shapes next to it (another
// engine, an offset, cmpxchg, a limit reached without an empty slot, an
// arena store whose offset the immediate form holds).
// tests/kernelsrc runs the real cases on the kernel's JIT.
#include "fuzz/findings/known_kernel_findings.h"

#include <gtest/gtest.h>

#include <string>

#include "isa/assembler.h"

namespace bpfdiff::fuzz {
namespace {

// A run of `engine` that faulted at slot `insn` of a case whose only
// program is `text`.
CaseRun FaultedRun(const std::string& text, const std::string& engine, uint32_t insn) {
  CaseRun run;
  auto insns = isa::Assemble(text);
  EXPECT_TRUE(insns.ok()) << insns.message();
  CaseSource source;
  source.programs.push_back(*insns);
  auto loaded = LoadCase(source);
  EXPECT_TRUE(loaded.ok()) << loaded.message();
  run.loaded = std::move(loaded).value();
  EngineRun reference, jit;
  reference.engine = "interp";
  reference.outcome = Outcome{};
  reference.outcome->end = EndKind::kExit;
  jit.engine = engine;
  jit.outcome = Outcome{};
  jit.outcome->end = EndKind::kFault;
  jit.outcome->fault = FaultInfo{insn, 0, 0x5, AccessKind::kWrite, false};
  jit.verdict.kind = Verdict::Kind::kDivergence;
  run.runs = {reference, jit};
  return run;
}

std::optional<std::string_view> Known(const CaseRun& run, const Localization* localization = nullptr) {
  return KnownKernelFinding(run, run.runs.back(), localization);
}

constexpr const char* kFetchAddSrcIsDst = "mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 1\n"
                                          "lock fetch add [%r1+0], %r1\nmov %r0, 0\nexit";

TEST(KnownKernelFindings, AFetchAtomicWithItsAddressAsSrcOnTheKernelsLlscLowering) {
  EXPECT_EQ(Known(FaultedRun(kFetchAddSrcIsDst, "kernel-jit-llsc", 3)), "atomic-fetch-src-is-dst");
  // Every fetching operation but cmpxchg, both widths.
  for (const char* op : {"lock xchg [%r1+0], %r1", "lock fetch or32 [%r1+0], %r1", "lock fetch xor [%r1+0], %r1",
                         "lock fetch and32 [%r1+0], %r1"}) {
    const std::string text = std::string("mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 1\n") + op + "\nmov %r0, 0\nexit";
    EXPECT_EQ(Known(FaultedRun(text, "kernel-jit-llsc", 3)), "atomic-fetch-src-is-dst") << op;
  }
  // Named by the culprit when the run did not fault there.
  CaseRun run = FaultedRun(kFetchAddSrcIsDst, "kernel-jit-llsc", 5);
  Localization localization;
  localization.culprit = Culprit{};
  localization.culprit->slot = 3;
  EXPECT_EQ(Known(run, &localization), "atomic-fetch-src-is-dst");
  // A culprit before the atomic is another bug, though the run faults there.
  CaseRun faulted_there = FaultedRun(kFetchAddSrcIsDst, "kernel-jit-llsc", 3);
  localization.culprit->slot = 1;
  EXPECT_FALSE(Known(faulted_there, &localization));
  localization.culprit->prologue = true;
  EXPECT_FALSE(Known(faulted_there, &localization));
}

TEST(KnownKernelFindings, NotTheShapesBesideIt) {
  EXPECT_FALSE(Known(FaultedRun(kFetchAddSrcIsDst, "kernel-jit", 3)));       // LSE
  EXPECT_FALSE(Known(FaultedRun(kFetchAddSrcIsDst, "jit-llsc", 3)));         // bpfdiff's model
  EXPECT_FALSE(Known(FaultedRun(kFetchAddSrcIsDst, "kernel-jit-llsc", 2)));  // another instruction
  const char* beside[] = {
      "mov %r1, %r10\nadd %r1, -16\nstdw [%r10-8], 1\nlock fetch add [%r1+8], %r1\nmov %r0, 0\nexit",  // offset
      "mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 1\nlock fetch add [%r1+0], %r2\nmov %r0, 0\nexit",   // src
      "mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 1\nlock cmpxchg [%r1+0], %r1\nmov %r0, 0\nexit",     // cmpxchg
      "mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 1\nlock add [%r1+0], %r1\nmov %r0, 0\nexit",         // no fetch
  };
  for (const char* text : beside) EXPECT_FALSE(Known(FaultedRun(text, "kernel-jit-llsc", 3))) << text;
}

// The interpreter's tail calls: `empty` attempts to an empty slot, then
// `taken` taken ones, then one refused at the limit.
CaseRun TailCallRun(const std::string& engine, int empty, int taken) {
  CaseRun run = FaultedRun("mov %r0, 0\nexit", engine, 0);
  using Result = TailCallAttempt::Result;
  auto& attempts = run.runs.front().outcome->tail_call_attempts;
  for (int i = 0; i < empty; ++i) attempts.push_back({1, 2, false, Result::kEmptySlot});
  for (int i = 0; i < taken; ++i) attempts.push_back({0, 2, false, Result::kTaken});
  attempts.push_back({0, 2, false, Result::kCountAtLimit});
  return run;
}

TEST(KnownKernelFindings, AnEmptySlotCountedBeforeTheLimitOnTheKernelsJit) {
  EXPECT_EQ(Known(TailCallRun("kernel-jit", 1, 32)), "tailcall-count-rules");
  EXPECT_EQ(Known(TailCallRun("kernel-jit-llsc", 32, 1)), "tailcall-count-rules");
  EXPECT_FALSE(Known(TailCallRun("kernel-jit", 0, 33)));  // the limit alone
  EXPECT_FALSE(Known(TailCallRun("jit", 1, 32)));         // bpfdiff's model
  // In a run on another input memory, against that memory's interpreter run.
  CaseRun run = TailCallRun("kernel-jit", 0, 33);
  run.variants.push_back(TailCallRun("kernel-jit", 1, 32).runs);
  EXPECT_FALSE(Known(run));
  EXPECT_EQ(KnownKernelFinding(run, run.variants[0].back(), nullptr), "tailcall-count-rules");
}

// A run of the kernel's two lowerings: LSE as `lse`, LL/SC diverged.
CaseRun LoweringsRun(const std::string& text, Verdict::Kind lse) {
  CaseRun run = FaultedRun(text, "kernel-jit-llsc", 3);
  EngineRun lse_run = run.runs.front();
  lse_run.engine = "kernel-jit";
  lse_run.verdict.kind = lse;
  run.runs.insert(run.runs.begin() + 1, lse_run);
  return run;
}

TEST(KnownKernelFindings, CertainWithoutACulpritWhenOnlyTheLlscLoweringDivergedOnTheShape) {
  const auto certain = [](const CaseRun& run) { return CertainKnownKernelFinding(run, run.runs.back()); };
  EXPECT_EQ(certain(LoweringsRun(kFetchAddSrcIsDst, Verdict::Kind::kMatch)), "atomic-fetch-src-is-dst");
  // The LSE lowering diverged too: something else is wrong as well.
  EXPECT_FALSE(certain(LoweringsRun(kFetchAddSrcIsDst, Verdict::Kind::kDivergence)));
  // Another atomic beside it could be the one.
  EXPECT_FALSE(certain(LoweringsRun("mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 1\n"
                                    "lock fetch add [%r1+0], %r1\nlock add [%r10-8], %r0\nmov %r0, 0\nexit",
                                    Verdict::Kind::kMatch)));
  // No atomic of the shape at all.
  EXPECT_FALSE(certain(LoweringsRun("mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 1\n"
                                    "lock fetch add [%r1+0], %r2\nmov %r0, 0\nexit",
                                    Verdict::Kind::kMatch)));
  // The tail-call finding needs no culprit; the arena store always does.
  const CaseRun tail_calls = TailCallRun("kernel-jit", 1, 32);
  EXPECT_EQ(certain(tail_calls), "tailcall-count-rules");
  CaseRun arena = FaultedRun("mov32 %r1, 0x400\nprobe32 stb [%r1-1], 1\nmov %r0, 0\nexit", "kernel-jit", 1);
  EXPECT_FALSE(CertainKnownKernelFinding(arena, arena.runs.back()));
}

// Whether a kernel run whose located culprit is the store in `store` (slot
// 1, after a mov) is taken for the arena store finding.
std::optional<std::string_view> ArenaStoreCulprit(const std::string& store, const std::string& engine = "kernel-jit") {
  CaseRun run = FaultedRun("mov32 %r1, 0x400\n" + store + "\nmov %r0, 0\nexit", engine, 3);
  run.runs.back().outcome->end = EndKind::kExit;
  run.runs.back().outcome->fault.reset();
  Localization localization;
  localization.culprit = Culprit{};
  localization.culprit->slot = 1;
  return Known(run, &localization);
}

TEST(KnownKernelFindings, AnArenaStoreOfAnImmediateAtAnOffsetTheImmediateFormCannotHold) {
  for (const char* store : {"probe32 stb [%r1-1], 1", "probe32 sth [%r1+3], 1", "probe32 stw [%r1-8], 1",
                            "probe32 stdw [%r1+255], 1", "probe32 sth [%r1+8192], 1", "probe32 stw [%r1+16384], 1"}) {
    EXPECT_EQ(ArenaStoreCulprit(store), "arena-st-offsets") << store;
    EXPECT_EQ(ArenaStoreCulprit(store, "kernel-jit-llsc"), "arena-st-offsets") << store;
  }
  // Offsets the scaled immediate holds, the register store, a plain store,
  // bpfdiff's model.
  for (const char* store : {"probe32 stb [%r1+4095], 1", "probe32 sth [%r1+8190], 1", "probe32 stw [%r1+0], 1",
                            "probe32 stdw [%r1+32760], 1", "probe32 stxdw [%r1-1], %r1", "stb [%r10-1], 1"}) {
    EXPECT_FALSE(ArenaStoreCulprit(store)) << store;
  }
  EXPECT_FALSE(ArenaStoreCulprit("probe32 stb [%r1-1], 1", "jit"));
  // Without a located culprit it is not named: nothing else points at it.
  CaseRun run = FaultedRun("mov32 %r1, 0x400\nprobe32 stb [%r1-1], 1\nmov %r0, 0\nexit", "kernel-jit", 1);
  EXPECT_FALSE(Known(run));
}

}  // namespace
}  // namespace bpfdiff::fuzz
