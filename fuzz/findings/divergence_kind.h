// What kind of divergence a differential run found: the part of the outcome
// that differs first, crossed with the class of the instruction at fault
// where the outcomes say which instruction that is (a fault), and the JIT
// lowering that diverged.
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

  friend bool operator==(const DivergenceKind&, const DivergenceKind&) = default;
};

// The part of the outcome a verdict's field names ("r0", "stack frame 1 at
// r10-8", "helper call #2 (5) argument r1", ...).
DivergentField FieldOfVerdict(std::string_view verdict_field);

InsnClass ClassOfInsn(const isa::Insn& insn);

// The kind of the run's first divergence (CaseRun::FirstDivergence), or
// nullopt when there is none. `source` is the case that ran: fault
// locations are slots of its programs.
std::optional<DivergenceKind> KindOfFirstDivergence(const CaseSource& source, const CaseRun& run);

// "r0", "stack", "helper calls", ...; "alu64", "ldx", ..., "unknown".
std::string_view DivergentFieldName(DivergentField field);
std::string_view InsnClassName(InsnClass insn_class);
// One line: "r0 (jit)", "end at ldx (jit-llsc)".
std::string DescribeKind(const DivergenceKind& kind);

}  // namespace bpfdiff::fuzz
