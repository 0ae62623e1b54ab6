// The table of {our word, the same instruction in LLVM assembly syntax} that
// a64_encoding_test assembles with llvm-mc and a64_disasm_test disassembles.
//
// Every encoder class of jit/a64/encoder.h has cases here: each operation,
// both widths, boundary immediates, registers 0/30/ZR/SP where the field
// allows them, and branch offsets at both ends of their range. The aliases
// of jit/a64/aliases.h are included under the class they expand to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/a64/encoder.h"

namespace bpfdiff::a64::testing {

struct CrossCheckCase {
  EncoderClass encoder_class;
  uint32_t word;       // what our encoder returned
  std::string syntax;  // the instruction for llvm-mc, e.g. "add x0, sp, #4095"
};

std::vector<CrossCheckCase> CrossCheckCases();

// "x5", "w5", "xzr", "wzr", "sp", "wsp".
std::string RegName(Width width, Reg reg);

}  // namespace bpfdiff::a64::testing
