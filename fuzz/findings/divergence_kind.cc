#include "fuzz/findings/divergence_kind.h"

#include <vector>

#include <fmt/format.h>

#include "fuzz/findings/culprit_form.h"
#include "harness/diff/engines.h"

namespace bpfdiff::fuzz {
namespace {

// `text` is `word` or starts with `word` and a space.
bool StartsWithWord(std::string_view text, std::string_view word) {
  return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

// The fault that locates the divergence: for a difference in how the run
// ended or where it faulted, the reference's fault when it has one (where
// the program faults), else the candidate's (where the JIT faulted
// instead). Any other field differs after both ended alike: a fault there
// is not what differs.
const FaultInfo* FaultAtIssue(DivergentField field, const Outcome& reference, const Outcome& candidate) {
  if (field != DivergentField::kEnd && field != DivergentField::kFault) return nullptr;
  for (const Outcome* outcome : {&reference, &candidate}) {
    if (outcome->end == EndKind::kFault && outcome->fault) return &*outcome->fault;
  }
  return nullptr;
}

InsnClass ClassAt(const CaseSource& source, const FaultInfo& fault) {
  if (fault.program >= source.programs.size()) return InsnClass::kUnknown;
  const auto& program = source.programs[fault.program];
  if (fault.insn >= program.size()) return InsnClass::kUnknown;
  return ClassOfInsn(program[fault.insn]);
}

}  // namespace

DivergentField FieldOfVerdict(std::string_view field) {
  struct Prefix {
    std::string_view word;
    DivergentField field;
  };
  // The first words of the fields Compare() and the differential runner
  // name; tests/fuzz/divergence_kind_test.cc makes each of them diverge.
  static constexpr Prefix kPrefixes[] = {
      {"compilation", DivergentField::kCompilation},
      {"end", DivergentField::kEnd},
      {"fault", DivergentField::kFault},
      {"message", DivergentField::kMessage},
      {"r0", DivergentField::kR0},
      {"helper call", DivergentField::kHelperCalls},
      {"tail calls", DivergentField::kTailCalls},
      {"stack", DivergentField::kStack},
      {"context", DivergentField::kInputMemory},
      {"map values", DivergentField::kMapValues},
  };
  for (const auto& prefix : kPrefixes) {
    if (StartsWithWord(field, prefix.word)) return prefix.field;
  }
  return DivergentField::kOther;
}

InsnClass ClassOfInsn(const isa::Insn& insn) {
  switch (isa::ClassOf(insn.opcode)) {
    case isa::kClassLd: return InsnClass::kLd;
    case isa::kClassLdx: return InsnClass::kLdx;
    case isa::kClassSt: return InsnClass::kSt;
    case isa::kClassStx:
      return isa::ModeOf(insn.opcode) == isa::kModeAtomic ? InsnClass::kAtomic : InsnClass::kStx;
    case isa::kClassAlu: return InsnClass::kAlu;
    case isa::kClassAlu64: return InsnClass::kAlu64;
    case isa::kClassJmp32: return InsnClass::kJmp32;
    default: break;  // kClassJmp
  }
  switch (isa::OpOf(insn.opcode)) {
    case isa::kJmpCall:
    case isa::kJmpTailCall: return InsnClass::kCall;
    case isa::kJmpExit: return InsnClass::kExit;
    default: return InsnClass::kJmp;
  }
}

std::optional<DivergenceKind> KindOfFirstDivergence(const CaseSource& source, const CaseRun& run,
                                                    const Localization* localization) {
  const EngineRun* diverged = run.FirstDivergence();  // nothing to do for the inputs that agree
  if (diverged == nullptr) return std::nullopt;
  DivergenceKind kind;
  if (localization != nullptr && localization->culprit && run.loaded) {
    const Culprit& culprit = *localization->culprit;
    kind.culprit = culprit.prologue ? kPrologueForm
                                    : CulpritFormOf(run.loaded->programs[culprit.program].program.insns[culprit.slot]);
  }
  kind.field = FieldOfVerdict(diverged->verdict.field);
  if (const EngineSpec* spec = FindEngine(diverged->engine)) {
    kind.lowering = spec->atomics;
    kind.interpreters = spec->kind == EngineKind::kInterpreter;
    if (spec->tree != nullptr) kind.tree = spec->tree->version;
  }
  const std::vector<EngineRun>* runs = run.RunsHolding(*diverged);
  const EngineRun& reference = runs != nullptr ? runs->front() : run.runs.front();  // what it was compared with
  if (reference.outcome && diverged->outcome) {
    if (const FaultInfo* fault = FaultAtIssue(kind.field, *reference.outcome, *diverged->outcome)) {
      kind.insn_class = ClassAt(source, *fault);
    }
  }
  return kind;
}

std::string_view DivergentFieldName(DivergentField field) {
  switch (field) {
    case DivergentField::kCompilation: return "compilation";
    case DivergentField::kEnd: return "end";
    case DivergentField::kFault: return "fault";
    case DivergentField::kMessage: return "message";
    case DivergentField::kR0: return "r0";
    case DivergentField::kHelperCalls: return "helper calls";
    case DivergentField::kTailCalls: return "tail calls";
    case DivergentField::kStack: return "stack";
    case DivergentField::kInputMemory: return "input memory";
    case DivergentField::kMapValues: return "map values";
    case DivergentField::kOther: return "other field";
  }
  return "?";
}

std::string_view InsnClassName(InsnClass insn_class) {
  switch (insn_class) {
    case InsnClass::kUnknown: return "unknown";
    case InsnClass::kAlu: return "alu";
    case InsnClass::kAlu64: return "alu64";
    case InsnClass::kJmp: return "jmp";
    case InsnClass::kJmp32: return "jmp32";
    case InsnClass::kLd: return "ld";
    case InsnClass::kLdx: return "ldx";
    case InsnClass::kSt: return "st";
    case InsnClass::kStx: return "stx";
    case InsnClass::kAtomic: return "atomic";
    case InsnClass::kCall: return "call";
    case InsnClass::kExit: return "exit";
  }
  return "?";
}

std::string DescribeKind(const DivergenceKind& kind) {
  // Another tree's divergence names its tree last.
  const std::string tree = kind.tree.empty() ? "" : fmt::format(" on linux {}", kind.tree);
  if (kind.interpreters) {
    const std::string at =
        kind.insn_class == InsnClass::kUnknown ? "" : fmt::format(" at {}", InsnClassName(kind.insn_class));
    return fmt::format("the two interpreters disagree: {}{} (kernel-interp against interp: bpfdiff's oracle or "
                       "the kernel's interpreter is wrong, no JIT){}",
                       DivergentFieldName(kind.field), at, tree);
  }
  if (!kind.culprit.empty()) {
    return fmt::format("culprit {} ({}){}", kind.culprit, JitEngineFor(kind.lowering).name, tree);
  }
  const std::string at =
      kind.insn_class == InsnClass::kUnknown ? "" : fmt::format(" at {}", InsnClassName(kind.insn_class));
  return fmt::format("{}{} ({}){}", DivergentFieldName(kind.field), at, JitEngineFor(kind.lowering).name, tree);
}

}  // namespace bpfdiff::fuzz
