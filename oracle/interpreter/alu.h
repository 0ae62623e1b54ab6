// The interpreter's ALU and ALU64 classes: dst = dst OP src|imm (internal to
// oracle/interpreter.cc; inline, so the dispatch loop stays one function).
#pragma once

#include <cstdint>
#include <limits>

#include "isa/insn.h"
#include "oracle/interpreter/width.h"

namespace bpfdiff::interp {

// Signed division and modulo (offset 1): by zero gives 0 / leaves dst, and
// INT_MIN / -1 (which overflows in C++) gives INT_MIN / 0, as RFC 9669 says.
constexpr uint64_t SDiv64(uint64_t a, uint64_t b) {
  if (b == 0) return 0;
  if (S64(a) == std::numeric_limits<int64_t>::min() && S64(b) == -1) return a;  // overflow: INT64_MIN
  return static_cast<uint64_t>(S64(a) / S64(b));
}
constexpr uint64_t SMod64(uint64_t a, uint64_t b) {
  if (b == 0) return a;
  if (S64(a) == std::numeric_limits<int64_t>::min() && S64(b) == -1) return 0;
  return static_cast<uint64_t>(S64(a) % S64(b));
}
constexpr uint32_t SDiv32(uint32_t a, uint32_t b) {
  if (b == 0) return 0;
  if (S32(a) == std::numeric_limits<int32_t>::min() && S32(b) == -1) return a;
  return static_cast<uint32_t>(S32(a) / S32(b));
}
constexpr uint32_t SMod32(uint32_t a, uint32_t b) {
  if (b == 0) return a;
  if (S32(a) == std::numeric_limits<int32_t>::min() && S32(b) == -1) return 0;
  return static_cast<uint32_t>(S32(a) % S32(b));
}

// ALU64: dst = dst OP src|imm, imm sign-extended to 64 bits; shifts masked
// to 63. False for an opcode that is not an ALU64 form.
[[gnu::always_inline]] inline bool ExecuteAlu64(const isa::Insn& insn, uint64_t& dst, uint64_t src) {
  const uint64_t imm = SExt32(insn.imm);
  switch (insn.opcode) {
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd: dst += imm; break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluAdd: dst += src; break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluSub: dst -= imm; break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluSub: dst -= src; break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluMul: dst *= imm; break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluMul: dst *= src; break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluDiv: dst = insn.offset ? SDiv64(dst, imm) : (imm ? dst / imm : 0); break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluDiv: dst = insn.offset ? SDiv64(dst, src) : (src ? dst / src : 0); break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluMod: dst = insn.offset ? SMod64(dst, imm) : (imm ? dst % imm : dst); break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluMod: dst = insn.offset ? SMod64(dst, src) : (src ? dst % src : dst); break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluOr: dst |= imm; break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluOr: dst |= src; break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluAnd: dst &= imm; break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluAnd: dst &= src; break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluXor: dst ^= imm; break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluXor: dst ^= src; break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluLsh: dst <<= (imm & 63); break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluLsh: dst <<= (src & 63); break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluRsh: dst >>= (imm & 63); break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluRsh: dst >>= (src & 63); break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluArsh: dst = static_cast<uint64_t>(S64(dst) >> (imm & 63)); break;
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluArsh: dst = static_cast<uint64_t>(S64(dst) >> (src & 63)); break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluNeg: dst = 0 - dst; break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluMov: dst = imm; break;
    // movsx: offset 8, 16 or 32 sign-extends that many low bits of src.
    case isa::kClassAlu64 | isa::kSrcX | isa::kAluMov:
      // The CPU's offset, the arena's user address: ProgramRun::Step.
      if (isa::IsPerCpuAddressMove(insn) || isa::IsAddrSpaceCast(insn)) return false;
      dst = insn.offset == 0 ? src : SignExtend(src, static_cast<unsigned>(insn.offset) / 8);
      break;
    case isa::kClassAlu64 | isa::kSrcK | isa::kAluEnd: dst = ByteSwap(dst, insn.imm); break;  // bswap
    default: return false;
  }
  return true;
}

// ALU: on the low halves; the result is zero-extended to 64 bits; shifts
// masked to 31. False for an opcode that is not an ALU form.
[[gnu::always_inline]] inline bool ExecuteAlu32(const isa::Insn& insn, uint64_t& dst, uint64_t src) {
  const uint64_t imm = SExt32(insn.imm);
  switch (insn.opcode) {
    case isa::kClassAlu | isa::kSrcK | isa::kAluAdd: dst = ZExt32(U32(dst) + U32(imm)); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluAdd: dst = ZExt32(U32(dst) + U32(src)); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluSub: dst = ZExt32(U32(dst) - U32(imm)); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluSub: dst = ZExt32(U32(dst) - U32(src)); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluMul: dst = ZExt32(U32(dst) * U32(imm)); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluMul: dst = ZExt32(U32(dst) * U32(src)); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluDiv:
      dst = insn.offset ? SDiv32(U32(dst), U32(imm)) : (U32(imm) ? U32(dst) / U32(imm) : 0);
      break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluDiv:
      dst = insn.offset ? SDiv32(U32(dst), U32(src)) : (U32(src) ? U32(dst) / U32(src) : 0);
      break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluMod:
      dst = insn.offset ? SMod32(U32(dst), U32(imm)) : (U32(imm) ? U32(dst) % U32(imm) : U32(dst));
      break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluMod:
      dst = insn.offset ? SMod32(U32(dst), U32(src)) : (U32(src) ? U32(dst) % U32(src) : U32(dst));
      break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluOr: dst = U32(dst) | U32(imm); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluOr: dst = U32(dst) | U32(src); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluAnd: dst = U32(dst) & U32(imm); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluAnd: dst = U32(dst) & U32(src); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluXor: dst = U32(dst) ^ U32(imm); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluXor: dst = U32(dst) ^ U32(src); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluLsh: dst = ZExt32(U32(dst) << (imm & 31)); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluLsh: dst = ZExt32(U32(dst) << (src & 31)); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluRsh: dst = U32(dst) >> (imm & 31); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluRsh: dst = U32(dst) >> (src & 31); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluArsh: dst = ZExt32(static_cast<uint32_t>(S32(dst) >> (imm & 31))); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluArsh: dst = ZExt32(static_cast<uint32_t>(S32(dst) >> (src & 31))); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluNeg: dst = ZExt32(0u - U32(dst)); break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluMov: dst = U32(imm); break;
    case isa::kClassAlu | isa::kSrcX | isa::kAluMov:
      dst = insn.offset == 0 ? U32(src) : U32(SignExtend(src, static_cast<unsigned>(insn.offset) / 8));
      break;
    case isa::kClassAlu | isa::kSrcK | isa::kAluEnd: dst = Truncate(dst, insn.imm); break;  // le
    case isa::kClassAlu | isa::kSrcX | isa::kAluEnd: dst = ByteSwap(dst, insn.imm); break;  // be
    default: return false;
  }
  return true;
}

}  // namespace bpfdiff::interp
