#include "fuzz/findings/divergence_frames.h"

#include "fuzz/findings/culprit_frames.h"

namespace bpfdiff::fuzz {
namespace {

// Every frame notes its name, then calls the next through a pointer picked
// by a switch (the switch returns before the call, so it is no frame).

using FieldFrame = void (*)(FindingEnd end);
using ClassFrame = void (*)(DivergentField field, FindingEnd end);

// The innermost frames: the part of the outcome that differs.
[[gnu::noinline]] void DivergenceInCompilation(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInEnd(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInFault(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInMessage(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInR0(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInHelperCalls(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInTailCalls(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInStack(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInInputMemory(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInMapValues(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void DivergenceInOtherField(FindingEnd end) { NoteFindingFrame(__func__); end(); }

FieldFrame FieldFrameOf(DivergentField field) {
  switch (field) {
    case DivergentField::kCompilation: return DivergenceInCompilation;
    case DivergentField::kEnd: return DivergenceInEnd;
    case DivergentField::kFault: return DivergenceInFault;
    case DivergentField::kMessage: return DivergenceInMessage;
    case DivergentField::kR0: return DivergenceInR0;
    case DivergentField::kHelperCalls: return DivergenceInHelperCalls;
    case DivergentField::kTailCalls: return DivergenceInTailCalls;
    case DivergentField::kStack: return DivergenceInStack;
    case DivergentField::kInputMemory: return DivergenceInInputMemory;
    case DivergentField::kMapValues: return DivergenceInMapValues;
    case DivergentField::kOther: return DivergenceInOtherField;
  }
  return DivergenceInOtherField;
}

// The middle frames: the class of the instruction at fault.
[[gnu::noinline]] void AtAluInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtAlu64Instruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtJmpInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtJmp32Instruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtLdInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtLdxInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtStInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtStxInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtAtomicInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtCallInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}
[[gnu::noinline]] void AtExitInstruction(DivergentField field, FindingEnd end) {
  NoteFindingFrame(__func__);
  FieldFrameOf(field)(end);
}

// nullptr for an unknown class: no frame.
ClassFrame ClassFrameOf(InsnClass insn_class) {
  switch (insn_class) {
    case InsnClass::kUnknown: return nullptr;
    case InsnClass::kAlu: return AtAluInstruction;
    case InsnClass::kAlu64: return AtAlu64Instruction;
    case InsnClass::kJmp: return AtJmpInstruction;
    case InsnClass::kJmp32: return AtJmp32Instruction;
    case InsnClass::kLd: return AtLdInstruction;
    case InsnClass::kLdx: return AtLdxInstruction;
    case InsnClass::kSt: return AtStInstruction;
    case InsnClass::kStx: return AtStxInstruction;
    case InsnClass::kAtomic: return AtAtomicInstruction;
    case InsnClass::kCall: return AtCallInstruction;
    case InsnClass::kExit: return AtExitInstruction;
  }
  return nullptr;
}

// Below the lowering: the culprit's frame when there is one, else the
// field's (and the class at fault's).
// Inlined, so that it is no frame: the state is the culprit and the lowering.
[[gnu::always_inline]] inline void InnerFrames(const DivergenceKind& kind, FindingEnd end) {
  if (const CulpritFrame culprit = CulpritFrameOf(kind.culprit)) return culprit(end);
  if (const ClassFrame at = ClassFrameOf(kind.insn_class)) return at(kind.field, end);
  FieldFrameOf(kind.field)(end);
}

// The outer frames: the JIT lowering that diverged.
[[gnu::noinline]] void InJitWithLseAtomics(const DivergenceKind& kind, FindingEnd end) {
  NoteFindingFrame(__func__);
  InnerFrames(kind, end);
}
[[gnu::noinline]] void InJitWithLlscAtomics(const DivergenceKind& kind, FindingEnd end) {
  NoteFindingFrame(__func__);
  InnerFrames(kind, end);
}

// The outer frame when no JIT diverged: the kernel's interpreter and
// bpfdiff's disagree.
[[gnu::noinline]] void InterpretersDisagree(const DivergenceKind& kind, FindingEnd end) {
  NoteFindingFrame(__func__);
  InnerFrames(kind, end);
}

}  // namespace

void EndInDivergenceFrames(const DivergenceKind& kind, FindingEnd end) {
  StartFindingFrameTrail();
  NoteFindingFrame(__func__);
  if (kind.interpreters) return InterpretersDisagree(kind, end);
  switch (kind.lowering) {
    case jit::AtomicLowering::kLse: return InJitWithLseAtomics(kind, end);
    case jit::AtomicLowering::kLlSc: return InJitWithLlscAtomics(kind, end);
  }
}

}  // namespace bpfdiff::fuzz
