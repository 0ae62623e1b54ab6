#include "fuzz/generator/kernel_forms.h"

#include "isa/insn.h"

namespace bpfdiff::fuzz {

bool ToKernelVerifierForms(CaseSource& source) {
  for (const auto& program : source.programs) {
    for (const auto& insn : program) {
      if (insn.opcode == isa::kOpCallX) return false;
    }
  }
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
