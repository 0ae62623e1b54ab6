// ALU and ALU64: one lowering per operation. 32-bit operations use the W
// forms, which zero the upper half of the X register: that is the BPF rule
// that every 32-bit result is zero-extended.
#include <optional>

#include "jit/context.h"

namespace bpfdiff::jit {
namespace {

using a64::AddSubOp;
using a64::DataProc2Op;
using a64::DataProc3Op;
using a64::LogicalImmOp;
using a64::LogicalRegOp;
using a64::Reg;
using a64::Width;

// dst = dst OP value, with the logical-immediate form when the value is a
// bitmask immediate and a temporary otherwise.
void EmitLogicalImm(JitContext& ctx, LogicalImmOp op, LogicalRegOp reg_op, Width w, Reg dst,
                    uint64_t value) {
  const uint32_t word = LogicalImmediateWord(ctx, op, w, dst, dst, value);
  if (word != a64::kBreakFault) {
    ctx.Emit(word);
    return;
  }
  EmitMovImm(ctx, w, kTmp1, value);
  ctx.Emit(a64::LogicalShiftedRegister(reg_op, w, dst, dst, kTmp1));
}

void EmitByteSwap(JitContext& ctx, Width w, Reg dst, int32_t bits) {
  switch (bits) {
    case 16:  // rev16 + zero-extend the low 16 bits
      ctx.Emit(a64::DataProcessing1Source(a64::DataProc1Op::kRev16, w, dst, dst));
      ctx.Emit(a64::Uxth(dst, dst));
      break;
    case 32:  // rev wd: swaps the low word and clears the upper half
      ctx.Emit(a64::DataProcessing1Source(a64::DataProc1Op::kRev32, Width::kW, dst, dst));
      break;
    default:  // rev xd
      ctx.Emit(a64::DataProcessing1Source(a64::DataProc1Op::kRev, Width::kX, dst, dst));
      break;
  }
}

// Whether a 32-bit operation with this constant leaves dst as it is (but
// for the zero-extension the BPF rule asks for).
bool IsIdentity32(uint8_t op, uint32_t value) {
  switch (op) {
    case isa::kAluAdd:
    case isa::kAluSub:
    case isa::kAluOr:
    case isa::kAluXor:
    case isa::kAluLsh:
    case isa::kAluRsh:
    case isa::kAluArsh: return value == 0;
    case isa::kAluAnd: return value == 0xffffffffu;
    case isa::kAluMul:
    case isa::kAluDiv: return value == 1;
    default: return false;
  }
}

// PLANTED BUGS of the ALU (JitBugs): the wrong code they emit instead of
// the lowering, or nullopt when the instruction is not theirs.
std::optional<Status> EmitPlantedAlu(JitContext& ctx, const isa::Insn& insn, bool is64, bool reg, uint64_t value) {
  const JitBugs& bugs = ctx.options.bugs;
  const Reg dst = Map(insn.dst);
  const uint8_t op = isa::OpOf(insn.opcode);
  if (bugs.alu32_identity_no_zext && !is64 && !reg && IsIdentity32(op, static_cast<uint32_t>(value))) {
    return Status{};  // the s390 peephole: nothing, not even the zero-extension
  }
  if (bugs.divmod_imm1_skipped && !reg && (op == isa::kAluDiv || op == isa::kAluMod) && insn.imm == 1) {
    return Status{};  // right for a 64-bit div only
  }
  if (bugs.shift_imm0_full_width && !reg && (op == isa::kAluRsh || op == isa::kAluArsh) &&
      (insn.imm & (is64 ? 63 : 31)) == 0) {
    const Width w = is64 ? Width::kX : Width::kW;
    // A shift field of 0 read as "the whole width": 0 for lsr, the sign for asr.
    ctx.Emit(op == isa::kAluRsh ? a64::MoveWideImmediate(a64::MoveWideOp::kMovz, w, dst, 0)
                                : a64::AsrImm(w, dst, dst, a64::Bits(w) - 1));
    return Status{};
  }
  if (bugs.sub_imm_negated && !reg && op == isa::kAluSub) {
    // dst += -imm, with -imm computed in 32 bits: -INT_MIN is INT_MIN.
    EmitAddSubImm(ctx, AddSubOp::kAdd, is64 ? Width::kX : Width::kW, dst, dst,
                  static_cast<int32_t>(0u - static_cast<uint32_t>(insn.imm)));
    return Status{};
  }
  if (bugs.movsx32_no_zext && !is64 && reg && op == isa::kAluMov && (insn.offset == 8 || insn.offset == 16)) {
    ctx.Emit(insn.offset == 8 ? a64::Sxtb(Width::kX, dst, Map(insn.src)) : a64::Sxth(Width::kX, dst, Map(insn.src)));
    return Status{};
  }
  if (bugs.le_no_truncation && !is64 && !reg && op == isa::kAluEnd) return Status{};
  if (bugs.bswap32_no_zext && is64 && op == isa::kAluEnd && insn.imm == 32) {
    // rev32 xd reverses the bytes of each word: the upper word stays.
    ctx.Emit(a64::DataProcessing1Source(a64::DataProc1Op::kRev32, Width::kX, dst, dst));
    return Status{};
  }
  if (bugs.mod32_zero_no_zext && !is64 && reg && op == isa::kAluMod) {
    // if (src == 0) skip: the zero divisor also skips the zero-extension.
    const Reg divisor = Map(insn.src);
    const a64::DataProc2Op divide = insn.offset ? a64::DataProc2Op::kSdiv : a64::DataProc2Op::kUdiv;
    ctx.Emit(a64::CompareAndBranchImmediate(a64::CompareBranchOp::kCbz, Width::kW, divisor, 3 * 4));
    ctx.Emit(a64::DataProcessing2Source(divide, Width::kW, kTmp1, dst, divisor));
    ctx.Emit(a64::DataProcessing3Source(DataProc3Op::kMsub, Width::kW, dst, kTmp1, divisor, dst));
    return Status{};
  }
  return std::nullopt;
}

}  // namespace

uint32_t LogicalImmediateWord(const JitContext& ctx, LogicalImmOp op, Width width, Reg rd, Reg rn, uint64_t value) {
  if (ctx.options.bugs.logical_imm32_all_ones && width == Width::kW && value == 0xffffffffu) {
    // PLANTED BUG: N=0, immr=0, imms=0b011111, the reserved 32-bit pattern
    // of all ones, which the architecture leaves unallocated.
    return 0x12000000 | static_cast<uint32_t>(op) << 29 | 0x1fu << 10 | static_cast<uint32_t>(rn) << 5 |
           static_cast<uint32_t>(rd);
  }
  return a64::LogicalImmediate(op, width, rd, rn, value);
}

// Long because it is the ALU part of the kernel's build_insn: one case per
// BPF ALU form, each a few lines, so the lowering of every form reads in
// one place against bpf_jit_comp.c.
Status EmitAlu(JitContext& ctx, uint32_t, const isa::Insn& insn) {
  const bool is64 = isa::ClassOf(insn.opcode) == isa::kClassAlu64;
  const Width w = is64 ? Width::kX : Width::kW;
  const Reg dst = Map(insn.dst);
  const Reg src = Map(insn.src);
  const int32_t imm = insn.imm;
  // The operand value of a K form: sign-extended for ALU64, 32 bits for ALU.
  const uint64_t value = is64 ? static_cast<uint64_t>(static_cast<int64_t>(imm)) : static_cast<uint32_t>(imm);
  const bool reg = isa::SourceOf(insn.opcode) == isa::kSrcX;
  const DataProc2Op divide = insn.offset ? DataProc2Op::kSdiv : DataProc2Op::kUdiv;
  if (auto planted = EmitPlantedAlu(ctx, insn, is64, reg, value)) return *planted;
  // A signed 32-bit quotient or remainder sign-extended (planted bug).
  const bool sign_extend_result = !is64 && insn.offset != 0 && ctx.options.bugs.sdiv32_sign_extended;

  switch (isa::OpOf(insn.opcode)) {
    case isa::kAluMov:
      if (!reg) {
        // dst = imm
        EmitMovImm(ctx, w, dst, value);
      } else if (insn.offset == 0) {
        // dst = src
        ctx.Emit(a64::Mov(w, dst, src));
      } else if (is64 && insn.offset == isa::kAddrSpaceCastOffset) {
        // dst = (u32)src ? user_vm_start's upper half << 32 | (u32)src : 0
        ctx.Emit(a64::Mov(Width::kW, kTmp1, src));
        EmitMovImm(ctx, Width::kX, dst, ctx.env.arena_user_vm_start & ~uint64_t{0xffffffff});
        ctx.Emit(a64::CompareAndBranchImmediate(a64::CompareBranchOp::kCbz, Width::kX, kTmp1, 8));
        ctx.Emit(a64::LogicalShiftedRegister(a64::LogicalRegOp::kOrr, Width::kX, kTmp1, dst, kTmp1));
        ctx.Emit(a64::Mov(Width::kX, dst, kTmp1));
      } else if (is64 && insn.offset == isa::kAddrPerCpu) {
        // dst = src + this CPU's per-CPU offset (the kernel runs at EL1
        // here; with VHE it would read TPIDR_EL2)
        ctx.Emit(a64::Mrs(kTmp1, a64::kTpidrEl1));
        ctx.Emit(a64::AddSubShiftedRegister(AddSubOp::kAdd, Width::kX, dst, src, kTmp1));
      } else if (insn.offset == 8) {
        // dst = (s8)src
        ctx.Emit(a64::Sxtb(w, dst, src));
      } else if (insn.offset == 16) {
        // dst = (s16)src
        ctx.Emit(a64::Sxth(w, dst, src));
      } else {
        // dst = (s32)src
        ctx.Emit(a64::Sxtw(dst, src));
      }
      return {};
    case isa::kAluAdd:
      if (!is64 && ctx.options.bugs.alu32_add_no_zext) {
        // PLANTED BUG: the 64-bit form keeps the carry in the upper half.
        if (reg) {
          ctx.Emit(a64::AddSubShiftedRegister(AddSubOp::kAdd, Width::kX, dst, dst, src));
        } else {
          EmitMovImm(ctx, Width::kW, kTmp1, value);
          ctx.Emit(a64::AddSubShiftedRegister(AddSubOp::kAdd, Width::kX, dst, dst, kTmp1));
        }
        return {};
      }
      // dst = dst + src|imm
      if (reg) {
        ctx.Emit(a64::AddSubShiftedRegister(AddSubOp::kAdd, w, dst, dst, src));
      } else {
        EmitAddSubImm(ctx, AddSubOp::kAdd, w, dst, dst, imm);
      }
      return {};
    case isa::kAluSub:
      // dst = dst - src|imm
      if (reg) {
        ctx.Emit(a64::AddSubShiftedRegister(AddSubOp::kSub, w, dst, dst, src));
      } else {
        EmitAddSubImm(ctx, AddSubOp::kSub, w, dst, dst, imm);
      }
      return {};
    case isa::kAluAnd:
      // dst = dst & src|imm
      if (reg) {
        ctx.Emit(a64::LogicalShiftedRegister(LogicalRegOp::kAnd, w, dst, dst, src));
      } else {
        EmitLogicalImm(ctx, LogicalImmOp::kAnd, LogicalRegOp::kAnd, w, dst, value);
      }
      return {};
    case isa::kAluOr:
      // dst = dst | src|imm
      if (reg) {
        ctx.Emit(a64::LogicalShiftedRegister(LogicalRegOp::kOrr, w, dst, dst, src));
      } else {
        EmitLogicalImm(ctx, LogicalImmOp::kOrr, LogicalRegOp::kOrr, w, dst, value);
      }
      return {};
    case isa::kAluXor:
      // dst = dst ^ src|imm
      if (reg) {
        ctx.Emit(a64::LogicalShiftedRegister(LogicalRegOp::kEor, w, dst, dst, src));
      } else {
        EmitLogicalImm(ctx, LogicalImmOp::kEor, LogicalRegOp::kEor, w, dst, value);
      }
      return {};
    case isa::kAluMul:
      // dst = dst * src|imm
      if (!reg) EmitMovImm(ctx, w, kTmp1, value);
      ctx.Emit(a64::Mul(w, dst, dst, reg ? src : kTmp1));
      return {};
    case isa::kAluDiv:
      // dst = dst / src|imm; udiv/sdiv give 0 for a zero divisor and
      // INT_MIN for INT_MIN / -1, which is what BPF wants.
      if (!reg) EmitMovImm(ctx, w, kTmp1, value);
      ctx.Emit(a64::DataProcessing2Source(divide, w, dst, dst, reg ? src : kTmp1));
      if (sign_extend_result) ctx.Emit(a64::Sxtw(dst, dst));
      return {};
    case isa::kAluMod: {
      // dst = dst - (dst / src) * src; a zero divisor leaves dst (its low
      // half for the 32-bit form).
      const Reg divisor = reg ? src : kTmp2;
      if (!reg) EmitMovImm(ctx, w, kTmp2, value);
      ctx.Emit(a64::DataProcessing2Source(divide, w, kTmp1, dst, divisor));
      ctx.Emit(a64::DataProcessing3Source(DataProc3Op::kMsub, w, dst, kTmp1, divisor, dst));
      if (sign_extend_result) ctx.Emit(a64::Sxtw(dst, dst));
      return {};
    }
    case isa::kAluLsh:
      // dst = dst << (src|imm & (bits - 1))
      if (reg) {
        ctx.Emit(a64::LslReg(w, dst, dst, src));
      } else {
        ctx.Emit(a64::LslImm(w, dst, dst, static_cast<unsigned>(imm) & (a64::Bits(w) - 1)));
      }
      return {};
    case isa::kAluRsh:
      // dst = dst >> (src|imm & (bits - 1)), logical
      if (reg) {
        ctx.Emit(a64::LsrReg(w, dst, dst, src));
      } else {
        ctx.Emit(a64::LsrImm(w, dst, dst, static_cast<unsigned>(imm) & (a64::Bits(w) - 1)));
      }
      return {};
    case isa::kAluArsh:
      // dst = dst >> (src|imm & (bits - 1)), arithmetic
      if (reg) {
        ctx.Emit(a64::AsrReg(w, dst, dst, src));
      } else {
        ctx.Emit(a64::AsrImm(w, dst, dst, static_cast<unsigned>(imm) & (a64::Bits(w) - 1)));
      }
      return {};
    case isa::kAluNeg:
      // dst = -dst
      ctx.Emit(a64::Neg(w, dst, dst));
      return {};
    case isa::kAluEnd:
      if (!is64 && !reg) {
        // le16/32/64 on a little-endian CPU: truncate and zero-extend.
        if (imm == 16) ctx.Emit(a64::Uxth(dst, dst));
        if (imm == 32) ctx.Emit(a64::Mov(Width::kW, dst, dst));
        return {};
      }
      // be16/32/64, and bswap16/32/64 (ALU64): swap the bytes.
      EmitByteSwap(ctx, w, dst, imm);
      return {};
    default: break;
  }
  return Fail("opcode 0x{:02x} is not an ALU instruction", insn.opcode);
}

}  // namespace bpfdiff::jit
