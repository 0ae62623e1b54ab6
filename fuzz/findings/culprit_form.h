// The form of a culprit instruction (harness/diff/localize.h) as a
// finding's kind names it: the operation the JIT has a lowering of its own
// for. The operand source (imm or reg) and a load's or store's size are
// left out, so that one JIT bug found through different operands or sizes
// is one kind: "add32", "movsx", "jset32", "call helper", "probe ldxs",
// "stx", "lock fetch add32", "lddw", and "prologue" for the runs parting
// before the first instruction.
#pragma once

#include <span>
#include <string_view>

#include "isa/insn.h"

namespace bpfdiff::fuzz {

inline constexpr std::string_view kPrologueForm = "prologue";
inline constexpr std::string_view kUnknownForm = "unknown";

// The culprit form of `insn` (its first slot, for an lddw); kUnknownForm
// for an instruction of no form.
std::string_view CulpritFormOf(const isa::Insn& insn);

}  // namespace bpfdiff::fuzz
