// The frames a fuzz target ends in (fuzz/findings/*_frames.h): every kind
// goes through frames of its own, named as the headers say, and calls the
// end it is given. `end` here returns, so the frames return too; the trail
// each frame notes is what is checked. tests/fuzz/crash_states_check.py
// checks the real stacks of the targets' aborts.
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/findings/culprit_form.h"
#include "fuzz/findings/culprit_frames.h"
#include "fuzz/findings/determinism_frames.h"
#include "fuzz/findings/divergence_frames.h"
#include "fuzz/findings/pack_frames.h"
#include "fuzz/findings/recursion_frames.h"
#include "isa/opcode_table.h"

namespace bpfdiff::fuzz {
namespace {

using recursion::Policy;
using Trail = std::vector<std::string>;

int ends = 0;
Trail trail_at_end;
void RecordEnd() {
  ++ends;
  trail_at_end.clear();
  for (auto name : FindingFrameTrail()) trail_at_end.emplace_back(name);
}

template <typename Kind, typename Frames>
Trail TrailOf(const Kind& kind, Frames frames) {
  ends = 0;
  frames(kind, &RecordEnd);
  EXPECT_EQ(ends, 1) << "the innermost frame calls the end once";
  return trail_at_end;
}

TEST(FuzzFindingFrames, ADivergenceGoesThroughItsFieldClassAndLowering) {
  EXPECT_EQ(TrailOf(DivergenceKind{DivergentField::kR0, InsnClass::kUnknown, jit::AtomicLowering::kLse, {}},
                    EndInDivergenceFrames),
            (Trail{"EndInDivergenceFrames", "InJitWithLseAtomics", "DivergenceInR0"}));
  EXPECT_EQ(TrailOf(DivergenceKind{DivergentField::kEnd, InsnClass::kLdx, jit::AtomicLowering::kLlSc, {}},
                    EndInDivergenceFrames),
            (Trail{"EndInDivergenceFrames", "InJitWithLlscAtomics", "AtLdxInstruction", "DivergenceInEnd"}));
}

// An instruction of form `form`: its opcode and its discriminating field.
isa::Insn InsnOfForm(const isa::Form& form) {
  isa::Insn insn{};
  insn.opcode = form.opcode;
  switch (form.discriminant) {
    case isa::Discriminant::kNone: break;
    case isa::Discriminant::kSrc: insn.src = static_cast<uint8_t>(form.discriminant_value); break;
    case isa::Discriminant::kOffset: insn.offset = static_cast<int16_t>(form.discriminant_value); break;
    case isa::Discriminant::kImm: insn.imm = form.discriminant_value; break;
  }
  return insn;
}

// "lock fetch add32" -> "CulpritIsLockFetchAdd32"
std::string CulpritFrameName(std::string_view form) {
  std::string name = "CulpritIs";
  bool upper = true;
  for (char c : form) {
    if (c == ' ' || c == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

TEST(FuzzFindingFrames, ALocatedDivergenceGoesThroughItsCulpritsFormAndLowering) {
  // Whatever field differs: the culprit's form is the kind.
  for (auto field : {DivergentField::kR0, DivergentField::kStack, DivergentField::kHelperCalls}) {
    EXPECT_EQ(TrailOf(DivergenceKind{field, InsnClass::kUnknown, jit::AtomicLowering::kLse, "jset32"},
                      EndInDivergenceFrames),
              (Trail{"EndInDivergenceFrames", "InJitWithLseAtomics", "CulpritIsJset32"}));
  }
  EXPECT_EQ(TrailOf(DivergenceKind{DivergentField::kR0, InsnClass::kUnknown, jit::AtomicLowering::kLlSc, "prologue"},
                    EndInDivergenceFrames),
            (Trail{"EndInDivergenceFrames", "InJitWithLlscAtomics", "CulpritIsPrologue"}));
}

TEST(FuzzFindingFrames, EveryFormOfTheOpcodeTableHasACulpritFrameNamedAfterIt) {
  std::set<std::string> frames;
  for (const isa::Form& form : isa::AllForms()) {
    const std::string_view culprit = CulpritFormOf(InsnOfForm(form));
    ASSERT_NE(culprit, kUnknownForm) << form.name;
    EXPECT_TRUE(CulpritFrameOf(culprit) != nullptr) << form.name << " -> " << culprit;
    const Trail trail = TrailOf(DivergenceKind{DivergentField::kR0, InsnClass::kUnknown, jit::AtomicLowering::kLse,
                                               culprit},
                                EndInDivergenceFrames);
    ASSERT_EQ(trail.size(), 3u) << form.name;
    EXPECT_EQ(trail.back(), CulpritFrameName(culprit)) << form.name;
    frames.insert(trail.back());
  }
  EXPECT_TRUE(CulpritFrameOf(kPrologueForm) != nullptr);
  // Forms that differ only in operand source or access size share a frame.
  EXPECT_EQ(CulpritFormOf(isa::Insn{isa::kClassLdx | isa::kModeMem | isa::kSizeB, 0, 0, 0, 0}),
            CulpritFormOf(isa::Insn{isa::kClassLdx | isa::kModeMem | isa::kSizeDW, 0, 0, 0, 0}));
  EXPECT_GT(frames.size(), 80u);
}

TEST(FuzzFindingFrames, EveryDivergenceKindHasFramesOfItsOwn) {
  const DivergentField fields[] = {
      DivergentField::kCompilation, DivergentField::kEnd,       DivergentField::kFault,
      DivergentField::kMessage,     DivergentField::kR0,        DivergentField::kHelperCalls,
      DivergentField::kTailCalls,   DivergentField::kStack,     DivergentField::kInputMemory,
      DivergentField::kMapValues,   DivergentField::kOther};
  const InsnClass classes[] = {InsnClass::kUnknown, InsnClass::kAlu,  InsnClass::kAlu64, InsnClass::kJmp,
                               InsnClass::kJmp32,   InsnClass::kLd,   InsnClass::kLdx,   InsnClass::kSt,
                               InsnClass::kStx,     InsnClass::kAtomic, InsnClass::kCall, InsnClass::kExit};
  std::set<Trail> trails;
  std::set<std::string> innermost;
  size_t kinds = 0;
  for (auto lowering : {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc}) {
    for (auto field : fields) {
      for (auto insn_class : classes) {
        const Trail trail = TrailOf(DivergenceKind{field, insn_class, lowering, {}}, EndInDivergenceFrames);
        trails.insert(trail);
        innermost.insert(trail.back());
        ++kinds;
        // What ClusterFuzz cuts a frame's name at, and what it ignores.
        for (const auto& name : trail) {
          EXPECT_EQ(name.find_first_of("([ <"), std::string::npos) << name;
          EXPECT_EQ(name.find("assert"), std::string::npos) << name;
        }
      }
    }
  }
  EXPECT_EQ(trails.size(), kinds);
  EXPECT_EQ(innermost.size(), std::size(fields)) << "each field has an innermost frame of its own";
}

TEST(FuzzFindingFrames, EveryPackInvariantHasAFrameOfItsOwn) {
  using lifecycle::Invariant;
  const Invariant invariants[] = {Invariant::kFreedSlotInvalid,   Invariant::kOwnership,
                                  Invariant::kNoOverwriteInUse,   Invariant::kIcacheDiscipline,
                                  Invariant::kOneCacheOpPerRange, Invariant::kExtableStructure,
                                  Invariant::kAccounting,         Invariant::kStaleEntryTraps,
                                  Invariant::kOutcome,            Invariant::kPackHolesInvalid,
                                  Invariant::kSlotAsWritten,      Invariant::kJitErrorPath,
                                  Invariant::kArchitectureRules};
  std::set<Trail> trails;
  for (auto invariant : invariants) trails.insert(TrailOf(invariant, EndInPackInvariantFrames));
  EXPECT_EQ(trails.size(), std::size(invariants));
  EXPECT_EQ(TrailOf(Invariant::kIcacheDiscipline, EndInPackInvariantFrames),
            (Trail{"EndInPackInvariantFrames", "PackInvariantIcacheDiscipline"}));
}

TEST(FuzzFindingFrames, RecursionFindingsByWhatBrokeAndPolicy) {
  const RecursionBreak breaks[] = {
      RecursionBreak::kAttachedProgramsDoNotLoad, RecursionBreak::kScheduleDoesNotRun,
      RecursionBreak::kCodeDisagreesWithModel,    RecursionBreak::kPolicyInvariantBroken,
      RecursionBreak::kRunDiffersFromInterpreter, RecursionBreak::kRunCannotGoOn,
      RecursionBreak::kPoliciesNotEquivalent};
  std::set<Trail> trails;
  size_t kinds = 0;
  for (auto what : breaks) {
    for (std::optional<Policy> policy : {std::optional<Policy>{}, std::optional<Policy>{Policy::kAtomic},
                                         std::optional<Policy>{Policy::kPerContext},
                                         std::optional<Policy>{Policy::kLanded}}) {
      trails.insert(TrailOf(RecursionFindingKind{what, policy}, EndInRecursionFrames));
      ++kinds;
    }
  }
  EXPECT_EQ(trails.size(), kinds);
  EXPECT_EQ(TrailOf(RecursionFindingKind{RecursionBreak::kCodeDisagreesWithModel, Policy::kPerContext},
                    EndInRecursionFrames),
            (Trail{"EndInRecursionFrames", "UnderPerContextPolicy", "RecursionCodeDisagreesWithModel"}));
}

TEST(FuzzFindingFrames, RecursionKindOfARunIsItsFirstFindings) {
  recursion::RunResult run;
  run.config.policy = Policy::kLanded;
  run.findings = {{recursion::Finding::Kind::kInvariant, 1, "A.1", "x"},
                  {recursion::Finding::Kind::kModel, 2, "A.1", "y"}};
  EXPECT_EQ(KindOfRunFindings(run), (RecursionFindingKind{RecursionBreak::kPolicyInvariantBroken, Policy::kLanded}));
  EXPECT_EQ(DescribeKind(KindOfRunFindings(run)), "invariant under landed");
}

TEST(FuzzFindingFrames, DeterminismFindingsByWhatBroke) {
  std::set<Trail> trails;
  for (auto what : {DeterminismBreak::kSecondCompileFails, DeterminismBreak::kCompileAtOtherOffsetFails,
                    DeterminismBreak::kCodeDiffers, DeterminismBreak::kExtableDiffers}) {
    trails.insert(TrailOf(what, [](DeterminismBreak w, FindingEnd end) { EndInDeterminismFrames(w, end); }));
  }
  EXPECT_EQ(trails.size(), 4u);
}

TEST(FuzzFindingFrames, DeterminismFindingsWithACulpritEndInItsFrame) {
  EXPECT_EQ(TrailOf(DeterminismBreak::kCodeDiffers,
                    [](DeterminismBreak w, FindingEnd end) { EndInDeterminismFrames(w, end, "call local"); }),
            (Trail{"EndInDeterminismFrames", "CodeDiffersBetweenCompiles", "CulpritIsCallLocal"}));
}

TEST(FuzzFindingFrames, ACodeWordIsTheCulpritOfTheInstructionWhoseLoweringHoldsIt) {
  isa::Program program;
  program.insns = {isa::Insn{isa::kClassAlu64 | isa::kAluMov, 0, 0, 0, 1},
                   isa::Insn{isa::kClassAlu | isa::kAluDiv, 0, 0, 0, 1},  // empty lowering
                   isa::Insn{isa::kOpExit, 0, 0, 0, 0}};
  jit::CompiledSubprogram sub;
  sub.first_slot = 0;
  sub.end_slot = 3;
  sub.offsets = {4, 5, 5, 6};  // prologue 0..3, mov 4, div32 empty, exit 5, epilogue 6..
  EXPECT_EQ(CulpritFormAtWord(program, sub, 0), kPrologueForm);
  EXPECT_EQ(CulpritFormAtWord(program, sub, 4), "mov");
  EXPECT_EQ(CulpritFormAtWord(program, sub, 5), "exit");
  EXPECT_EQ(CulpritFormAtWord(program, sub, 9), kEpilogueForm);
}

}  // namespace
}  // namespace bpfdiff::fuzz
