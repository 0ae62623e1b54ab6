#include "fuzz/findings/culprit_form.h"

#include "isa/opcode_table.h"

namespace bpfdiff::fuzz {
namespace {

std::string_view EndianForm(std::string_view mnemonic) {
  if (mnemonic.starts_with("le")) return "le";
  if (mnemonic.starts_with("be")) return "be";
  return "bswap";
}

std::string_view LoadForm(uint8_t opcode) {
  switch (isa::ModeOf(opcode)) {
    case isa::kModeMemSx: return "ldxs";
    case isa::kModeProbeMem: return "probe ldx";
    case isa::kModeProbeMemSx: return "probe ldxs";
    case isa::kModeProbeMem32: return "probe32 ldx";
    default: return "ldx";
  }
}

}  // namespace

std::string_view CulpritFormOf(const isa::Insn& insn) {
  const auto id = isa::Classify(insn);
  if (!id) return kUnknownForm;
  const isa::Form& form = isa::FormById(*id);
  const bool alu32 = isa::ClassOf(insn.opcode) == isa::kClassAlu;
  switch (form.shape) {
    case isa::Shape::kAluImm:
    case isa::Shape::kAluReg:
    case isa::Shape::kAluUnary:
    case isa::Shape::kJa:
    case isa::Shape::kJa32:
    case isa::Shape::kJumpImm:
    case isa::Shape::kJumpReg: return form.mnemonic;  // "add32", "neg", "ja32", "jset32": static storage
    case isa::Shape::kMovSx: return alu32 ? "movsx32" : "movsx";
    case isa::Shape::kMovPerCpu: return "addr_percpu";
    case isa::Shape::kAddrSpaceCast: return "addr_space_cast";
    case isa::Shape::kEndian: return EndianForm(form.mnemonic);
    case isa::Shape::kCallHelper: return "call helper";
    case isa::Shape::kCallLocal: return "call local";
    case isa::Shape::kCallKfunc: return "call kfunc";
    case isa::Shape::kCallReg: return "callx";
    case isa::Shape::kTailCall: return "tail_call";
    case isa::Shape::kExit: return "exit";
    case isa::Shape::kLddw:
    case isa::Shape::kLddwMapFd:
    case isa::Shape::kLddwMapValue: return "lddw";
    case isa::Shape::kLddwFunc: return "lddw_func";
    case isa::Shape::kLdAbs: return "ldabs";
    case isa::Shape::kLdInd: return "ldind";
    case isa::Shape::kLoad: return LoadForm(insn.opcode);
    case isa::Shape::kStoreImm: return form.kernel_internal ? "probe32 st" : "st";
    case isa::Shape::kStoreReg: return form.kernel_internal ? "probe32 stx" : "stx";
    // "lock fetch add32"; the arena's atomics share one frame: their
    // lowering is the same as the plain ones' after the address.
    case isa::Shape::kAtomic: return form.kernel_internal ? std::string_view("probe32 lock") : std::string_view(form.name);
  }
  return kUnknownForm;
}

std::string_view CulpritFormAtWord(const isa::Program& program, const jit::CompiledSubprogram& sub, uint64_t word) {
  if (sub.offsets.empty() || word < sub.offsets.front()) return kPrologueForm;
  if (word >= sub.offsets.back()) return kEpilogueForm;
  // The last slot whose code starts at or before the word (slots with an
  // empty lowering start where the next does).
  size_t i = 0;
  while (i + 1 < sub.offsets.size() && sub.offsets[i + 1] <= word) ++i;
  const size_t slot = sub.first_slot + i;
  return slot < program.insns.size() ? CulpritFormOf(program.insns[slot]) : kUnknownForm;
}

}  // namespace bpfdiff::fuzz
