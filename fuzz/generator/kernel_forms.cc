#include "fuzz/generator/kernel_forms.h"

#include "isa/insn.h"
#include "isa/opcode_table.h"
#include "oracle/helpers.h"

namespace bpfdiff::fuzz {

namespace {

// Whether some branch of `program` lands on slot `pc`.
bool IsBranchTarget(const std::vector<isa::Insn>& program, size_t pc) {
  for (size_t at = 0; at < program.size(); ++at) {
    const auto form = isa::Classify(program[at]);
    if (!form) continue;
    const isa::Shape shape = isa::FormById(*form).shape;
    if (isa::NamesSlot(shape) && isa::BranchTarget(program[at], shape, at) == static_cast<int64_t>(pc)) return true;
  }
  return false;
}

// A callx whose register the slot before it sets to a helper's id, with no
// branch into it between the two, calls that helper: made a direct call
// (the register keeps the id, as it would). False when it cannot be.
bool CallxAsCall(std::vector<isa::Insn>& program, size_t pc) {
  if (pc == 0) return false;
  const isa::Insn& set = program[pc - 1];
  const uint8_t holder = program[pc].dst;
  if (set.opcode != (isa::kClassAlu64 | isa::kSrcK | isa::kAluMov) || set.dst != holder || set.imm < 0) return false;
  // (pc - 1 is no lddw's second slot: that slot's opcode is 0.)
  if (set.imm == kHelperTailCall || FindHelper(set.imm) == nullptr || IsBranchTarget(program, pc)) return false;
  program[pc] = {isa::kOpCall, 0, 0, 0, set.imm};
  return true;
}

}  // namespace

bool ToKernelVerifierForms(CaseSource& source) {
  CaseSource rewritten = source;
  for (auto& program : rewritten.programs) {
    for (size_t pc = 0; pc < program.size(); ++pc) {
      if (program[pc].opcode == isa::kOpCallX && !CallxAsCall(program, pc)) return false;
    }
  }
  source = std::move(rewritten);
  for (auto& program : source.programs) {
    for (auto& insn : program) {
      const uint8_t cls = isa::ClassOf(insn.opcode);
      const uint8_t op = isa::OpOf(insn.opcode);
      if ((cls != isa::kClassAlu && cls != isa::kClassAlu64) || isa::SourceOf(insn.opcode) != isa::kSrcK) continue;
      if (op != isa::kAluLsh && op != isa::kAluRsh && op != isa::kAluArsh) continue;
      insn.imm &= cls == isa::kClassAlu64 ? 63 : 31;
    }
  }
  return true;
}

}  // namespace bpfdiff::fuzz
