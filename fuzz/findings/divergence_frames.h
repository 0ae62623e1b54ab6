// The frames diff_fuzzer ends in for a divergence (see finding_frames.h),
// innermost first, when the culprit is located:
//
//   CulpritIs<Form>           the culprit's form (culprit_form.h), e.g.
//                             CulpritIsJset32, CulpritIsLockFetchAdd32
//   InJitWith<Lse|Llsc>Atomics  the JIT lowering that diverged
//   EndInDivergenceFrames
//
// and otherwise (a JIT refusal, or a divergence with no culprit located):
//
//   DivergenceIn<Field>       the part of the outcome that differs first
//   At<Class>Instruction      the class of the instruction at fault, when
//                             the outcomes say which (a fault); else absent
//   InJitWith<Lse|Llsc>Atomics  the JIT lowering that diverged
//   EndInDivergenceFrames
//
// and, when the engine that diverged is the kernel's interpreter (no JIT is
// at fault: the two interpreters disagree), InterpretersDisagree in place
// of the lowering's frame; so that, for example, a wrong r0 that no culprit explains has the crash state
//
//   bpfdiff::fuzz::DivergenceInR0
//   bpfdiff::fuzz::InJitWithLseAtomics
//   bpfdiff::fuzz::EndInDivergenceFrames
//
// and a JIT that faults where the interpreter does not, at a load:
//
//   bpfdiff::fuzz::DivergenceInEnd
//   bpfdiff::fuzz::AtLdxInstruction
//   bpfdiff::fuzz::InJitWithLseAtomics
#pragma once

#include "fuzz/findings/divergence_kind.h"
#include "fuzz/findings/finding_frames.h"

namespace bpfdiff::fuzz {

// Goes through the frames of `kind` and calls `end` in the innermost.
void EndInDivergenceFrames(const DivergenceKind& kind, FindingEnd end);

}  // namespace bpfdiff::fuzz
