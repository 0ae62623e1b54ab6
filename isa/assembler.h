// Assembler for the bpf_conformance assembly syntax (see docs/assembly.md).
//
//   # a comment (also ';')
//   mov %r0, 0
//   ldxw %r1, [%r10-8]
//   jeq %r1, 0x10, done          # a label, or +N / -N slots from the next one
//   lock fetch add32 [%r10-8], %r1
//   lddw %r2, map_value:3+16     # our extension for kernel-internal forms
//   done:
//   exit
//
// The opcode table drives it: a line's mnemonic names a few forms (`add`
// names the immediate and the register form) and the operands pick one by
// their kind, as isa/syntax.h writes it for the form's Shape. The assembler
// produces instructions; it does not validate programs (MakeProgram does),
// but it never truncates a value that does not fit its field.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "isa/insn.h"
#include "support/result.h"

namespace bpfdiff::isa {

struct AssembleOptions {
  // The number of the first line of the text in its file, so that errors
  // name file lines when the text is a section of a larger file.
  size_t first_line = 1;
};

// Errors read "line 3, column 9: unknown register '%r11' (registers are
// %r0..%r10)". An empty text (or one of only comments and labels) assembles
// to no instructions.
Result<std::vector<Insn>> Assemble(std::string_view text, const AssembleOptions& options = {});

// The slot that label `label` of `text` names (as Assemble reads the text).
Result<uint32_t> LabelSlot(std::string_view text, std::string_view label, const AssembleOptions& options = {});

}  // namespace bpfdiff::isa
