// The interpreter's conditional jumps: whether `if (dst OP src|imm)` is
// taken, on 64 bits (JMP) or the low 32 (JMP32), signed or unsigned
// (internal to oracle/interpreter.cc).
#pragma once

#include <cstdint>

#include "isa/insn.h"
#include "oracle/interpreter/width.h"

namespace bpfdiff::interp {

// What a JMP or JMP32 instruction does: jump by its offset (a conditional
// jump taken, or ja), go on, or something else (gotol, call, callx, exit,
// tail call), decided apart.
enum class Branch : uint8_t { kNotTaken, kTaken, kOther };

constexpr Branch Taken(bool condition) { return condition ? Branch::kTaken : Branch::kNotTaken; }

// Whether the conditional jump `insn` is taken. JMP compares 64 bits, JMP32
// the low 32; imm is sign-extended to 64 bits first. One case per form, as
// the decoder sees it; the conditional jumps come first because they are
// most of a program's jumps.
[[gnu::always_inline]] inline Branch ConditionalBranch(const isa::Insn& insn, uint64_t dst, uint64_t src) {
  const uint64_t imm = SExt32(insn.imm);
  switch (insn.opcode) {
    case isa::kClassJmp | isa::kJmpJa: return Branch::kTaken;  // goto +offset
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJeq: return Taken(dst == imm);
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJeq: return Taken(dst == src);
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJne: return Taken(dst != imm);
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJne: return Taken(dst != src);
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJgt: return Taken(dst > imm);
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJgt: return Taken(dst > src);
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJge: return Taken(dst >= imm);
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJge: return Taken(dst >= src);
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJlt: return Taken(dst < imm);
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJlt: return Taken(dst < src);
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJle: return Taken(dst <= imm);
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJle: return Taken(dst <= src);
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJset: return Taken((dst & imm) != 0);
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJset: return Taken((dst & src) != 0);
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJsgt: return Taken(S64(dst) > S64(imm));
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJsgt: return Taken(S64(dst) > S64(src));
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJsge: return Taken(S64(dst) >= S64(imm));
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJsge: return Taken(S64(dst) >= S64(src));
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJslt: return Taken(S64(dst) < S64(imm));
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJslt: return Taken(S64(dst) < S64(src));
    case isa::kClassJmp | isa::kSrcK | isa::kJmpJsle: return Taken(S64(dst) <= S64(imm));
    case isa::kClassJmp | isa::kSrcX | isa::kJmpJsle: return Taken(S64(dst) <= S64(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJeq: return Taken(U32(dst) == U32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJeq: return Taken(U32(dst) == U32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJne: return Taken(U32(dst) != U32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJne: return Taken(U32(dst) != U32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJgt: return Taken(U32(dst) > U32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJgt: return Taken(U32(dst) > U32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJge: return Taken(U32(dst) >= U32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJge: return Taken(U32(dst) >= U32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJlt: return Taken(U32(dst) < U32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJlt: return Taken(U32(dst) < U32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJle: return Taken(U32(dst) <= U32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJle: return Taken(U32(dst) <= U32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJset: return Taken((U32(dst) & U32(imm)) != 0);
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJset: return Taken((U32(dst) & U32(src)) != 0);
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJsgt: return Taken(S32(dst) > S32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJsgt: return Taken(S32(dst) > S32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJsge: return Taken(S32(dst) >= S32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJsge: return Taken(S32(dst) >= S32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJslt: return Taken(S32(dst) < S32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJslt: return Taken(S32(dst) < S32(src));
    case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJsle: return Taken(S32(dst) <= S32(imm));
    case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJsle: return Taken(S32(dst) <= S32(src));
    default: return Branch::kOther;
  }
}

}  // namespace bpfdiff::interp
