// The kind of a divergence (fuzz/findings/divergence_kind.h): the field
// Compare() names, read back for every field it can name; the class of the
// instruction at fault; which run is the reference; and a real run with a
// planted bug.
#include "fuzz/findings/divergence_kind.h"

#include <gtest/gtest.h>

#include "fuzz/diff/diff_harness.h"
#include "harness/conformance/case_file.h"
#include "harness/diff/compare.h"

namespace bpfdiff::fuzz {
namespace {

using isa::Insn;

Outcome Exited(uint64_t r0) {
  Outcome outcome;
  outcome.end = EndKind::kExit;
  outcome.r0 = r0;
  outcome.memory.stack.assign(isa::kStackSize, 0);
  outcome.memory.context.assign(8, 0);
  outcome.memory.map_values.assign(8, 0);
  return outcome;
}

Outcome Faulted(uint32_t program, uint32_t insn, uint64_t address) {
  Outcome outcome = Exited(0);
  outcome.end = EndKind::kFault;
  outcome.fault = FaultInfo{insn, program, address, AccessKind::kRead, false};
  return outcome;
}

// What FieldOfVerdict makes of the field Compare() names for `candidate`.
DivergentField FieldComparing(const Outcome& reference, const Outcome& candidate) {
  const Verdict verdict = Compare(reference, candidate);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kDivergence) << verdict.Describe();
  return FieldOfVerdict(verdict.field);
}

TEST(FuzzDivergenceKind, EveryFieldCompareNamesHasItsKind) {
  const Outcome base = Exited(1);
  EXPECT_EQ(FieldComparing(base, Exited(2)), DivergentField::kR0);
  EXPECT_EQ(FieldComparing(base, Faulted(0, 1, 0)), DivergentField::kEnd);
  EXPECT_EQ(FieldComparing(Faulted(0, 1, 0), Faulted(0, 2, 0)), DivergentField::kFault);
  EXPECT_EQ(FieldComparing(Faulted(0, 1, 0), Faulted(1, 1, 0)), DivergentField::kFault);
  EXPECT_EQ(FieldComparing(Faulted(0, 1, 0), Faulted(0, 1, 8)), DivergentField::kFault);
  Outcome write = Faulted(0, 1, 0);
  write.fault->kind = AccessKind::kWrite;
  EXPECT_EQ(FieldComparing(Faulted(0, 1, 0), write), DivergentField::kFault);

  Outcome trap = base, other_trap = base;
  trap.end = other_trap.end = EndKind::kTrap;
  trap.message = "a";
  other_trap.message = "b";
  EXPECT_EQ(FieldComparing(trap, other_trap), DivergentField::kMessage);

  Outcome call = base;
  call.helper_calls = {HelperCall{1, {1, 2, 3, 4, 5}, 0}};
  Outcome other_call = call;
  other_call.helper_calls[0].id = 2;
  EXPECT_EQ(FieldComparing(call, other_call), DivergentField::kHelperCalls);
  other_call = call;
  other_call.helper_calls[0].args[2] = 9;
  EXPECT_EQ(FieldComparing(call, other_call), DivergentField::kHelperCalls);
  other_call = call;
  other_call.helper_calls[0].ret = 9;
  EXPECT_EQ(FieldComparing(call, other_call), DivergentField::kHelperCalls);
  EXPECT_EQ(FieldComparing(call, base), DivergentField::kHelperCalls);  // count

  Outcome tail = base;
  tail.tail_calls = {1};
  EXPECT_EQ(FieldComparing(base, tail), DivergentField::kTailCalls);

  Outcome stack = base;
  stack.memory.stack[isa::kStackSize - 8] = 1;
  EXPECT_EQ(FieldComparing(base, stack), DivergentField::kStack);
  stack.memory.stack.resize(8);
  EXPECT_EQ(FieldComparing(base, stack), DivergentField::kStack);  // size

  Outcome context = base;
  context.memory.context[3] = 1;
  EXPECT_EQ(FieldComparing(base, context), DivergentField::kInputMemory);
  Outcome maps = base;
  maps.memory.map_values[0] = 1;
  EXPECT_EQ(FieldComparing(base, maps), DivergentField::kMapValues);
}

TEST(FuzzDivergenceKind, FieldsTheRunnerNamesAndUnknownOnes) {
  EXPECT_EQ(FieldOfVerdict("compilation"), DivergentField::kCompilation);
  EXPECT_EQ(FieldOfVerdict("stackframe"), DivergentField::kOther);  // a word, not a prefix
  EXPECT_EQ(FieldOfVerdict("something new"), DivergentField::kOther);
  EXPECT_EQ(FieldOfVerdict(""), DivergentField::kOther);
}

TEST(FuzzDivergenceKind, InstructionClasses) {
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassAlu | isa::kAluAdd, 0, 0, 0, 1}), InsnClass::kAlu);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassAlu64 | isa::kAluMov, 0, 0, 0, 1}), InsnClass::kAlu64);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassJmp | isa::kJmpJeq, 0, 0, 1, 0}), InsnClass::kJmp);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassJmp32 | isa::kJmpJeq, 0, 0, 1, 0}), InsnClass::kJmp32);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kOpLddw, 0, 0, 0, 1}), InsnClass::kLd);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassLdx | isa::kModeMem | isa::kSizeW, 0, 1, 0, 0}), InsnClass::kLdx);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassLdx | isa::kModeProbeMem | isa::kSizeDW, 0, 1, 0, 0}), InsnClass::kLdx);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassSt | isa::kModeMem | isa::kSizeB, 10, 0, -8, 1}), InsnClass::kSt);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassStx | isa::kModeMem | isa::kSizeB, 10, 1, -8, 0}), InsnClass::kStx);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kClassStx | isa::kModeAtomic | isa::kSizeDW, 10, 1, -8, isa::kAtomicAdd}),
            InsnClass::kAtomic);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kOpCall, 0, 0, 0, 1}), InsnClass::kCall);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kOpCallX, 0, 0, 0, 0}), InsnClass::kCall);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kOpTailCall, 0, 0, 0, 0}), InsnClass::kCall);
  EXPECT_EQ(ClassOfInsn(Insn{isa::kOpExit, 0, 0, 0, 0}), InsnClass::kExit);
}

// A case of two programs: program 1's instruction 1 is a load.
CaseSource TwoPrograms() {
  CaseSource source;
  source.programs = {{Insn{isa::kClassAlu64 | isa::kAluMov, 0, 0, 0, 1}, Insn{isa::kOpExit, 0, 0, 0, 0}},
                     {Insn{isa::kClassAlu64 | isa::kAluMov, 0, 0, 0, 1},
                      Insn{isa::kClassLdx | isa::kModeMem | isa::kSizeW, 0, 1, 0, 0}, Insn{isa::kOpExit, 0, 0, 0, 0}}};
  return source;
}

EngineRun Ran(std::string engine, Outcome outcome, const Outcome* reference = nullptr) {
  EngineRun run;
  run.engine = std::move(engine);
  if (reference != nullptr) run.verdict = Compare(*reference, outcome);
  run.outcome = std::move(outcome);
  return run;
}

TEST(FuzzDivergenceKind, TheFaultLocatesADifferenceInHowTheRunEnded) {
  const CaseSource source = TwoPrograms();
  // The JIT faults at the load where the interpreter exits.
  CaseRun run;
  const Outcome interp = Exited(1);
  run.runs = {Ran("interp", interp), Ran("jit", Faulted(1, 1, 0x10), &interp)};
  EXPECT_EQ(KindOfFirstDivergence(source, run),
            (DivergenceKind{DivergentField::kEnd, InsnClass::kLdx, jit::AtomicLowering::kLse, {}}));

  // The interpreter faults there (program 1, instruction 1) and the JIT
  // faults elsewhere: the reference's fault is the one at issue.
  const Outcome interp_fault = Faulted(1, 1, 0x10);
  run.runs = {Ran("interp", interp_fault), Ran("jit-llsc", Faulted(1, 0, 0x10), &interp_fault)};
  EXPECT_EQ(KindOfFirstDivergence(source, run),
            (DivergenceKind{DivergentField::kFault, InsnClass::kLdx, jit::AtomicLowering::kLlSc, {}}));

  // A fault outside the programs says nothing about the class.
  run.runs = {Ran("interp", interp), Ran("jit", Faulted(1, 7, 0x10), &interp)};
  EXPECT_EQ(KindOfFirstDivergence(source, run)->insn_class, InsnClass::kUnknown);
}

TEST(FuzzDivergenceKind, AValueDifferenceHasNoInstructionClass) {
  CaseRun run;
  Outcome interp = Faulted(1, 1, 0x10), jit = interp;
  jit.memory.stack[0] = 1;  // both faulted at the load; the stack differs
  run.runs = {Ran("interp", interp), Ran("jit", jit, &interp)};
  EXPECT_EQ(KindOfFirstDivergence(TwoPrograms(), run),
            (DivergenceKind{DivergentField::kStack, InsnClass::kUnknown, jit::AtomicLowering::kLse, {}}));
}

TEST(FuzzDivergenceKind, TheFirstDivergenceAsTheRunFindsItAgainstItsOwnReference) {
  CaseRun run;
  const Outcome interp = Exited(1);
  run.runs = {Ran("interp", interp), Ran("jit", interp, &interp)};
  EXPECT_EQ(KindOfFirstDivergence(TwoPrograms(), run), std::nullopt);
  // A variant whose reference faulted at the load and whose JIT exited.
  const Outcome variant_interp = Faulted(1, 1, 0x10);
  run.variants = {{Ran("interp", variant_interp), Ran("jit", Exited(3), &variant_interp)}};
  ASSERT_NE(run.FirstDivergence(), nullptr);
  EXPECT_EQ(KindOfFirstDivergence(TwoPrograms(), run),
            (DivergenceKind{DivergentField::kEnd, InsnClass::kLdx, jit::AtomicLowering::kLse, {}}));
}

TEST(FuzzDivergenceKind, Descriptions) {
  EXPECT_EQ(DescribeKind({DivergentField::kR0, InsnClass::kUnknown, jit::AtomicLowering::kLse, {}}), "r0 (jit)");
  EXPECT_EQ(DescribeKind({DivergentField::kEnd, InsnClass::kLdx, jit::AtomicLowering::kLlSc, {}}),
            "end at ldx (jit-llsc)");
}

// A real run: a 32-bit add done as a 64-bit one leaves the upper half set,
// and r0 shows it.
TEST(FuzzDivergenceKind, APlantedBugsDivergence) {
  auto bugs = PlantedBugsNamed("alu32-add-no-zext");
  ASSERT_TRUE(bugs);
  auto harness = DiffHarness::Create(*bugs);
  ASSERT_TRUE(harness) << harness.message();
  auto file = ParseCaseText("lddw %r0, 0x1ffffffff\nadd32 %r0, 1\nexit\n", false, "test");
  ASSERT_TRUE(file) << file.message();
  const CaseRun run = (*harness)->RunCase(file->source);
  EXPECT_EQ(KindOfFirstDivergence(file->source, run),
            (DivergenceKind{DivergentField::kR0, InsnClass::kUnknown, jit::AtomicLowering::kLse, {}}));
}

}  // namespace
}  // namespace bpfdiff::fuzz
