// Disassembler to the assembler's syntax (see docs/assembly.md).
//
// For every valid program (one MakeProgram accepts), Assemble(Disassemble(p))
// gives back p's instructions bit for bit, with numeric jump distances and
// with labels. Immediates are printed so that they read back as the same
// bits: decimal when small, hex bit patterns when large.
//
// Slots that are not valid instructions (unknown opcodes, reserved fields
// that are not zero, registers above r10, a truncated lddw) never make it
// fail: they are shown with a `#` comment that says what is wrong, for
// error displays. Such text does not assemble back to the same slots.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "isa/insn.h"
#include "isa/program.h"

namespace bpfdiff::isa {

struct DisassembleOptions {
  // Print jump and local-call targets as labels (`L7:` lines, `ja L7`)
  // instead of distances (`ja +3`). Targets that are not an instruction
  // boundary of the program keep their distance.
  bool labels = false;
  // With `labels`: slots that get a label though nothing branches there
  // (an exception callback, which the file names by its label).
  std::span<const uint32_t> extra_labels;
};

// One instruction, without a newline: "ldxw %r0, [%r1+4]". An lddw needs its
// second slot in `next_slot` (nullptr when there is none: then the text says
// it is truncated).
std::string DisassembleInsn(const Insn& insn, const Insn* next_slot = nullptr);

// A whole program, one instruction per line, each line ending in '\n'.
std::string Disassemble(std::span<const Insn> insns, const DisassembleOptions& options = {});
std::string Disassemble(const Program& program, const DisassembleOptions& options = {});

// For error displays: one line per slot with its number, its bytes and its
// text, e.g. "   3: 61 10 04 00 00 00 00 00  ldxw %r0, [%r1+4]"; the slot
// `mark` (a faulting instruction, say) is flagged with "=>". Any slots.
std::string DisassembleForDisplay(std::span<const Insn> slots,
                                  std::optional<size_t> mark = std::nullopt);

}  // namespace bpfdiff::isa
