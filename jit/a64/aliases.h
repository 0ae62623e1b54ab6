// The assembler's alias mnemonics, each one line over a class encoder of
// encoder.h (the Arm ARM defines them the same way). Register fields keep the
// ZR/SP meaning of the underlying class; kBreakFault comes through unchanged.
#pragma once

#include <cstdint>

#include "jit/a64/encoder.h"

namespace bpfdiff::a64 {

// mov rd, rm = orr rd, zr, rm. rd, rm: ZR.
constexpr uint32_t Mov(Width w, Reg rd, Reg rm) {
  return LogicalShiftedRegister(LogicalRegOp::kOrr, w, rd, Reg::kZr, rm);
}
// mov rd, rn to or from SP = add rd, rn, #0. rd, rn: SP.
constexpr uint32_t MovSp(Width w, Reg rd, Reg rn) {
  return AddSubImmediate(AddSubOp::kAdd, w, rd, rn, 0);
}
// mvn rd, rm = orn rd, zr, rm. rd, rm: ZR.
constexpr uint32_t Mvn(Width w, Reg rd, Reg rm) {
  return LogicalShiftedRegister(LogicalRegOp::kOrn, w, rd, Reg::kZr, rm);
}
// neg rd, rm = sub rd, zr, rm. rd, rm: ZR.
constexpr uint32_t Neg(Width w, Reg rd, Reg rm) {
  return AddSubShiftedRegister(AddSubOp::kSub, w, rd, Reg::kZr, rm);
}
// cmp rn, rm = subs zr, rn, rm. rn, rm: ZR.
constexpr uint32_t Cmp(Width w, Reg rn, Reg rm) {
  return AddSubShiftedRegister(AddSubOp::kSubs, w, Reg::kZr, rn, rm);
}
// cmn rn, rm = adds zr, rn, rm. rn, rm: ZR.
constexpr uint32_t Cmn(Width w, Reg rn, Reg rm) {
  return AddSubShiftedRegister(AddSubOp::kAdds, w, Reg::kZr, rn, rm);
}
// cmp rn, #imm12{, lsl #12} = subs zr, rn, #imm. rn: SP.
constexpr uint32_t CmpImm(Width w, Reg rn, uint32_t imm12, bool shift12 = false) {
  return AddSubImmediate(AddSubOp::kSubs, w, Reg::kZr, rn, imm12, shift12);
}
// cmn rn, #imm12{, lsl #12} = adds zr, rn, #imm. rn: SP.
constexpr uint32_t CmnImm(Width w, Reg rn, uint32_t imm12, bool shift12 = false) {
  return AddSubImmediate(AddSubOp::kAdds, w, Reg::kZr, rn, imm12, shift12);
}
// tst rn, rm = ands zr, rn, rm. rn, rm: ZR.
constexpr uint32_t Tst(Width w, Reg rn, Reg rm) {
  return LogicalShiftedRegister(LogicalRegOp::kAnds, w, Reg::kZr, rn, rm);
}
// tst rn, #mask = ands zr, rn, #mask (a bitmask immediate). rn: ZR.
constexpr uint32_t TstImm(Width w, Reg rn, uint64_t mask) {
  return LogicalImmediate(LogicalImmOp::kAnds, w, Reg::kZr, rn, mask);
}
// mul rd, rn, rm = madd rd, rn, rm, zr. All ZR.
constexpr uint32_t Mul(Width w, Reg rd, Reg rn, Reg rm) {
  return DataProcessing3Source(DataProc3Op::kMadd, w, rd, rn, rm, Reg::kZr);
}
// lsl rd, rn, #shift = ubfm rd, rn, #(-shift mod bits), #(bits - 1 - shift). ZR.
constexpr uint32_t LslImm(Width w, Reg rd, Reg rn, unsigned shift) {
  return shift < Bits(w) ? Bitfield(BitfieldOp::kUbfm, w, rd, rn, (Bits(w) - shift) % Bits(w),
                                    Bits(w) - 1 - shift)
                         : kBreakFault;
}
// lsr rd, rn, #shift = ubfm rd, rn, #shift, #(bits - 1). ZR.
constexpr uint32_t LsrImm(Width w, Reg rd, Reg rn, unsigned shift) {
  return Bitfield(BitfieldOp::kUbfm, w, rd, rn, shift, Bits(w) - 1);
}
// asr rd, rn, #shift = sbfm rd, rn, #shift, #(bits - 1). ZR.
constexpr uint32_t AsrImm(Width w, Reg rd, Reg rn, unsigned shift) {
  return Bitfield(BitfieldOp::kSbfm, w, rd, rn, shift, Bits(w) - 1);
}
// lsl rd, rn, rm = lslv (shift by rm mod bits). ZR.
constexpr uint32_t LslReg(Width w, Reg rd, Reg rn, Reg rm) {
  return DataProcessing2Source(DataProc2Op::kLslv, w, rd, rn, rm);
}
// lsr rd, rn, rm = lsrv. ZR.
constexpr uint32_t LsrReg(Width w, Reg rd, Reg rn, Reg rm) {
  return DataProcessing2Source(DataProc2Op::kLsrv, w, rd, rn, rm);
}
// asr rd, rn, rm = asrv. ZR.
constexpr uint32_t AsrReg(Width w, Reg rd, Reg rn, Reg rm) {
  return DataProcessing2Source(DataProc2Op::kAsrv, w, rd, rn, rm);
}
// sxtb rd, wn = sbfm rd, rn, #0, #7. ZR.
constexpr uint32_t Sxtb(Width w, Reg rd, Reg rn) {
  return Bitfield(BitfieldOp::kSbfm, w, rd, rn, 0, 7);
}
// sxth rd, wn = sbfm rd, rn, #0, #15. ZR.
constexpr uint32_t Sxth(Width w, Reg rd, Reg rn) {
  return Bitfield(BitfieldOp::kSbfm, w, rd, rn, 0, 15);
}
// sxtw xd, wn = sbfm xd, xn, #0, #31. ZR.
constexpr uint32_t Sxtw(Reg rd, Reg rn) {
  return Bitfield(BitfieldOp::kSbfm, Width::kX, rd, rn, 0, 31);
}
// uxtb wd, wn = ubfm wd, wn, #0, #7 (also zeroes the upper half of xd). ZR.
constexpr uint32_t Uxtb(Reg rd, Reg rn) {
  return Bitfield(BitfieldOp::kUbfm, Width::kW, rd, rn, 0, 7);
}
// uxth wd, wn = ubfm wd, wn, #0, #15. ZR.
constexpr uint32_t Uxth(Reg rd, Reg rn) {
  return Bitfield(BitfieldOp::kUbfm, Width::kW, rd, rn, 0, 15);
}
// cset rd, cond = csinc rd, zr, zr, !cond (rd = cond ? 1 : 0). rd: ZR; cond
// is not kAl/kNv.
constexpr uint32_t Cset(Width w, Reg rd, Cond cond) {
  return detail::U(cond) < detail::U(Cond::kAl)
             ? ConditionalSelect(CondSelectOp::kCsinc, w, rd, Reg::kZr, Reg::kZr, Invert(cond))
             : kBreakFault;
}
// b label / bl label.
constexpr uint32_t B(int64_t byte_offset) {
  return UnconditionalBranchImmediate(BranchOp::kB, byte_offset);
}
constexpr uint32_t Bl(int64_t byte_offset) {
  return UnconditionalBranchImmediate(BranchOp::kBl, byte_offset);
}
// br rn / blr rn / ret {rn}. rn: ZR.
constexpr uint32_t Br(Reg rn) { return UnconditionalBranchRegister(BranchRegOp::kBr, rn); }
constexpr uint32_t Blr(Reg rn) { return UnconditionalBranchRegister(BranchRegOp::kBlr, rn); }
constexpr uint32_t Ret(Reg rn = kLr) { return UnconditionalBranchRegister(BranchRegOp::kRet, rn); }
// nop.
constexpr uint32_t Nop() { return Hint(HintOp::kNop); }
// brk #imm16.
constexpr uint32_t Brk(uint32_t imm16) { return ExceptionGeneration(ExceptionOp::kBrk, imm16); }
// dmb / dsb <option>, isb.
constexpr uint32_t Dmb(BarrierOption option) { return Barrier(BarrierOp::kDmb, option); }
constexpr uint32_t Dsb(BarrierOption option) { return Barrier(BarrierOp::kDsb, option); }
constexpr uint32_t Isb() { return Barrier(BarrierOp::kIsb, BarrierOption::kSy); }
// mrs xt, reg / msr reg, xt. rt: ZR.
constexpr uint32_t Mrs(Reg rt, SystemRegister reg) {
  return SystemRegisterMove(SystemRegisterDirection::kMrs, reg, rt);
}
constexpr uint32_t Msr(SystemRegister reg, Reg rt) {
  return SystemRegisterMove(SystemRegisterDirection::kMsr, reg, rt);
}
// ldxr / ldaxr / ldar rt, [rn]; stlr rt, [rn]. rt: ZR, rn: SP.
constexpr uint32_t Ldxr(Size s, Reg rt, Reg rn) {
  return LoadStoreExclusive(ExclusiveOp::kLdxr, s, Reg::kZr, rt, rn);
}
constexpr uint32_t Ldaxr(Size s, Reg rt, Reg rn) {
  return LoadStoreExclusive(ExclusiveOp::kLdaxr, s, Reg::kZr, rt, rn);
}
constexpr uint32_t Ldar(Size s, Reg rt, Reg rn) {
  return LoadStoreExclusive(ExclusiveOp::kLdar, s, Reg::kZr, rt, rn);
}
constexpr uint32_t Stlr(Size s, Reg rt, Reg rn) {
  return LoadStoreExclusive(ExclusiveOp::kStlr, s, Reg::kZr, rt, rn);
}
// stxr / stlxr ws, rt, [rn]: ws = 0 if stored. rs, rt: ZR, rn: SP.
constexpr uint32_t Stxr(Size s, Reg rs, Reg rt, Reg rn) {
  return LoadStoreExclusive(ExclusiveOp::kStxr, s, rs, rt, rn);
}
constexpr uint32_t Stlxr(Size s, Reg rs, Reg rt, Reg rn) {
  return LoadStoreExclusive(ExclusiveOp::kStlxr, s, rs, rt, rn);
}
// st<op>{l} rs, [rn] = ld<op>{l} rs, zr, [rn]: the atomic without the old
// value (stadd, stclr, steor, stset). rs: ZR, rn: SP. order: kRelaxed or
// kRelease (with acquire it stays an ld<op>a with a discarded result).
constexpr uint32_t StAtomic(AtomicOp op, Size s, MemOrder order, Reg rs, Reg rn) {
  return AtomicMemoryOperation(op, s, order, rs, Reg::kZr, rn);
}

}  // namespace bpfdiff::a64
