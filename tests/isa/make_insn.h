// An instruction from its fields, the unnamed ones zero: the tests' way of
// writing instructions that the assembler would refuse or could not say.
#pragma once

#include <cstdint>

#include "isa/insn.h"

namespace bpfdiff::isa_testing {

constexpr isa::Insn Make(uint8_t opcode, uint8_t dst = 0, uint8_t src = 0, int16_t offset = 0, int32_t imm = 0) {
  isa::Insn insn{};
  insn.opcode = opcode;
  insn.dst = dst;
  insn.src = src;
  insn.offset = offset;
  insn.imm = imm;
  return insn;
}

}  // namespace bpfdiff::isa_testing
