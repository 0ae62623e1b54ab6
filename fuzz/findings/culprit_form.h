// The form of a culprit instruction (harness/diff/localize.h) as a
// finding's kind names it: the operation the JIT has a lowering of its own
// for. The operand source (imm or reg) and a load's or store's size are
// left out, so that one JIT bug found through different operands or sizes
// is one kind: "add32", "movsx", "jset32", "call helper", "probe ldxs",
// "stx", "lock fetch add32", "lddw"; "prologue" for the runs parting
// before the first instruction, "epilogue" for code after the last.
#pragma once

#include <span>
#include <string_view>

#include "isa/insn.h"
#include "isa/program.h"
#include "jit/jit.h"

namespace bpfdiff::fuzz {

inline constexpr std::string_view kPrologueForm = "prologue";
inline constexpr std::string_view kEpilogueForm = "epilogue";
inline constexpr std::string_view kUnknownForm = "unknown";

// The culprit form of `insn` (its first slot, for an lddw); kUnknownForm
// for an instruction of no form.
std::string_view CulpritFormOf(const isa::Insn& insn);

// The culprit form of the code at word `word` of `sub`, an image of
// `program`: the form of the BPF instruction whose lowering holds it
// (the offset table says), or the prologue or epilogue.
std::string_view CulpritFormAtWord(const isa::Program& program, const jit::CompiledSubprogram& sub, uint64_t word);

}  // namespace bpfdiff::fuzz
