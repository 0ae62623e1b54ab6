// The differential runner's verdicts on cases where the comparison itself
// used to be blind: runs that take tail calls, JIT refusals of programs the
// load step accepted, and kptr_xchg, which the interpreter runs as a helper
// and the JITs as the kernel's inline rewrite. Each planted bug is a JIT
// defect the runner must report as a divergence, not as "not comparable".
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "harness/conformance/case_file.h"
#include "harness/diff/differential.h"
#include "harness/diff/engines.h"
#include "harness/diff/kernel_refusals.h"
#include "harness/planted/planted_bugs.h"
#include "oracle/helpers.h"

namespace bpfdiff {
namespace {

// Runs a `.data` text on the interpreter and both JIT lowerings, with the
// planted bug `bug` ("" for none) in the JITs.
CaseRun RunData(std::string_view text, std::string_view bug = "") {
  auto file = ParseCaseText(text, true, "test.data");
  EXPECT_TRUE(file.ok()) << file.message();
  auto bugs = PlantedBugsNamed(bug);
  EXPECT_TRUE(bugs.ok()) << bugs.message();
  auto sandbox = Sandbox::Create();
  EXPECT_TRUE(sandbox.ok()) << sandbox.message();
  if (!file || !bugs || !sandbox) return {};
  auto engines = MakeEngines(**sandbox, "all", bugs->jit);
  EXPECT_TRUE(engines.ok()) << engines.message();
  if (!engines) return {};
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  CaseRun run = runner.Run(file->source);
  EXPECT_FALSE(run.load_error) << *run.load_error;
  return run;
}

std::string Verdicts(const CaseRun& run) {
  std::string out;
  for (const EngineRun& engine_run : run.runs) out += engine_run.engine + ": " + engine_run.verdict.Describe() + "\n";
  return out;
}

// The runs of the JIT lowerings (every run but the reference's).
std::span<const EngineRun> JitRuns(const CaseRun& run) {
  return run.runs.empty() ? std::span<const EngineRun>{} : std::span<const EngineRun>(run.runs).subspan(1);
}

// A program that tail-calls itself and counts its runs at r10-8 (see
// tests/conformance/tailcall-limit-self.data): 1 + 33 runs.
constexpr std::string_view kSelfTailCall = R"(
-- map 1 prog_array key=4 value=4 entries=1
0
-- asm
ldxdw %r0, [%r10-8]
add %r0, 1
stxdw [%r10-8], %r0
lddw %r2, map:1
mov %r3, 0
tail_call
ldxdw %r0, [%r10-8]
exit
)";

TEST(DifferentialTailCalls, RunsWithTailCallsAreCompared) {
  const CaseRun run = RunData(kSelfTailCall);
  ASSERT_EQ(run.runs.size(), 3u);
  ASSERT_TRUE(run.runs[0].outcome);
  EXPECT_EQ(run.runs[0].outcome->tail_calls.size(), 33u);
  EXPECT_EQ(run.runs[0].outcome->r0, 34u);
  EXPECT_FALSE(run.runs[0].outcome->read_engine_private)
      << "the interpreter's own reads of program objects are not the program's";
  for (const EngineRun& jit : JitRuns(run)) EXPECT_TRUE(jit.verdict.match()) << Verdicts(run);
}

TEST(DifferentialTailCalls, WrongTailCallLimitIsADivergence) {
  const CaseRun run = RunData(kSelfTailCall, "tail-call-limit-34");
  ASSERT_EQ(run.runs.size(), 3u);
  for (const EngineRun& jit : JitRuns(run)) {
    EXPECT_EQ(jit.verdict.kind, Verdict::Kind::kDivergence) << Verdicts(run);
    EXPECT_EQ(jit.verdict.field, "r0") << Verdicts(run);  // 35 runs instead of 34
  }
}

TEST(DifferentialTailCalls, JitBugInATailCallTargetIsADivergence) {
  // Program 1 computes a 32-bit add whose 64-bit input has garbage in its
  // upper half; the planted JIT bug forgets the zero-extension.
  const CaseRun run = RunData(R"(
-- map 1 prog_array key=4 value=4 entries=1
1
-- asm
lddw %r2, map:1
mov %r3, 0
tail_call
mov %r0, -1
exit
-- asm 1
lddw %r0, 0xffffffff00000001
add32 %r0, 1
exit
)",
                              "alu32-add-no-zext");
  ASSERT_EQ(run.runs.size(), 3u);
  ASSERT_TRUE(run.runs[0].outcome);
  EXPECT_EQ(run.runs[0].outcome->r0, 2u);
  for (const EngineRun& jit : JitRuns(run)) {
    EXPECT_EQ(jit.verdict.kind, Verdict::Kind::kDivergence) << Verdicts(run);
    EXPECT_EQ(jit.verdict.field, "r0") << Verdicts(run);
  }
}

TEST(DifferentialTailCalls, TheProgramsOwnReadOfAProgramObjectIsStillNotComparable) {
  // bpf_func of program 0 holds each JIT's own entry address: a program
  // that reads it sees a different value on every engine, by design.
  const CaseRun run = RunData(R"(
-- asm
mov %r1, 0x3100000
probe ldxdw %r0, [%r1+0]
exit
)");
  ASSERT_EQ(run.runs.size(), 3u);
  ASSERT_TRUE(run.runs[0].outcome);
  EXPECT_TRUE(run.runs[0].outcome->read_engine_private);
  for (const EngineRun& jit : JitRuns(run)) {
    EXPECT_EQ(jit.verdict.kind, Verdict::Kind::kNotComparable) << Verdicts(run);
    EXPECT_NE(jit.verdict.detail.find("differ between engines by design"), std::string::npos) << Verdicts(run);
  }
}

TEST(DifferentialRefusals, JitRefusingAProgramTheLoadStepAcceptedIsADivergence) {
  // The planted bug makes the extra pass of a program with subprograms
  // grow, which the JIT detects and refuses: the kernel's JIT would have
  // compiled this program.
  const CaseRun run = RunData(R"(
-- asm
mov %r1, 7
call local sub
exit
sub:
mov %r0, %r1
exit
)",
                              "extra-pass-grows");
  ASSERT_EQ(run.runs.size(), 3u);
  EXPECT_TRUE(run.runs[0].verdict.match());
  for (const EngineRun& jit : JitRuns(run)) {
    EXPECT_FALSE(jit.outcome);
    EXPECT_EQ(jit.verdict.kind, Verdict::Kind::kDivergence) << Verdicts(run);
    EXPECT_EQ(jit.verdict.field, "compilation");
    EXPECT_EQ(jit.verdict.detail.rfind(jit.engine + " refused: ", 0), 0u) << jit.verdict.detail;
    EXPECT_NE(jit.verdict.detail.find("extra pass"), std::string::npos) << jit.verdict.detail;
  }
  EXPECT_NE(run.FirstDivergence(), nullptr);
}

TEST(DifferentialRefusals, RefusalsTheKernelAlsoMakesAreNotComparableAndSaySo) {
  const CaseRun run = RunData(R"(
-- mem
00 01 02 03
-- asm
mov %r6, %r1
ldabsb 2
exit
)");
  ASSERT_EQ(run.runs.size(), 3u);
  ASSERT_TRUE(run.runs[0].outcome);
  EXPECT_EQ(run.runs[0].outcome->r0, 2u);
  for (const EngineRun& jit : JitRuns(run)) {
    EXPECT_FALSE(jit.outcome);
    EXPECT_EQ(jit.verdict.kind, Verdict::Kind::kNotComparable) << Verdicts(run);
    EXPECT_EQ(jit.verdict.detail, jit.engine + " refused, as the kernel's would: legacy packet access");
  }
  EXPECT_EQ(run.FirstDivergence(), nullptr);
}

TEST(DifferentialRefusals, EveryDocumentedRefusalSaysWhyTheKernelRefusesToo) {
  ASSERT_FALSE(KernelRefusals().empty());
  for (const KernelRefusal& refusal : KernelRefusals()) {
    EXPECT_FALSE(refusal.name.empty());
    EXPECT_GT(refusal.why.size(), 40u) << refusal.name << ": the reason must say what the kernel does";
  }
}

// bpf_kptr_xchg on a stack slot: the old value comes back in r0, the new
// one is left in the slot.
constexpr std::string_view kKptrXchgInline = R"(
-- options
kptr_xchg_inline
-- asm
stdw [%r10-8], 0x1111
mov %r1, %r10
add %r1, -8
mov %r2, 0x2222
call 194
ldxdw %r1, [%r10-8]
lsh %r1, 16
or %r0, %r1
exit
)";

TEST(DifferentialKptrXchg, TheInterpreterRunsTheHelperAndTheJitsTheRewrite) {
  const CaseRun run = RunData(kKptrXchgInline);
  ASSERT_EQ(run.runs.size(), 3u);
  const auto& interp = run.runs[0].outcome;
  ASSERT_TRUE(interp);
  EXPECT_EQ(interp->r0, 0x22221111u);
  ASSERT_EQ(interp->helper_calls.size(), 1u) << "the interpreter calls bpf_kptr_xchg";
  EXPECT_EQ(interp->helper_calls[0].id, kHelperKptrXchg);
  for (const EngineRun& jit : JitRuns(run)) {
    ASSERT_TRUE(jit.outcome) << jit.prepare_error;
    EXPECT_TRUE(jit.outcome->helper_calls.empty()) << jit.engine << " runs the inline exchange";
    EXPECT_TRUE(jit.verdict.match()) << Verdicts(run);
  }
}

TEST(DifferentialKptrXchg, FaultsInTheRewriteAreReportedAtTheCallsSourceSlot) {
  // A slot the helper refuses (a read-only map object): the verifier would
  // reject the program, so the two forms are not comparable; the JITs'
  // fault is still reported at the slot of the call, as written.
  const CaseRun run = RunData(R"(
-- options
kptr_xchg_inline
-- map 1 array key=4 value=8 entries=1
-- asm
lddw %r1, map:1
mov %r2, 5
call 194
exit
)");
  ASSERT_EQ(run.runs.size(), 3u);
  ASSERT_TRUE(run.runs[0].outcome);
  EXPECT_EQ(run.runs[0].outcome->end, EndKind::kHelperError);
  for (const EngineRun& jit : JitRuns(run)) {
    ASSERT_TRUE(jit.outcome);
    ASSERT_TRUE(jit.outcome->fault) << jit.outcome->Summary();
    EXPECT_EQ(jit.outcome->fault->insn, 3u);
    EXPECT_EQ(jit.outcome->fault->kind, AccessKind::kWrite);
    EXPECT_EQ(jit.verdict.kind, Verdict::Kind::kNotComparable) << Verdicts(run);
    EXPECT_NE(jit.verdict.detail.find("kptr_xchg refused its arguments"), std::string::npos) << Verdicts(run);
  }
}

TEST(DifferentialKptrXchg, AnErrorAfterAnInlinedCallIsStillCompared) {
  // The run ends in a callx that names no helper, after a kptr_xchg that
  // succeeded: the refusal is not the inlined helper's (found by the
  // generator: the last traced call is not the one that failed).
  const CaseRun run = RunData(R"(
-- options
kptr_xchg_inline
-- asm
mov %r1, %r10
add %r1, -8
mov %r2, 7
call 194
mov %r6, 0x100
call %r6
exit
)");
  ASSERT_EQ(run.runs.size(), 3u);
  ASSERT_TRUE(run.runs[0].outcome);
  EXPECT_EQ(run.runs[0].outcome->end, EndKind::kHelperError);
  EXPECT_FALSE(run.runs[0].outcome->refusing_helper) << "a callx that names no helper refuses nothing";
  for (const EngineRun& jit : JitRuns(run)) EXPECT_TRUE(jit.verdict.match()) << Verdicts(run);
}

TEST(DifferentialKptrXchg, CompareIgnoresOnlyTheInlinedHelpersCalls) {
  constexpr int32_t kInlined[] = {kHelperKptrXchg};
  Outcome helper;
  helper.end = EndKind::kExit;
  helper.r0 = 1;
  helper.helper_calls = {{kHelperGetPrandomU32, {}, 4}, {kHelperKptrXchg, {1, 2, 0, 0, 0}, 3}};
  Outcome inlined = helper;
  inlined.helper_calls = {{kHelperGetPrandomU32, {}, 4}};
  EXPECT_TRUE(CompareHelperWithInlined(helper, inlined, "interp", "jit", kInlined).match());
  // Anything else still counts: another helper's call, and r0.
  Outcome missing_other = inlined;
  missing_other.helper_calls.clear();
  EXPECT_EQ(CompareHelperWithInlined(helper, missing_other, "interp", "jit", kInlined).field,
            "helper call count");
  Outcome other_r0 = inlined;
  other_r0.r0 = 2;
  EXPECT_EQ(CompareHelperWithInlined(helper, other_r0, "interp", "jit", kInlined).field, "r0");
}

// The cost model (run_cost.h): one case with two more input memories
// charges every phase it went through, the JIT's first runs apart from its
// later ones, and the guest work of the JITs' runs.
TEST(DifferentialCost, EveryPhaseOfACaseIsCharged) {
  auto file = ParseCaseText(kSelfTailCall, true, "test.data");
  ASSERT_TRUE(file.ok()) << file.message();
  auto sandbox = Sandbox::Create();
  ASSERT_TRUE(sandbox.ok()) << sandbox.message();
  auto engines = MakeEngines(**sandbox, "all", {});
  ASSERT_TRUE(engines.ok()) << engines.message();
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  RunOptions options;
  options.engine_limit = 2;  // the interpreter and one JIT
  options.input_variants = {file->source.memory, file->source.memory};
  const CaseRun run = runner.Run(file->source, options);
  ASSERT_FALSE(run.load_error);
  ASSERT_EQ(run.variants.size(), 2u) << Verdicts(run);
  const RunCost& cost = runner.cost();
  for (RunPhase phase : {RunPhase::kLoad, RunPhase::kInterpreter, RunPhase::kJitCompile, RunPhase::kPackText,
                         RunPhase::kEmulatorFirst, RunPhase::kEmulatorLater, RunPhase::kCompare}) {
    EXPECT_GT(cost.Nanos(phase), 0u) << PhaseName(phase);
  }
  EXPECT_EQ(cost.Nanos(RunPhase::kDecode), 0u) << "the runner does not decode: its caller charges that";
  EXPECT_EQ(cost.first_runs, 1u);
  EXPECT_EQ(cost.later_runs, 2u);
  // 34 runs of the program (a tail call chain to the limit), every time.
  EXPECT_GE(cost.guest_executed, 3u * 34u * 10u);
  EXPECT_GT(cost.guest_translated, 0u);
  EXPECT_LT(cost.guest_translated, cost.guest_executed);
}

TEST(DifferentialCost, TranslationIsTheFirstRunsLessAsManyLaterRunsAtTheirMean) {
  RunCost cost;
  cost.Add(RunPhase::kEmulatorFirst, 1000);
  cost.Add(RunPhase::kEmulatorLater, 400);
  cost.first_runs = 2;
  cost.later_runs = 4;
  EXPECT_EQ(cost.EstimatedTranslationNanos(), 800u);  // 1000 - 2 * (400 / 4)
  cost.later_runs = 0;
  EXPECT_EQ(cost.EstimatedTranslationNanos(), 0u) << "no later runs: nothing to estimate with";
  cost.later_runs = 1;
  EXPECT_EQ(cost.EstimatedTranslationNanos(), 200u);
  cost.Add(RunPhase::kEmulatorLater, 2000);  // later runs dearer than first ones: no negative time
  EXPECT_EQ(cost.EstimatedTranslationNanos(), 0u);
}

}  // namespace
}  // namespace bpfdiff
