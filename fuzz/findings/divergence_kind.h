// What kind of divergence a differential run found: the form of the culprit
// instruction, the first after which the JIT and the interpreter part
// (harness/diff/localize.h), crossed with the JIT lowering that diverged.
// Where no culprit can be named (a JIT refusal, which keeps a kind of its
// own, or a divergence the lockstep runs cannot place), the part of the
// outcome that differs first stands in for it, crossed with the class of
// the instruction at fault where the outcomes say which that is (a fault).
//
// One bug can reach different fields in different programs (a clobbered
// register ends in r0, or is spilled to the stack first); its culprit's
// form stays the same, which is why the culprit comes first.
//
// The kind is a property of the bug, not of the input that found it: the
// fuzz targets end in a stack frame per kind (divergence_frames.h), so that
// ClusterFuzz, which groups crashes by their top frames, files one bug per
// kind and the same bug found from another input under the same one. So
// nothing input-specific goes in: no byte offset, register value, helper
// id or stack frame number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/diff/differential.h"
#include "harness/diff/localize.h"
#include "isa/insn.h"
#include "jit/jit.h"
#include "oracle/load.h"

namespace bpfdiff::fuzz {

// The first field Compare() names (harness/diff/compare.cc), by part of
// the outcome.
enum class DivergentField : uint8_t {
  kCompilation,  // a JIT refused a program the load step accepted
  kEnd,          // how the run ended (exit, fault, trap, ...)
  kFault,        // where or how both faulted: program, instruction, access, address
  kMessage,      // both trapped or had a helper refuse, with other messages
  kR0,           // the return value
  kHelperCalls,  // the helper-call trace: ids, arguments, results, count
  kTailCalls,    // the tail calls taken
  kStack,        // the BPF stack frames' bytes
  kInputMemory,  // the context / packet bytes
  kMapValues,    // the map values' bytes
  kOther,        // a field this list does not know yet
};

// The class of a BPF instruction as the ISA sorts them, with the forms
// that have code of their own in the JIT (atomics, calls, exit) apart.
enum class InsnClass : uint8_t {
  kUnknown,  // the outcomes do not say which instruction
  kAlu,
  kAlu64,
  kJmp,
  kJmp32,
  kLd,
  kLdx,
  kSt,
  kStx,
  kAtomic,  // STX in atomic mode
  kCall,    // helper calls, local calls, callx, tail calls
  kExit,
};

struct DivergenceKind {
  DivergentField field = DivergentField::kOther;
  InsnClass insn_class = InsnClass::kUnknown;
  jit::AtomicLowering lowering = jit::AtomicLowering::kLse;  // of the JIT that diverged
  // The culprit's form (fuzz/findings/culprit_form.h); empty when none was
  // located. When set, the kind is the culprit and the lowering alone.
  std::string_view culprit;
  // The engine that diverged is the kernel's interpreter (kernel-interp):
  // the two interpreters disagree, and bpfdiff's oracle or the kernel's
  // interpreter is wrong; no JIT is. The lowering means nothing then.
  bool interpreters = false;
  // The Linux tree whose engine diverged, when it is one linked beside the
  // build's own ("6.1.192": kernel-jit@6.1.192); empty otherwise. Another
  // tree's divergence is another bug.
  std::string tree = {};

  friend bool operator==(const DivergenceKind& a, const DivergenceKind& b) {
    if (a.tree != b.tree) return false;
    if (a.interpreters != b.interpreters) return false;
    if (a.interpreters) return a.field == b.field && a.insn_class == b.insn_class;
    if (a.lowering != b.lowering || a.culprit != b.culprit) return false;
    return !a.culprit.empty() || (a.field == b.field && a.insn_class == b.insn_class);
  }
};

// The part of the outcome a verdict's field names ("r0", "stack frame 1 at
// r10-8", "helper call #2 (5) argument r1", ...).
DivergentField FieldOfVerdict(std::string_view verdict_field);

InsnClass ClassOfInsn(const isa::Insn& insn);

// The kind of the run's first divergence (CaseRun::FirstDivergence), or
// nullopt when there is none. `source` is the case that ran: fault
// locations are slots of its programs. `localization` (of that divergence)
// names the culprit; without one, or when it names none, the field does.
std::optional<DivergenceKind> KindOfFirstDivergence(const CaseSource& source, const CaseRun& run,
                                                    const Localization* localization = nullptr);

// "r0", "stack", "helper calls", ...; "alu64", "ldx", ..., "unknown".
std::string_view DivergentFieldName(DivergentField field);
std::string_view InsnClassName(InsnClass insn_class);
// One line: "culprit jset32 (jit)"; without a culprit "r0 (jit)", "end at
// ldx (jit-llsc)".
std::string DescribeKind(const DivergenceKind& kind);

}  // namespace bpfdiff::fuzz
