// A64 instruction encoders: one function per encoding class of the Arm ARM
// (DDI 0487, chapter C4 "A64 Instruction Set Encoding"), each returning the
// 32-bit instruction word.
//
// An operand that cannot be encoded (immediate out of range, misaligned
// offset, a value that is not a bitmask immediate, SP where the field means
// ZR or the other way round, a register out of range, an unallocated or
// CONSTRAINED UNPREDICTABLE combination) gives kBreakFault instead: the
// kernel's AARCH64_BREAK_FAULT, which the JIT's validation pass rejects.
// The predicates in immediates.h tell in advance whether an operand fits.
//
// Register fields are marked ZR or SP in each comment (see operands.h).
// Branch and literal offsets are in bytes, relative to the instruction's own
// address.
//
// Adding a class: add its encoder below, a row to EncoderClass and to
// EncoderClassName(), and cases to tests/jit/a64_cross_check_cases.cc;
// a64_encoding_test fails until all four exist.
#pragma once

#include <cstdint>
#include <string_view>

#include "jit/a64/immediates.h"
#include "jit/a64/operands.h"

namespace bpfdiff::a64 {

// AARCH64_BREAK_FAULT: BRK #0x100. Also what an empty prog pack is filled with.
inline constexpr uint32_t kBreakFault = 0xd4202000;

// The encoding classes below, for the test that checks every one against an
// independent assembler.
enum class EncoderClass : uint8_t {
  kAddSubImmediate,
  kAddSubShiftedRegister,
  kAddSubExtendedRegister,
  kLogicalImmediate,
  kLogicalShiftedRegister,
  kMoveWideImmediate,
  kBitfield,
  kDataProcessing1Source,
  kDataProcessing2Source,
  kDataProcessing3Source,
  kConditionalSelect,
  kPcRelAddressing,
  kLoadRegisterLiteral,
  kLoadStoreUnsignedImmediate,
  kLoadStoreUnscaledImmediate,
  kLoadStoreImmediateIndexed,
  kLoadStoreRegisterOffset,
  kLoadStorePair,
  kLoadStoreExclusive,
  kAtomicMemoryOperation,
  kCompareAndSwap,
  kUnconditionalBranchImmediate,
  kUnconditionalBranchRegister,
  kConditionalBranchImmediate,
  kCompareAndBranchImmediate,
  kTestAndBranchImmediate,
  kExceptionGeneration,
  kPermanentlyUndefined,
  kBarrier,
  kHint,
  kSystemRegisterMove,
  kSystemInstruction,
};
inline constexpr unsigned kNumEncoderClasses =
    static_cast<unsigned>(EncoderClass::kSystemInstruction) + 1;

// The encoder function's name ("AddSubImmediate").
std::string_view EncoderClassName(EncoderClass encoder_class);

// ---------------------------------------------------------------------------
// Data processing (immediate)
// ---------------------------------------------------------------------------

// op:S of the add/subtract classes.
enum class AddSubOp : uint8_t {
  kAdd = 0,   // add
  kAdds = 1,  // adds (sets flags)
  kSub = 2,   // sub
  kSubs = 3,  // subs (sets flags)
};

namespace detail {
constexpr bool SetsFlags(AddSubOp op) { return (U(op) & 1) != 0; }
constexpr bool Valid(Width width) { return U(width) <= 1; }
constexpr bool Valid(Size size) { return U(size) <= 3; }
}  // namespace detail

// Add/subtract (immediate): rd = rn +- (imm12 << (shift12 ? 12 : 0)).
//
//   31 30 29 28       23 22 21        10 9    5 4    0
//  +--+--+--+-----------+--+------------+------+------+
//  |sf|op| S|1 0 0 0 1 0|sh|   imm12    |  Rn  |  Rd  |
//  +--+--+--+-----------+--+------------+------+------+
//
// rd: SP for add/sub, ZR for adds/subs (cmp/cmn). rn: SP.
constexpr uint32_t AddSubImmediate(AddSubOp op, Width width, Reg rd, Reg rn, uint32_t imm12,
                                   bool shift12 = false) {
  using namespace detail;
  const auto d = SetsFlags(op) ? ZrField(rd) : SpField(rd);
  const auto n = SpField(rn);
  if (!d || !n || U(op) > 3 || !Valid(width) || imm12 > 0xfff) return kBreakFault;
  return 0x11000000 | U(width) << 31 | U(op) << 29 | uint32_t{shift12} << 22 | imm12 << 10 |
         *n << 5 | *d;
}

// Logical operations with an immediate: opc.
enum class LogicalImmOp : uint8_t {
  kAnd = 0,
  kOrr = 1,
  kEor = 2,
  kAnds = 3,  // sets flags (tst)
};

// Logical (immediate): rd = rn OP value, value a bitmask immediate.
//
//   31 30 29 28        23 22 21    16 15    10 9    5 4    0
//  +--+-----+-----------+--+--------+--------+------+------+
//  |sf| opc |1 0 0 1 0 0| N|  immr  |  imms  |  Rn  |  Rd  |
//  +--+-----+-----------+--+--------+--------+------+------+
//
// rd: SP for and/orr/eor, ZR for ands. rn: ZR. `value` is the operand
// itself; kBreakFault unless IsBitmaskImmediate(value, width).
constexpr uint32_t LogicalImmediate(LogicalImmOp op, Width width, Reg rd, Reg rn, uint64_t value) {
  using namespace detail;
  const auto d = op == LogicalImmOp::kAnds ? ZrField(rd) : SpField(rd);
  const auto n = ZrField(rn);
  const auto fields = EncodeBitmaskImmediate(value, width);
  if (!d || !n || !fields || U(op) > 3 || !Valid(width)) return kBreakFault;
  return 0x12000000 | U(width) << 31 | U(op) << 29 | *fields << 10 | *n << 5 | *d;
}

// Move wide operations: opc (01 is unallocated).
enum class MoveWideOp : uint8_t {
  kMovn = 0,  // rd = ~(imm16 << shift)
  kMovz = 2,  // rd = imm16 << shift
  kMovk = 3,  // rd<shift+15:shift> = imm16, other bits kept
};

// Move wide (immediate): builds constants 16 bits at a time.
//
//   31 30 29 28        23 22 21 20             5 4    0
//  +--+-----+-----------+-----+----------------+------+
//  |sf| opc |1 0 0 1 0 1| hw  |     imm16      |  Rd  |
//  +--+-----+-----------+-----+----------------+------+
//
// rd: ZR. shift: 0 or 16 (kW), 0, 16, 32 or 48 (kX); hw = shift / 16.
constexpr uint32_t MoveWideImmediate(MoveWideOp op, Width width, Reg rd, uint32_t imm16,
                                     unsigned shift = 0) {
  using namespace detail;
  const auto d = ZrField(rd);
  if (!d || !Valid(width) ||
      (op != MoveWideOp::kMovn && op != MoveWideOp::kMovz && op != MoveWideOp::kMovk)) {
    return kBreakFault;
  }
  if (imm16 > 0xffff || shift % 16 != 0 || shift >= Bits(width)) return kBreakFault;
  return 0x12800000 | U(width) << 31 | U(op) << 29 | (shift / 16) << 21 | imm16 << 5 | *d;
}

// Bitfield operations: opc.
enum class BitfieldOp : uint8_t {
  kSbfm = 0,  // sign-extending (asr, sxtb/sxth/sxtw, sbfx, sbfiz)
  kBfm = 1,   // insert, other bits kept (bfi, bfxil)
  kUbfm = 2,  // zero-extending (lsl, lsr, uxtb/uxth, ubfx, ubfiz)
};

// Bitfield: the shifts, extensions and field moves (aliases.h has the names).
//
//   31 30 29 28        23 22 21    16 15    10 9    5 4    0
//  +--+-----+-----------+--+--------+--------+------+------+
//  |sf| opc |1 0 0 1 1 0| N|  immr  |  imms  |  Rn  |  Rd  |
//  +--+-----+-----------+--+--------+--------+------+------+
//
// rd, rn: ZR. N = sf. immr, imms < the width in bits.
constexpr uint32_t Bitfield(BitfieldOp op, Width width, Reg rd, Reg rn, unsigned immr,
                            unsigned imms) {
  using namespace detail;
  const auto d = ZrField(rd);
  const auto n = ZrField(rn);
  if (!d || !n || U(op) > 2 || !Valid(width)) return kBreakFault;
  if (immr >= Bits(width) || imms >= Bits(width)) return kBreakFault;
  return 0x13000000 | U(width) << 31 | U(op) << 29 | U(width) << 22 | immr << 16 | imms << 10 |
         *n << 5 | *d;
}

// PC-relative addressing operations: op.
enum class PcRelOp : uint8_t {
  kAdr = 0,   // rd = pc + offset
  kAdrp = 1,  // rd = (pc & ~0xfff) + offset, offset a multiple of 4096
};

// PC-relative addressing: the address of a nearby byte (adr) or page (adrp).
//
//   31 30 29 28       24 23                            5 4    0
//  +--+-----+----------+-------------------------------+------+
//  |op|immlo| 1 0 0 0 0|             immhi             |  Rd  |
//  +--+-----+----------+-------------------------------+------+
//
// rd: ZR. byte_offset: IsAdrOffset (adr) or IsAdrpOffset (adrp: target page
// minus own page, in bytes). imm = immhi:immlo is the offset (adr) or the
// page count (adrp).
constexpr uint32_t PcRelAddressing(PcRelOp op, Reg rd, int64_t byte_offset) {
  using namespace detail;
  const auto d = ZrField(rd);
  if (!d || U(op) > 1) return kBreakFault;
  if (op == PcRelOp::kAdr ? !IsAdrOffset(byte_offset) : !IsAdrpOffset(byte_offset)) {
    return kBreakFault;
  }
  const auto imm = static_cast<uint32_t>(op == PcRelOp::kAdr ? byte_offset : byte_offset / 4096);
  return 0x10000000 | U(op) << 31 | (imm & 3) << 29 | ((imm >> 2) & 0x7ffff) << 5 | *d;
}

// ---------------------------------------------------------------------------
// Data processing (register)
// ---------------------------------------------------------------------------

// Add/subtract (shifted register): rd = rn +- (rm SHIFT amount).
//
//   31 30 29 28     24 23 22 21 20    16 15      10 9    5 4    0
//  +--+--+--+---------+-----+--+--------+----------+------+------+
//  |sf|op| S|0 1 0 1 1|shift| 0|   Rm   |   imm6   |  Rn  |  Rd  |
//  +--+--+--+---------+-----+--+--------+----------+------+------+
//
// rd, rn, rm: ZR (neg, cmp). shift: lsl, lsr or asr; amount < width in bits.
constexpr uint32_t AddSubShiftedRegister(AddSubOp op, Width width, Reg rd, Reg rn, Reg rm,
                                         Shift shift = Shift::kLsl, unsigned amount = 0) {
  using namespace detail;
  const auto d = ZrField(rd);
  const auto n = ZrField(rn);
  const auto m = ZrField(rm);
  if (!d || !n || !m || U(op) > 3 || !Valid(width)) return kBreakFault;
  if (U(shift) > U(Shift::kAsr) || amount >= Bits(width)) return kBreakFault;
  return 0x0b000000 | U(width) << 31 | U(op) << 29 | U(shift) << 22 | *m << 16 | amount << 10 |
         *n << 5 | *d;
}

// Add/subtract (extended register): rd = rn +- (EXTEND(rm) << amount).
//
//   31 30 29 28     24 23 22 21 20    16 15  13 12  10 9    5 4    0
//  +--+--+--+---------+-----+--+--------+------+------+------+------+
//  |sf|op| S|0 1 0 1 1| 0 0 | 1|   Rm   |option| imm3 |  Rn  |  Rd  |
//  +--+--+--+---------+-----+--+--------+------+------+------+------+
//
// rd: SP for add/sub, ZR for adds/subs. rn: SP. rm: ZR (an Xm for uxtx and
// sxtx in the 64-bit form, a Wm otherwise). amount: 0..4.
constexpr uint32_t AddSubExtendedRegister(AddSubOp op, Width width, Reg rd, Reg rn, Reg rm,
                                          Extend extend, unsigned amount = 0) {
  using namespace detail;
  const auto d = SetsFlags(op) ? ZrField(rd) : SpField(rd);
  const auto n = SpField(rn);
  const auto m = ZrField(rm);
  if (!d || !n || !m || U(op) > 3 || !Valid(width)) return kBreakFault;
  if (U(extend) > 7 || amount > 4) return kBreakFault;
  return 0x0b200000 | U(width) << 31 | U(op) << 29 | *m << 16 | U(extend) << 13 | amount << 10 |
         *n << 5 | *d;
}

// Logical operations with a register: opc:N.
enum class LogicalRegOp : uint8_t {
  kAnd = 0,
  kBic = 1,  // and not
  kOrr = 2,
  kOrn = 3,  // or not (mvn)
  kEor = 4,
  kEon = 5,  // xor not
  kAnds = 6,
  kBics = 7,
};

// Logical (shifted register): rd = rn OP (rm SHIFT amount).
//
//   31 30 29 28     24 23 22 21 20    16 15      10 9    5 4    0
//  +--+-----+---------+-----+--+--------+----------+------+------+
//  |sf| opc |0 1 0 1 0|shift| N|   Rm   |   imm6   |  Rn  |  Rd  |
//  +--+-----+---------+-----+--+--------+----------+------+------+
//
// rd, rn, rm: ZR (mov, mvn, tst). amount < width in bits.
constexpr uint32_t LogicalShiftedRegister(LogicalRegOp op, Width width, Reg rd, Reg rn, Reg rm,
                                          Shift shift = Shift::kLsl, unsigned amount = 0) {
  using namespace detail;
  const auto d = ZrField(rd);
  const auto n = ZrField(rn);
  const auto m = ZrField(rm);
  if (!d || !n || !m || U(op) > 7 || !Valid(width)) return kBreakFault;
  if (U(shift) > 3 || amount >= Bits(width)) return kBreakFault;
  return 0x0a000000 | U(width) << 31 | (U(op) >> 1) << 29 | U(shift) << 22 | (U(op) & 1) << 21 |
         *m << 16 | amount << 10 | *n << 5 | *d;
}

// One-source operations: opcode.
enum class DataProc1Op : uint8_t {
  kRbit = 0,   // reverse bits
  kRev16 = 1,  // reverse bytes in each halfword
  kRev32 = 2,  // reverse bytes in each word ("rev wd" for kW, "rev32 xd" for kX)
  kRev = 3,    // reverse the bytes of the doubleword ("rev xd", alias rev64; kX only)
  kClz = 4,    // count leading zeros
  kCls = 5,    // count leading sign bits
};

// Data-processing (1 source): byte swaps and bit counts.
//
//   31 30 29 28             21 20     16 15        10 9    5 4    0
//  +--+--+--+-----------------+---------+------------+------+------+
//  |sf| 1| 0| 1 1 0 1 0 1 1 0 |0 0 0 0 0|   opcode   |  Rn  |  Rd  |
//  +--+--+--+-----------------+---------+------------+------+------+
//
// rd, rn: ZR.
constexpr uint32_t DataProcessing1Source(DataProc1Op op, Width width, Reg rd, Reg rn) {
  using namespace detail;
  const auto d = ZrField(rd);
  const auto n = ZrField(rn);
  if (!d || !n || U(op) > 5 || !Valid(width)) return kBreakFault;
  if (op == DataProc1Op::kRev && width == Width::kW) return kBreakFault;
  return 0x5ac00000 | U(width) << 31 | U(op) << 10 | *n << 5 | *d;
}

// Two-source operations: opcode.
enum class DataProc2Op : uint8_t {
  kUdiv = 2,  // unsigned divide (x / 0 = 0)
  kSdiv = 3,  // signed divide (x / 0 = 0, INT_MIN / -1 = INT_MIN)
  kLslv = 8,  // shifts by rm modulo the width
  kLsrv = 9,
  kAsrv = 10,
  kRorv = 11,
};

// Data-processing (2 sources): division and variable shifts.
//
//   31 30 29 28             21 20    16 15        10 9    5 4    0
//  +--+--+--+-----------------+--------+------------+------+------+
//  |sf| 0| 0| 1 1 0 1 0 1 1 0 |   Rm   |   opcode   |  Rn  |  Rd  |
//  +--+--+--+-----------------+--------+------------+------+------+
//
// rd, rn, rm: ZR.
constexpr uint32_t DataProcessing2Source(DataProc2Op op, Width width, Reg rd, Reg rn, Reg rm) {
  using namespace detail;
  const auto d = ZrField(rd);
  const auto n = ZrField(rn);
  const auto m = ZrField(rm);
  const bool known = op == DataProc2Op::kUdiv || op == DataProc2Op::kSdiv ||
                     (U(op) >= U(DataProc2Op::kLslv) && U(op) <= U(DataProc2Op::kRorv));
  if (!d || !n || !m || !known || !Valid(width)) return kBreakFault;
  return 0x1ac00000 | U(width) << 31 | *m << 16 | U(op) << 10 | *n << 5 | *d;
}

// Three-source operations: op31:o0.
enum class DataProc3Op : uint8_t {
  kMadd = 0,     // rd = ra + rn * rm (mul with ra = ZR)
  kMsub = 1,     // rd = ra - rn * rm (the remainder of a division)
  kSmaddl = 2,   // xd = xa + sext(wn) * sext(wm); kX only
  kSmsubl = 3,   // kX only
  kSmulh = 4,    // high 64 bits of the signed 128-bit product; kX, ra = ZR
  kUmaddl = 10,  // xd = xa + zext(wn) * zext(wm); kX only
  kUmsubl = 11,  // kX only
  kUmulh = 12,   // high 64 bits of the unsigned product; kX, ra = ZR
};

// Data-processing (3 sources): multiply-add and friends.
//
//   31 30 29 28     24 23  21 20    16 15 14    10 9    5 4    0
//  +--+-----+---------+------+--------+--+--------+------+------+
//  |sf| 0 0 |1 1 0 1 1| op31 |   Rm   |o0|   Ra   |  Rn  |  Rd  |
//  +--+-----+---------+------+--------+--+--------+------+------+
//
// rd, rn, rm, ra: ZR. The long and high forms exist only for kX; for the
// long forms rn and rm are read as Wn, Wm.
constexpr uint32_t DataProcessing3Source(DataProc3Op op, Width width, Reg rd, Reg rn, Reg rm,
                                         Reg ra) {
  using namespace detail;
  const auto d = ZrField(rd);
  const auto n = ZrField(rn);
  const auto m = ZrField(rm);
  const auto a = ZrField(ra);
  if (!d || !n || !m || !a || !Valid(width)) return kBreakFault;
  switch (op) {
    case DataProc3Op::kMadd:
    case DataProc3Op::kMsub:
      break;
    case DataProc3Op::kSmaddl:
    case DataProc3Op::kSmsubl:
    case DataProc3Op::kUmaddl:
    case DataProc3Op::kUmsubl:
      if (width != Width::kX) return kBreakFault;
      break;
    case DataProc3Op::kSmulh:
    case DataProc3Op::kUmulh:
      if (width != Width::kX || ra != Reg::kZr) return kBreakFault;
      break;
    default:
      return kBreakFault;
  }
  return 0x1b000000 | U(width) << 31 | (U(op) >> 1) << 21 | *m << 16 | (U(op) & 1) << 15 |
         *a << 10 | *n << 5 | *d;
}

// Conditional select operations: op:o2.
enum class CondSelectOp : uint8_t {
  kCsel = 0,   // rd = cond ? rn : rm
  kCsinc = 1,  // rd = cond ? rn : rm + 1 (cset, cinc)
  kCsinv = 2,  // rd = cond ? rn : ~rm (csetm)
  kCsneg = 3,  // rd = cond ? rn : -rm (cneg)
};

// Conditional select.
//
//   31 30 29 28             21 20    16 15  12 11 10 9    5 4    0
//  +--+--+--+-----------------+--------+------+--+--+------+------+
//  |sf|op| 0| 1 1 0 1 0 1 0 0 |   Rm   | cond | 0|o2|  Rn  |  Rd  |
//  +--+--+--+-----------------+--------+------+--+--+------+------+
//
// rd, rn, rm: ZR.
constexpr uint32_t ConditionalSelect(CondSelectOp op, Width width, Reg rd, Reg rn, Reg rm,
                                     Cond cond) {
  using namespace detail;
  const auto d = ZrField(rd);
  const auto n = ZrField(rn);
  const auto m = ZrField(rm);
  if (!d || !n || !m || U(op) > 3 || !Valid(width) || U(cond) > 15) return kBreakFault;
  return 0x1a800000 | U(width) << 31 | (U(op) >> 1) << 30 | *m << 16 | U(cond) << 12 |
         (U(op) & 1) << 10 | *n << 5 | *d;
}

// ---------------------------------------------------------------------------
// Loads and stores
// ---------------------------------------------------------------------------

// Load-register-literal operations: opc (11 is a prefetch, not offered).
enum class LiteralOp : uint8_t {
  kLdrW = 0,   // ldr wt, label
  kLdrX = 1,   // ldr xt, label (the JIT's PLT target)
  kLdrsw = 2,  // ldrsw xt, label
};

// Load register (literal): a PC-relative load.
//
//   31 30 29 28 27 26 25 24 23                            5 4    0
//  +-----+--------+--+-----+-------------------------------+------+
//  | opc | 0 1 1  | V| 0 0 |             imm19             |  Rt  |
//  +-----+--------+--+-----+-------------------------------+------+
//
// rt: ZR. V = 0. byte_offset: IsBranchOffset19.
constexpr uint32_t LoadRegisterLiteral(LiteralOp op, Reg rt, int64_t byte_offset) {
  using namespace detail;
  const auto t = ZrField(rt);
  if (!t || U(op) > 2 || !IsBranchOffset19(byte_offset)) return kBreakFault;
  const auto imm19 = static_cast<uint32_t>(byte_offset / 4) & 0x7ffff;
  return 0x18000000 | U(op) << 30 | imm19 << 5 | *t;
}

// Load/store register operations: opc.
enum class LoadStoreOp : uint8_t {
  kStore = 0,         // str, strb, strh
  kLoad = 1,          // ldr, ldrb, ldrh (zero-extending)
  kLoadSigned64 = 2,  // ldrsb, ldrsh, ldrsw into an Xt (k8, k16, k32)
  kLoadSigned32 = 3,  // ldrsb, ldrsh into a Wt (k8, k16)
};

namespace detail {
// The (size, opc) pairs that are loads or stores of a general register (the
// others are prefetches or unallocated).
constexpr bool ValidLoadStore(LoadStoreOp op, Size size) {
  if (!Valid(size)) return false;
  switch (op) {
    case LoadStoreOp::kStore:
    case LoadStoreOp::kLoad:
      return true;
    case LoadStoreOp::kLoadSigned64:
      return size != Size::k64;
    case LoadStoreOp::kLoadSigned32:
      return size == Size::k8 || size == Size::k16;
  }
  return false;
}
}  // namespace detail

// Load/store register (unsigned immediate): [rn, #byte_offset].
//
//   31 30 29 28 27 26 25 24 23 22 21                  10 9    5 4    0
//  +-----+--------+--+-----+-----+----------------------+------+------+
//  | size| 1 1 1  | V| 0 1 | opc |        imm12         |  Rn  |  Rt  |
//  +-----+--------+--+-----+-----+----------------------+------+------+
//
// rt: ZR. rn: SP. V = 0. byte_offset: IsScaledOffset (imm12 = offset / bytes).
constexpr uint32_t LoadStoreUnsignedImmediate(LoadStoreOp op, Size size, Reg rt, Reg rn,
                                              int64_t byte_offset) {
  using namespace detail;
  const auto t = ZrField(rt);
  const auto n = SpField(rn);
  if (!t || !n || !ValidLoadStore(op, size) || !IsScaledOffset(byte_offset, size)) {
    return kBreakFault;
  }
  const auto imm12 = static_cast<uint32_t>(byte_offset / Bytes(size));
  return 0x39000000 | U(size) << 30 | U(op) << 22 | imm12 << 10 | *n << 5 | *t;
}

// Load/store register (unscaled immediate): ldur/stur [rn, #byte_offset].
//
//   31 30 29 28 27 26 25 24 23 22 21 20            12 11 10 9    5 4    0
//  +-----+--------+--+-----+-----+--+----------------+-----+------+------+
//  | size| 1 1 1  | V| 0 0 | opc | 0|      imm9      | 0 0 |  Rn  |  Rt  |
//  +-----+--------+--+-----+-----+--+----------------+-----+------+------+
//
// rt: ZR. rn: SP. V = 0. byte_offset: IsUnscaledOffset (-256..255).
constexpr uint32_t LoadStoreUnscaledImmediate(LoadStoreOp op, Size size, Reg rt, Reg rn,
                                              int64_t byte_offset) {
  using namespace detail;
  const auto t = ZrField(rt);
  const auto n = SpField(rn);
  if (!t || !n || !ValidLoadStore(op, size) || !IsUnscaledOffset(byte_offset)) {
    return kBreakFault;
  }
  const auto imm9 = static_cast<uint32_t>(byte_offset) & 0x1ff;
  return 0x38000000 | U(size) << 30 | U(op) << 22 | imm9 << 12 | *n << 5 | *t;
}

// Write-back addressing of the indexed and pair classes.
enum class Indexing : uint8_t {
  kPostIndex,  // access [rn], then rn += offset
  kPreIndex,   // rn += offset, then access [rn]
  kOffset,     // access [rn + offset], no write-back (pairs only)
};

// Load/store register (immediate post-indexed / pre-indexed).
//
//   31 30 29 28 27 26 25 24 23 22 21 20            12 11 10 9    5 4    0
//  +-----+--------+--+-----+-----+--+----------------+-----+------+------+
//  | size| 1 1 1  | V| 0 0 | opc | 0|      imm9      | P 1 |  Rn  |  Rt  |
//  +-----+--------+--+-----+-----+--+----------------+-----+------+------+
//
// rt: ZR. rn: SP, and not the same register as rt (CONSTRAINED
// UNPREDICTABLE). P = 1 for pre-index. byte_offset: IsUnscaledOffset.
constexpr uint32_t LoadStoreImmediateIndexed(LoadStoreOp op, Size size, Reg rt, Reg rn,
                                             int64_t byte_offset, Indexing indexing) {
  using namespace detail;
  const auto t = ZrField(rt);
  const auto n = SpField(rn);
  if (!t || !n || !ValidLoadStore(op, size) || !IsUnscaledOffset(byte_offset)) {
    return kBreakFault;
  }
  if (indexing == Indexing::kOffset || U(indexing) > 2) return kBreakFault;
  if (*n == *t && *n != 31) return kBreakFault;
  const uint32_t pre = indexing == Indexing::kPreIndex ? 1 : 0;
  const auto imm9 = static_cast<uint32_t>(byte_offset) & 0x1ff;
  return 0x38000400 | U(size) << 30 | U(op) << 22 | imm9 << 12 | pre << 11 | *n << 5 | *t;
}

// Load/store register (register offset): [rn, EXTEND(rm) << (scaled ? log2(bytes) : 0)].
//
//   31 30 29 28 27 26 25 24 23 22 21 20    16 15  13 12 11 10 9    5 4    0
//  +-----+--------+--+-----+-----+--+--------+------+--+-----+------+------+
//  | size| 1 1 1  | V| 0 0 | opc | 1|   Rm   |option| S| 1 0 |  Rn  |  Rt  |
//  +-----+--------+--+-----+-----+--+--------+------+--+-----+------+------+
//
// rt: ZR. rn: SP. rm: ZR, an Xm for kUxtx ("lsl") and kSxtx, a Wm for kUxtw
// and kSxtw (the only extends allowed).
constexpr uint32_t LoadStoreRegisterOffset(LoadStoreOp op, Size size, Reg rt, Reg rn, Reg rm,
                                           Extend extend = Extend::kUxtx, bool scaled = false) {
  using namespace detail;
  const auto t = ZrField(rt);
  const auto n = SpField(rn);
  const auto m = ZrField(rm);
  if (!t || !n || !m || !ValidLoadStore(op, size)) return kBreakFault;
  if (extend != Extend::kUxtw && extend != Extend::kUxtx && extend != Extend::kSxtw &&
      extend != Extend::kSxtx) {
    return kBreakFault;
  }
  return 0x38200800 | U(size) << 30 | U(op) << 22 | *m << 16 | U(extend) << 13 |
         uint32_t{scaled} << 12 | *n << 5 | *t;
}

// Load/store pair operations.
enum class PairOp : uint8_t {
  kStore,            // stp
  kLoad,             // ldp
  kLoadSignedWords,  // ldpsw: two sign-extended words into Xt, Xt2 (width kX)
};

// Load/store register pair (post-indexed, signed offset, pre-indexed).
//
//   31 30 29 28 27 26 25 24 23 22 21            15 14    10 9    5 4    0
//  +-----+--------+--+--+-----+--+----------------+--------+------+------+
//  | opc | 1 0 1  | V| 0| idx | L|      imm7      |  Rt2   |  Rn  |  Rt  |
//  +-----+--------+--+--+-----+--+----------------+--------+------+------+
//
// idx: 01 post-index, 10 signed offset, 11 pre-index. opc: 00 W, 01 ldpsw,
// 10 X. rt, rt2: ZR; a load needs rt != rt2. rn: SP; with write-back it must
// differ from rt and rt2. byte_offset: IsPairOffset (imm7 = offset / 4 or 8).
constexpr uint32_t LoadStorePair(PairOp op, Width width, Reg rt, Reg rt2, Reg rn,
                                 int64_t byte_offset, Indexing indexing = Indexing::kOffset) {
  using namespace detail;
  const auto t = ZrField(rt);
  const auto t2 = ZrField(rt2);
  const auto n = SpField(rn);
  if (!t || !t2 || !n || !Valid(width) || U(op) > 2 || U(indexing) > 2) return kBreakFault;
  const bool signed_words = op == PairOp::kLoadSignedWords;
  if (signed_words && width != Width::kX) return kBreakFault;
  const Width scale = signed_words ? Width::kW : width;
  if (!IsPairOffset(byte_offset, scale)) return kBreakFault;
  if (op != PairOp::kStore && *t == *t2) return kBreakFault;
  if (indexing != Indexing::kOffset && *n != 31 && (*n == *t || *n == *t2)) return kBreakFault;
  const uint32_t opc = signed_words ? 1 : U(width) << 1;
  const uint32_t idx = indexing == Indexing::kPostIndex ? 1 : indexing == Indexing::kOffset ? 2 : 3;
  const uint32_t load = op == PairOp::kStore ? 0 : 1;
  const auto imm7 = static_cast<uint32_t>(byte_offset / (scale == Width::kX ? 8 : 4)) & 0x7f;
  return 0x28000000 | opc << 30 | idx << 23 | load << 22 | imm7 << 15 | *t2 << 10 | *n << 5 | *t;
}

// Exclusive and ordered load/store operations: o2:L:o0 (o1 = 0).
enum class ExclusiveOp : uint8_t {
  kStxr = 0,   // store exclusive; rs = status (0 = stored)
  kStlxr = 1,  // store-release exclusive
  kLdxr = 2,   // load exclusive
  kLdaxr = 3,  // load-acquire exclusive
  kStlr = 5,   // store-release
  kLdar = 7,   // load-acquire
};

// Load/store exclusive and load-acquire/store-release (ordered).
//
//   31 30 29 28       24 23 22 21 20    16 15 14    10 9    5 4    0
//  +-----+-------------+--+--+--+--------+--+--------+------+------+
//  | size| 0 0 1 0 0 0 |o2| L|o1|   Rs   |o0|  Rt2   |  Rn  |  Rt  |
//  +-----+-------------+--+--+--+--------+--+--------+------+------+
//
// rs: ZR; the status register of stxr/stlxr (a Ws, not rt and not rn unless
// rn is SP), and kZr for the other operations. rt: ZR. rn: SP. Rt2 = 11111.
constexpr uint32_t LoadStoreExclusive(ExclusiveOp op, Size size, Reg rs, Reg rt, Reg rn) {
  using namespace detail;
  const auto s = ZrField(rs);
  const auto t = ZrField(rt);
  const auto n = SpField(rn);
  if (!s || !t || !n || !Valid(size)) return kBreakFault;
  const bool has_status = op == ExclusiveOp::kStxr || op == ExclusiveOp::kStlxr;
  if (!has_status && op != ExclusiveOp::kLdxr && op != ExclusiveOp::kLdaxr &&
      op != ExclusiveOp::kStlr && op != ExclusiveOp::kLdar) {
    return kBreakFault;
  }
  if (has_status ? (*s == *t || (*s == *n && *n != 31)) : rs != Reg::kZr) return kBreakFault;
  const uint32_t o2 = U(op) >> 2;
  const uint32_t load = (U(op) >> 1) & 1;
  const uint32_t o0 = U(op) & 1;
  return 0x08007c00 | U(size) << 30 | o2 << 23 | load << 22 | *s << 16 | o0 << 15 | *n << 5 | *t;
}

// Atomic memory operations (FEAT_LSE): o3:opc.
enum class AtomicOp : uint8_t {
  kLdadd = 0,   // rt = *rn; *rn += rs
  kLdclr = 1,   // rt = *rn; *rn &= ~rs
  kLdeor = 2,   // rt = *rn; *rn ^= rs
  kLdset = 3,   // rt = *rn; *rn |= rs
  kLdsmax = 4,  // signed maximum
  kLdsmin = 5,
  kLdumax = 6,  // unsigned maximum
  kLdumin = 7,
  kSwp = 8,  // rt = *rn; *rn = rs
};

// Atomic memory operations: ldadd{a,l,al}{b,h}, ..., swp{a,l,al}{b,h}.
//
//   31 30 29 28 27 26 25 24 23 22 21 20    16 15 14 12 11 10 9    5 4    0
//  +-----+--------+--+-----+--+--+--+--------+--+-----+-----+------+------+
//  | size| 1 1 1  | V| 0 0 | A| R| 1|   Rs   |o3| opc | 0 0 |  Rn  |  Rt  |
//  +-----+--------+--+-----+--+--+--+--------+--+-----+-----+------+------+
//
// rs, rt: ZR (rt = ZR without acquire is the st<op> alias). rn: SP. V = 0.
constexpr uint32_t AtomicMemoryOperation(AtomicOp op, Size size, MemOrder order, Reg rs, Reg rt,
                                         Reg rn) {
  using namespace detail;
  const auto s = ZrField(rs);
  const auto t = ZrField(rt);
  const auto n = SpField(rn);
  if (!s || !t || !n || U(op) > 8 || !Valid(size) || U(order) > 3) return kBreakFault;
  return 0x38200000 | U(size) << 30 | uint32_t{HasAcquire(order)} << 23 |
         uint32_t{HasRelease(order)} << 22 | *s << 16 | U(op) << 12 | *n << 5 | *t;
}

// Compare and swap (FEAT_LSE): cas{a,l,al}{b,h}.
//
//   31 30 29 28       24 23 22 21 20    16 15 14    10 9    5 4    0
//  +-----+-------------+--+--+--+--------+--+--------+------+------+
//  | size| 0 0 1 0 0 0 | 1| L| 1|   Rs   |o0| 11111  |  Rn  |  Rt  |
//  +-----+-------------+--+--+--+--------+--+--------+------+------+
//
// if (*rn == rs) *rn = rt; rs = old *rn. L = acquire, o0 = release.
// rs, rt: ZR. rn: SP.
constexpr uint32_t CompareAndSwap(Size size, MemOrder order, Reg rs, Reg rt, Reg rn) {
  using namespace detail;
  const auto s = ZrField(rs);
  const auto t = ZrField(rt);
  const auto n = SpField(rn);
  if (!s || !t || !n || !Valid(size) || U(order) > 3) return kBreakFault;
  return 0x08a07c00 | U(size) << 30 | uint32_t{HasAcquire(order)} << 22 | *s << 16 |
         uint32_t{HasRelease(order)} << 15 | *n << 5 | *t;
}

// ---------------------------------------------------------------------------
// Branches, exceptions and system instructions
// ---------------------------------------------------------------------------

enum class BranchOp : uint8_t {
  kB = 0,   // branch
  kBl = 1,  // branch with link (x30 = return address)
};

// Unconditional branch (immediate).
//
//   31 30       26 25                                               0
//  +--+----------+---------------------------------------------------+
//  |op| 0 0 1 0 1|                       imm26                       |
//  +--+----------+---------------------------------------------------+
//
// byte_offset: IsBranchOffset26 (+-128 MiB, a multiple of 4).
constexpr uint32_t UnconditionalBranchImmediate(BranchOp op, int64_t byte_offset) {
  using namespace detail;
  if (U(op) > 1 || !IsBranchOffset26(byte_offset)) return kBreakFault;
  const auto imm26 = static_cast<uint32_t>(byte_offset / 4) & 0x3ffffff;
  return 0x14000000 | U(op) << 31 | imm26;
}

// Unconditional branch (register) operations: opc.
enum class BranchRegOp : uint8_t {
  kBr = 0,   // branch to rn
  kBlr = 1,  // call rn
  kRet = 2,  // return to rn (x30 normally)
};

// Unconditional branch (register).
//
//   31          25 24  21 20     16 15        10 9    5 4       0
//  +--------------+------+---------+------------+------+---------+
//  |1 1 0 1 0 1 1 | opc  |1 1 1 1 1| 0 0 0 0 0 0|  Rn  |0 0 0 0 0|
//  +--------------+------+---------+------------+------+---------+
//
// rn: ZR.
constexpr uint32_t UnconditionalBranchRegister(BranchRegOp op, Reg rn) {
  using namespace detail;
  const auto n = ZrField(rn);
  if (!n || U(op) > 2) return kBreakFault;
  return 0xd61f0000 | U(op) << 21 | *n << 5;
}

// Conditional branch (immediate): b.cond.
//
//   31          25 24 23                              5 4  3    0
//  +--------------+--+---------------------------------+--+------+
//  |0 1 0 1 0 1 0 | 0|              imm19              | 0| cond |
//  +--------------+--+---------------------------------+--+------+
//
// byte_offset: IsBranchOffset19 (+-1 MiB, a multiple of 4).
constexpr uint32_t ConditionalBranchImmediate(Cond cond, int64_t byte_offset) {
  using namespace detail;
  if (U(cond) > 15 || !IsBranchOffset19(byte_offset)) return kBreakFault;
  const auto imm19 = static_cast<uint32_t>(byte_offset / 4) & 0x7ffff;
  return 0x54000000 | imm19 << 5 | U(cond);
}

enum class CompareBranchOp : uint8_t {
  kCbz = 0,   // branch if rt == 0
  kCbnz = 1,  // branch if rt != 0
};

// Compare and branch (immediate).
//
//   31 30        25 24 23                              5 4    0
//  +--+-----------+--+---------------------------------+------+
//  |sf|0 1 1 0 1 0|op|              imm19              |  Rt  |
//  +--+-----------+--+---------------------------------+------+
//
// rt: ZR. byte_offset: IsBranchOffset19.
constexpr uint32_t CompareAndBranchImmediate(CompareBranchOp op, Width width, Reg rt,
                                             int64_t byte_offset) {
  using namespace detail;
  const auto t = ZrField(rt);
  if (!t || U(op) > 1 || !Valid(width) || !IsBranchOffset19(byte_offset)) return kBreakFault;
  const auto imm19 = static_cast<uint32_t>(byte_offset / 4) & 0x7ffff;
  return 0x34000000 | U(width) << 31 | U(op) << 24 | imm19 << 5 | *t;
}

enum class TestBranchOp : uint8_t {
  kTbz = 0,   // branch if bit `bit` of rt is 0
  kTbnz = 1,  // branch if it is 1
};

// Test bit and branch (immediate).
//
//   31 30        25 24 23   19 18                      5 4    0
//  +--+-----------+--+-------+-------------------------+------+
//  |b5|0 1 1 0 1 1|op|  b40  |          imm14          |  Rt  |
//  +--+-----------+--+-------+-------------------------+------+
//
// rt: ZR (Wt for bit < 32, Xt otherwise). bit: 0..63.
// byte_offset: IsBranchOffset14 (+-32 KiB, a multiple of 4).
constexpr uint32_t TestAndBranchImmediate(TestBranchOp op, Reg rt, unsigned bit,
                                          int64_t byte_offset) {
  using namespace detail;
  const auto t = ZrField(rt);
  if (!t || U(op) > 1 || bit > 63 || !IsBranchOffset14(byte_offset)) return kBreakFault;
  const auto imm14 = static_cast<uint32_t>(byte_offset / 4) & 0x3fff;
  return 0x36000000 | (bit >> 5) << 31 | U(op) << 24 | (bit & 31) << 19 | imm14 << 5 | *t;
}

// Exception generation operations: opc:LL.
enum class ExceptionOp : uint8_t {
  kSvc = 0x01,  // supervisor call
  kHvc = 0x02,  // hypervisor call
  kSmc = 0x03,  // secure monitor call
  kBrk = 0x04,  // breakpoint (kBreakFault is brk #0x100)
  kHlt = 0x08,  // halt (external debug)
};

// Exception generation.
//
//   31            24 23  21 20                            5 4  2 1 0
//  +----------------+------+-------------------------------+-----+---+
//  |1 1 0 1 0 1 0 0 | opc  |             imm16             | 000 | LL|
//  +----------------+------+-------------------------------+-----+---+
constexpr uint32_t ExceptionGeneration(ExceptionOp op, uint32_t imm16) {
  using namespace detail;
  if (op != ExceptionOp::kSvc && op != ExceptionOp::kHvc && op != ExceptionOp::kSmc &&
      op != ExceptionOp::kBrk && op != ExceptionOp::kHlt) {
    return kBreakFault;
  }
  if (imm16 > 0xffff) return kBreakFault;
  return 0xd4000000 | (U(op) >> 2) << 21 | imm16 << 5 | (U(op) & 3);
}

// Permanently undefined: udf #imm16, always an undefined-instruction trap.
//
//   31                            16 15                            0
//  +--------------------------------+-------------------------------+
//  |0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 |             imm16             |
//  +--------------------------------+-------------------------------+
constexpr uint32_t PermanentlyUndefined(uint32_t imm16) {
  if (imm16 > 0xffff) return kBreakFault;
  return imm16;
}

// Barrier operations: op2.
enum class BarrierOp : uint8_t {
  kDsb = 4,  // data synchronization barrier
  kDmb = 5,  // data memory barrier
  kIsb = 6,  // instruction synchronization barrier (option kSy)
};

// Barrier domain and access types: CRm.
enum class BarrierOption : uint8_t {
  kOshld = 1,
  kOshst = 2,
  kOsh = 3,
  kNshld = 5,
  kNshst = 6,
  kNsh = 7,
  kIshld = 9,
  kIshst = 10,
  kIsh = 11,  // inner shareable: what smp barriers use
  kLd = 13,
  kSt = 14,
  kSy = 15,  // full system
};

// Barriers.
//
//   31                 22 21 20 19 18 16 15  12 11   8 7   5 4       0
//  +---------------------+--+-----+-----+------+------+-----+---------+
//  |1 1 0 1 0 1 0 1 0 0  | 0| 0 0 | 011 | 0011 | CRm  | op2 |1 1 1 1 1|
//  +---------------------+--+-----+-----+------+------+-----+---------+
constexpr uint32_t Barrier(BarrierOp op, BarrierOption option) {
  using namespace detail;
  if (op != BarrierOp::kDsb && op != BarrierOp::kDmb && op != BarrierOp::kIsb) {
    return kBreakFault;
  }
  // CRm 0 is ssbb/pssbb/.. for dsb, and 4 is the nXS variant space; only the
  // named options are offered. isb takes kSy.
  const uint32_t crm = U(option);
  if (crm == 0 || crm == 4 || crm == 8 || crm == 12 || crm > 15) return kBreakFault;
  if (op == BarrierOp::kIsb && option != BarrierOption::kSy) return kBreakFault;
  return 0xd503301f | crm << 8 | U(op) << 5;
}

// Hints: CRm:op2.
enum class HintOp : uint8_t {
  kNop = 0,
  kYield = 1,
  kWfe = 2,
  kWfi = 3,
  kSev = 4,
  kSevl = 5,
  kPaciasp = 25,  // sign lr with key A and sp (prologue, FEAT_PAuth)
  kAutiasp = 29,  // authenticate lr (epilogue)
  kBti = 32,      // bti (no target kind)
  kBtiC = 34,     // landing pad for calls (blr)
  kBtiJ = 36,     // landing pad for jumps (br)
  kBtiJc = 38,    // both
};

// Hints: nop, bti and the pointer-authentication hints (hint #imm7 for any
// value; the named ones are in HintOp).
//
//   31                 22 21 20 19 18 16 15  12 11   8 7   5 4       0
//  +---------------------+--+-----+-----+------+------+-----+---------+
//  |1 1 0 1 0 1 0 1 0 0  | 0| 0 0 | 011 | 0010 | CRm  | op2 |1 1 1 1 1|
//  +---------------------+--+-----+-----+------+------+-----+---------+
constexpr uint32_t Hint(HintOp op) {
  using namespace detail;
  if (U(op) > 0x7f) return kBreakFault;
  return 0xd503201f | U(op) << 5;
}

// A system register by its encoding (op0, op1, CRn, CRm, op2), as the
// Arm ARM lists it (op0 is 2 or 3 for registers MRS/MSR can name).
struct SystemRegister {
  uint8_t op0;
  uint8_t op1;
  uint8_t crn;
  uint8_t crm;
  uint8_t op2;
};

inline constexpr SystemRegister kNzcv{3, 3, 4, 2, 0};        // condition flags
inline constexpr SystemRegister kTpidrEl0{3, 3, 13, 0, 2};   // user thread pointer
inline constexpr SystemRegister kTpidrEl1{3, 0, 13, 0, 4};   // per-CPU offset (kernel at EL1)
inline constexpr SystemRegister kTpidrEl2{3, 4, 13, 0, 2};   // per-CPU offset (kernel at EL2, VHE)
inline constexpr SystemRegister kCntvctEl0{3, 3, 14, 0, 2};  // virtual counter

enum class SystemRegisterDirection : uint8_t {
  kMsr = 0,  // write the register from rt
  kMrs = 1,  // read it into rt
};

// System register move: mrs xt, <reg> / msr <reg>, xt.
//
//   31                 22 21 20 19 18  16 15  12 11   8 7   5 4    0
//  +---------------------+--+--+--+------+------+------+-----+------+
//  |1 1 0 1 0 1 0 1 0 0  | L| 1|o0| op1  | CRn  | CRm  | op2 |  Rt  |
//  +---------------------+--+--+--+------+------+------+-----+------+
//
// L = 1 for mrs; op0 = 1:o0. rt: ZR.
constexpr uint32_t SystemRegisterMove(SystemRegisterDirection direction, SystemRegister reg,
                                      Reg rt) {
  using namespace detail;
  const auto t = ZrField(rt);
  if (!t || U(direction) > 1) return kBreakFault;
  if (reg.op0 < 2 || reg.op0 > 3 || reg.op1 > 7 || reg.crn > 15 || reg.crm > 15 || reg.op2 > 7) {
    return kBreakFault;
  }
  return 0xd5000000 | U(direction) << 21 | uint32_t{reg.op0} << 19 | uint32_t{reg.op1} << 16 |
         uint32_t{reg.crn} << 12 | uint32_t{reg.crm} << 8 | uint32_t{reg.op2} << 5 | *t;
}

// A system instruction (sys #op1, Cn, Cm, #op2, xt) by its encoding, and
// whether it takes an address register.
struct SystemOperation {
  uint8_t op1;
  uint8_t crn;
  uint8_t crm;
  uint8_t op2;
  bool takes_register;
};

inline constexpr SystemOperation kDcCvau{3, 7, 11, 1, true};     // clean D-line to PoU
inline constexpr SystemOperation kDcCvac{3, 7, 10, 1, true};     // clean D-line to PoC
inline constexpr SystemOperation kDcCivac{3, 7, 14, 1, true};    // clean+invalidate to PoC
inline constexpr SystemOperation kIcIvau{3, 7, 5, 1, true};      // invalidate I-line to PoU
inline constexpr SystemOperation kIcIallu{0, 7, 5, 0, false};    // invalidate all I-cache (PE)
inline constexpr SystemOperation kIcIalluis{0, 7, 1, 0, false};  // ... (inner shareable)

// System instruction: cache maintenance (dc, ic) and the generic sys.
//
//   31                 22 21 20 19 18  16 15  12 11   8 7   5 4    0
//  +---------------------+--+-----+------+------+------+-----+------+
//  |1 1 0 1 0 1 0 1 0 0  | 0| 0 1 | op1  | CRn  | CRm  | op2 |  Rt  |
//  +---------------------+--+-----+------+------+------+-----+------+
//
// rt: ZR; the virtual address for operations that take one, kZr for the
// others (ic iallu).
constexpr uint32_t SystemInstruction(SystemOperation op, Reg rt) {
  using namespace detail;
  const auto t = ZrField(rt);
  if (!t || op.op1 > 7 || op.crn > 15 || op.crm > 15 || op.op2 > 7) return kBreakFault;
  if (!op.takes_register && rt != Reg::kZr) return kBreakFault;
  return 0xd5080000 | uint32_t{op.op1} << 16 | uint32_t{op.crn} << 12 | uint32_t{op.crm} << 8 |
         uint32_t{op.op2} << 5 | *t;
}

}  // namespace bpfdiff::a64
