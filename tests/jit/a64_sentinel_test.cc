// Every encoder returns kBreakFault for each kind of operand it cannot
// encode. Each case pairs the bad word with a good one that differs only in
// the offending operand, so that a sentinel cannot come from anything else.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "jit/a64/move_immediate.h"

namespace bpfdiff::a64 {
namespace {

using enum Reg;
using enum Width;

struct SentinelCase {
  std::string what;
  uint32_t good;  // the same instruction with an encodable operand
  uint32_t bad;   // must be kBreakFault
};

constexpr Reg kBadReg = static_cast<Reg>(33);  // not X0..X30, ZR or SP

void Check(const std::vector<SentinelCase>& cases) {
  for (const SentinelCase& c : cases) {
    EXPECT_NE(c.good, kBreakFault) << c.what << ": the good variant does not encode";
    EXPECT_EQ(c.bad, kBreakFault) << c.what << ": encoded as 0x" << std::hex << c.bad;
  }
}

TEST(a64_sentinel, DataProcessingImmediate) {
  using enum AddSubOp;
  using enum LogicalImmOp;
  using enum MoveWideOp;
  using enum BitfieldOp;
  Check({
      {"add imm12 out of range", AddSubImmediate(kAdd, kX, kX0, kX1, 4095),
       AddSubImmediate(kAdd, kX, kX0, kX1, 4096)},
      {"add: rd is SP, not ZR", AddSubImmediate(kAdd, kX, kSp, kX1, 1),
       AddSubImmediate(kAdd, kX, kZr, kX1, 1)},
      {"adds: rd is ZR, not SP", AddSubImmediate(kAdds, kX, kZr, kX1, 1),
       AddSubImmediate(kAdds, kX, kSp, kX1, 1)},
      {"add: rn is SP, not ZR", AddSubImmediate(kSub, kW, kX0, kSp, 1),
       AddSubImmediate(kSub, kW, kX0, kZr, 1)},
      {"add: register out of range", AddSubImmediate(kAdd, kX, kX0, kX30, 1),
       AddSubImmediate(kAdd, kX, kX0, kBadReg, 1)},
      {"add: X(31) is not a register", AddSubImmediate(kAdd, kX, kX0, X(30), 1),
       AddSubImmediate(kAdd, kX, kX0, X(31), 1)},
      {"add: bad op", AddSubImmediate(kSubs, kX, kX0, kX1, 1),
       AddSubImmediate(static_cast<AddSubOp>(4), kX, kX0, kX1, 1)},
      {"add: bad width", AddSubImmediate(kAdd, kX, kX0, kX1, 1),
       AddSubImmediate(kAdd, static_cast<Width>(2), kX0, kX1, 1)},
      {"and: 0 is not a bitmask", LogicalImmediate(kAnd, kX, kX0, kX1, 1),
       LogicalImmediate(kAnd, kX, kX0, kX1, 0)},
      {"and: ~0 is not a bitmask", LogicalImmediate(kAnd, kX, kX0, kX1, 0x7fffffffffffffff),
       LogicalImmediate(kAnd, kX, kX0, kX1, ~uint64_t{0})},
      {"and w: 0xffffffff is not a bitmask", LogicalImmediate(kAnd, kW, kX0, kX1, 0xfffffffe),
       LogicalImmediate(kAnd, kW, kX0, kX1, 0xffffffff)},
      {"orr: 0x1234 is not a bitmask", LogicalImmediate(kOrr, kX, kX0, kX1, 0x1e00),
       LogicalImmediate(kOrr, kX, kX0, kX1, 0x1234)},
      {"eor w: value wider than 32 bits", LogicalImmediate(kEor, kW, kX0, kX1, 0xff),
       LogicalImmediate(kEor, kW, kX0, kX1, 0x1000000ff)},
      {"and: rd is SP, not ZR", LogicalImmediate(kAnd, kX, kSp, kX1, 0xff),
       LogicalImmediate(kAnd, kX, kZr, kX1, 0xff)},
      {"ands: rd is ZR, not SP", LogicalImmediate(kAnds, kX, kZr, kX1, 0xff),
       LogicalImmediate(kAnds, kX, kSp, kX1, 0xff)},
      {"and: rn is ZR, not SP", LogicalImmediate(kAnd, kX, kX0, kZr, 0xff),
       LogicalImmediate(kAnd, kX, kX0, kSp, 0xff)},
      {"movz imm16 out of range", MoveWideImmediate(kMovz, kX, kX0, 0xffff),
       MoveWideImmediate(kMovz, kX, kX0, 0x10000)},
      {"movz shift not a multiple of 16", MoveWideImmediate(kMovz, kX, kX0, 1, 16),
       MoveWideImmediate(kMovz, kX, kX0, 1, 8)},
      {"movz w shift 32", MoveWideImmediate(kMovz, kW, kX0, 1, 16),
       MoveWideImmediate(kMovz, kW, kX0, 1, 32)},
      {"movk x shift 64", MoveWideImmediate(kMovk, kX, kX0, 1, 48),
       MoveWideImmediate(kMovk, kX, kX0, 1, 64)},
      {"move wide opc 01 is unallocated", MoveWideImmediate(kMovn, kX, kX0, 1),
       MoveWideImmediate(static_cast<MoveWideOp>(1), kX, kX0, 1)},
      {"movz: rd is ZR, not SP", MoveWideImmediate(kMovz, kX, kZr, 1),
       MoveWideImmediate(kMovz, kX, kSp, 1)},
      {"ubfm w immr 32", Bitfield(kUbfm, kW, kX0, kX1, 31, 0),
       Bitfield(kUbfm, kW, kX0, kX1, 32, 0)},
      {"sbfm x imms 64", Bitfield(kSbfm, kX, kX0, kX1, 0, 63),
       Bitfield(kSbfm, kX, kX0, kX1, 0, 64)},
      {"bitfield opc 11 is unallocated", Bitfield(kBfm, kX, kX0, kX1, 0, 0),
       Bitfield(static_cast<BitfieldOp>(3), kX, kX0, kX1, 0, 0)},
      {"bitfield: rn is ZR, not SP", Bitfield(kUbfm, kX, kX0, kZr, 0, 0),
       Bitfield(kUbfm, kX, kX0, kSp, 0, 0)},
      {"adr out of range", PcRelAddressing(PcRelOp::kAdr, kX0, 1048575),
       PcRelAddressing(PcRelOp::kAdr, kX0, 1048576)},
      {"adr out of range (negative)", PcRelAddressing(PcRelOp::kAdr, kX0, -1048576),
       PcRelAddressing(PcRelOp::kAdr, kX0, -1048577)},
      {"adrp misaligned", PcRelAddressing(PcRelOp::kAdrp, kX0, 4096),
       PcRelAddressing(PcRelOp::kAdrp, kX0, 4095)},
      {"adrp out of range", PcRelAddressing(PcRelOp::kAdrp, kX0, -(int64_t{1} << 32)),
       PcRelAddressing(PcRelOp::kAdrp, kX0, int64_t{1} << 32)},
      {"adr: rd is ZR, not SP", PcRelAddressing(PcRelOp::kAdr, kZr, 0),
       PcRelAddressing(PcRelOp::kAdr, kSp, 0)},
  });
}

TEST(a64_sentinel, DataProcessingRegister) {
  using enum AddSubOp;
  Check({
      {"add shifted: amount 64", AddSubShiftedRegister(kAdd, kX, kX0, kX1, kX2, Shift::kLsl, 63),
       AddSubShiftedRegister(kAdd, kX, kX0, kX1, kX2, Shift::kLsl, 64)},
      {"add shifted w: amount 32", AddSubShiftedRegister(kAdd, kW, kX0, kX1, kX2, Shift::kAsr, 31),
       AddSubShiftedRegister(kAdd, kW, kX0, kX1, kX2, Shift::kAsr, 32)},
      {"add shifted: ror", AddSubShiftedRegister(kAdd, kX, kX0, kX1, kX2, Shift::kLsr, 1),
       AddSubShiftedRegister(kAdd, kX, kX0, kX1, kX2, Shift::kRor, 1)},
      {"add shifted: SP", AddSubShiftedRegister(kAdd, kX, kX0, kZr, kX2),
       AddSubShiftedRegister(kAdd, kX, kX0, kSp, kX2)},
      {"add extended: amount 5", AddSubExtendedRegister(kAdd, kX, kX0, kX1, kX2, Extend::kUxtw, 4),
       AddSubExtendedRegister(kAdd, kX, kX0, kX1, kX2, Extend::kUxtw, 5)},
      {"add extended: rm is ZR, not SP",
       AddSubExtendedRegister(kAdd, kX, kX0, kX1, kZr, Extend::kSxtw),
       AddSubExtendedRegister(kAdd, kX, kX0, kX1, kSp, Extend::kSxtw)},
      {"add extended: rd is SP, not ZR",
       AddSubExtendedRegister(kAdd, kX, kSp, kX1, kX2, Extend::kSxtw),
       AddSubExtendedRegister(kAdd, kX, kZr, kX1, kX2, Extend::kSxtw)},
      {"subs extended: rd is ZR, not SP",
       AddSubExtendedRegister(kSubs, kX, kZr, kX1, kX2, Extend::kSxtw),
       AddSubExtendedRegister(kSubs, kX, kSp, kX1, kX2, Extend::kSxtw)},
      {"add extended: bad extend", AddSubExtendedRegister(kAdd, kX, kX0, kX1, kX2, Extend::kSxtx),
       AddSubExtendedRegister(kAdd, kX, kX0, kX1, kX2, static_cast<Extend>(8))},
      {"orr shifted: amount 64",
       LogicalShiftedRegister(LogicalRegOp::kOrr, kX, kX0, kX1, kX2, Shift::kRor, 63),
       LogicalShiftedRegister(LogicalRegOp::kOrr, kX, kX0, kX1, kX2, Shift::kRor, 64)},
      {"orr shifted: SP", LogicalShiftedRegister(LogicalRegOp::kOrr, kX, kZr, kX1, kX2),
       LogicalShiftedRegister(LogicalRegOp::kOrr, kX, kSp, kX1, kX2)},
      {"logical: bad op", LogicalShiftedRegister(LogicalRegOp::kBics, kX, kX0, kX1, kX2),
       LogicalShiftedRegister(static_cast<LogicalRegOp>(8), kX, kX0, kX1, kX2)},
      {"rev (64-bit) of a w register", DataProcessing1Source(DataProc1Op::kRev, kX, kX0, kX1),
       DataProcessing1Source(DataProc1Op::kRev, kW, kX0, kX1)},
      {"dp1: bad op", DataProcessing1Source(DataProc1Op::kCls, kX, kX0, kX1),
       DataProcessing1Source(static_cast<DataProc1Op>(6), kX, kX0, kX1)},
      {"dp1: SP", DataProcessing1Source(DataProc1Op::kClz, kX, kX0, kX1),
       DataProcessing1Source(DataProc1Op::kClz, kX, kSp, kX1)},
      {"dp2: opcode 0 is unallocated", DataProcessing2Source(DataProc2Op::kUdiv, kX, kX0, kX1, kX2),
       DataProcessing2Source(static_cast<DataProc2Op>(0), kX, kX0, kX1, kX2)},
      {"dp2: opcode 12", DataProcessing2Source(DataProc2Op::kRorv, kX, kX0, kX1, kX2),
       DataProcessing2Source(static_cast<DataProc2Op>(12), kX, kX0, kX1, kX2)},
      {"dp2: SP", DataProcessing2Source(DataProc2Op::kSdiv, kX, kX0, kX1, kZr),
       DataProcessing2Source(DataProc2Op::kSdiv, kX, kX0, kX1, kSp)},
      {"smaddl is 64-bit only", DataProcessing3Source(DataProc3Op::kSmaddl, kX, kX0, kX1, kX2, kX3),
       DataProcessing3Source(DataProc3Op::kSmaddl, kW, kX0, kX1, kX2, kX3)},
      {"umulh is 64-bit only", DataProcessing3Source(DataProc3Op::kUmulh, kX, kX0, kX1, kX2, kZr),
       DataProcessing3Source(DataProc3Op::kUmulh, kW, kX0, kX1, kX2, kZr)},
      {"smulh needs ra = ZR", DataProcessing3Source(DataProc3Op::kSmulh, kX, kX0, kX1, kX2, kZr),
       DataProcessing3Source(DataProc3Op::kSmulh, kX, kX0, kX1, kX2, kX3)},
      {"dp3: bad op", DataProcessing3Source(DataProc3Op::kMsub, kX, kX0, kX1, kX2, kX3),
       DataProcessing3Source(static_cast<DataProc3Op>(5), kX, kX0, kX1, kX2, kX3)},
      {"dp3: SP", DataProcessing3Source(DataProc3Op::kMadd, kX, kX0, kX1, kX2, kZr),
       DataProcessing3Source(DataProc3Op::kMadd, kX, kX0, kX1, kX2, kSp)},
      {"csel: bad condition", ConditionalSelect(CondSelectOp::kCsel, kX, kX0, kX1, kX2, Cond::kNv),
       ConditionalSelect(CondSelectOp::kCsel, kX, kX0, kX1, kX2, static_cast<Cond>(16))},
      {"csel: SP", ConditionalSelect(CondSelectOp::kCsel, kX, kX0, kX1, kX2, Cond::kEq),
       ConditionalSelect(CondSelectOp::kCsel, kX, kX0, kX1, kSp, Cond::kEq)},
  });
}

TEST(a64_sentinel, LoadsAndStores) {
  using enum LoadStoreOp;
  using enum Size;
  Check({
      {"ldr literal misaligned", LoadRegisterLiteral(LiteralOp::kLdrX, kX0, 4),
       LoadRegisterLiteral(LiteralOp::kLdrX, kX0, 2)},
      {"ldr literal out of range", LoadRegisterLiteral(LiteralOp::kLdrX, kX0, 1048572),
       LoadRegisterLiteral(LiteralOp::kLdrX, kX0, 1048576)},
      {"ldr literal: prfm not offered", LoadRegisterLiteral(LiteralOp::kLdrsw, kX0, 0),
       LoadRegisterLiteral(static_cast<LiteralOp>(3), kX0, 0)},
      {"ldr literal: rt is ZR, not SP", LoadRegisterLiteral(LiteralOp::kLdrW, kZr, 0),
       LoadRegisterLiteral(LiteralOp::kLdrW, kSp, 0)},
      {"ldr x misaligned scaled offset", LoadStoreUnsignedImmediate(kLoad, k64, kX0, kX1, 8),
       LoadStoreUnsignedImmediate(kLoad, k64, kX0, kX1, 4)},
      {"ldr x scaled offset too large", LoadStoreUnsignedImmediate(kLoad, k64, kX0, kX1, 32760),
       LoadStoreUnsignedImmediate(kLoad, k64, kX0, kX1, 32768)},
      {"strb scaled offset too large", LoadStoreUnsignedImmediate(kStore, k8, kX0, kX1, 4095),
       LoadStoreUnsignedImmediate(kStore, k8, kX0, kX1, 4096)},
      {"ldrh negative scaled offset", LoadStoreUnsignedImmediate(kLoad, k16, kX0, kX1, 0),
       LoadStoreUnsignedImmediate(kLoad, k16, kX0, kX1, -2)},
      {"ldr: rn is SP, not ZR", LoadStoreUnsignedImmediate(kLoad, k64, kX0, kSp, 0),
       LoadStoreUnsignedImmediate(kLoad, k64, kX0, kZr, 0)},
      {"ldr: rt is ZR, not SP", LoadStoreUnsignedImmediate(kLoad, k64, kZr, kX1, 0),
       LoadStoreUnsignedImmediate(kLoad, k64, kSp, kX1, 0)},
      {"ldrs* of a doubleword is prfm", LoadStoreUnsignedImmediate(kLoadSigned64, k32, kX0, kX1, 0),
       LoadStoreUnsignedImmediate(kLoadSigned64, k64, kX0, kX1, 0)},
      {"ldrsw into a w register", LoadStoreUnsignedImmediate(kLoadSigned32, k16, kX0, kX1, 0),
       LoadStoreUnsignedImmediate(kLoadSigned32, k32, kX0, kX1, 0)},
      {"ldur offset too small", LoadStoreUnscaledImmediate(kLoad, k64, kX0, kX1, -256),
       LoadStoreUnscaledImmediate(kLoad, k64, kX0, kX1, -257)},
      {"stur offset too large", LoadStoreUnscaledImmediate(kStore, k32, kX0, kX1, 255),
       LoadStoreUnscaledImmediate(kStore, k32, kX0, kX1, 256)},
      {"ldursw into w is unallocated", LoadStoreUnscaledImmediate(kLoadSigned64, k32, kX0, kX1, 0),
       LoadStoreUnscaledImmediate(kLoadSigned32, k32, kX0, kX1, 0)},
      {"ldr pre-index offset too large",
       LoadStoreImmediateIndexed(kLoad, k64, kX0, kX1, 255, Indexing::kPreIndex),
       LoadStoreImmediateIndexed(kLoad, k64, kX0, kX1, 256, Indexing::kPreIndex)},
      {"str post-index offset too small",
       LoadStoreImmediateIndexed(kStore, k64, kX0, kSp, -256, Indexing::kPostIndex),
       LoadStoreImmediateIndexed(kStore, k64, kX0, kSp, -257, Indexing::kPostIndex)},
      {"ldr write-back into its own base",
       LoadStoreImmediateIndexed(kLoad, k64, kX0, kX1, 8, Indexing::kPostIndex),
       LoadStoreImmediateIndexed(kLoad, k64, kX1, kX1, 8, Indexing::kPostIndex)},
      {"indexed load without write-back is another class",
       LoadStoreImmediateIndexed(kLoad, k64, kX0, kX1, 8, Indexing::kPreIndex),
       LoadStoreImmediateIndexed(kLoad, k64, kX0, kX1, 8, Indexing::kOffset)},
      {"ldr register offset: uxtb is not allowed",
       LoadStoreRegisterOffset(kLoad, k64, kX0, kX1, kX2, Extend::kSxtx),
       LoadStoreRegisterOffset(kLoad, k64, kX0, kX1, kX2, Extend::kUxtb)},
      {"ldr register offset: sxth is not allowed",
       LoadStoreRegisterOffset(kLoad, k64, kX0, kX1, kX2, Extend::kSxtw),
       LoadStoreRegisterOffset(kLoad, k64, kX0, kX1, kX2, Extend::kSxth)},
      {"ldr register offset: rm is ZR, not SP", LoadStoreRegisterOffset(kLoad, k64, kX0, kX1, kZr),
       LoadStoreRegisterOffset(kLoad, k64, kX0, kX1, kSp)},
      {"ldp x misaligned offset", LoadStorePair(PairOp::kLoad, kX, kX0, kX1, kX2, 8),
       LoadStorePair(PairOp::kLoad, kX, kX0, kX1, kX2, 4)},
      {"stp x offset too large", LoadStorePair(PairOp::kStore, kX, kX0, kX1, kSp, 504),
       LoadStorePair(PairOp::kStore, kX, kX0, kX1, kSp, 512)},
      {"stp w offset too small", LoadStorePair(PairOp::kStore, kW, kX0, kX1, kSp, -256),
       LoadStorePair(PairOp::kStore, kW, kX0, kX1, kSp, -260)},
      {"ldpsw is a 64-bit destination",
       LoadStorePair(PairOp::kLoadSignedWords, kX, kX0, kX1, kX2, 4),
       LoadStorePair(PairOp::kLoadSignedWords, kW, kX0, kX1, kX2, 4)},
      {"ldp into one register twice", LoadStorePair(PairOp::kLoad, kX, kX0, kX1, kX2, 0),
       LoadStorePair(PairOp::kLoad, kX, kX1, kX1, kX2, 0)},
      {"stp pre-index into its own base",
       LoadStorePair(PairOp::kStore, kX, kX29, kX30, kSp, -16, Indexing::kPreIndex),
       LoadStorePair(PairOp::kStore, kX, kX29, kX30, kX30, -16, Indexing::kPreIndex)},
      {"stp: rn is SP, not ZR", LoadStorePair(PairOp::kStore, kX, kX0, kX1, kSp, 0),
       LoadStorePair(PairOp::kStore, kX, kX0, kX1, kZr, 0)},
      {"stxr status is the data register",
       LoadStoreExclusive(ExclusiveOp::kStxr, k64, kX2, kX0, kX1),
       LoadStoreExclusive(ExclusiveOp::kStxr, k64, kX0, kX0, kX1)},
      {"stlxr status is the base register",
       LoadStoreExclusive(ExclusiveOp::kStlxr, k32, kX2, kX0, kX1),
       LoadStoreExclusive(ExclusiveOp::kStlxr, k32, kX1, kX0, kX1)},
      {"ldxr takes no status register", LoadStoreExclusive(ExclusiveOp::kLdxr, k64, kZr, kX0, kX1),
       LoadStoreExclusive(ExclusiveOp::kLdxr, k64, kX2, kX0, kX1)},
      {"exclusive: bad op", LoadStoreExclusive(ExclusiveOp::kLdar, k64, kZr, kX0, kX1),
       LoadStoreExclusive(static_cast<ExclusiveOp>(4), k64, kZr, kX0, kX1)},
      {"ldar: rn is SP, not ZR", LoadStoreExclusive(ExclusiveOp::kLdar, k64, kZr, kX0, kSp),
       LoadStoreExclusive(ExclusiveOp::kLdar, k64, kZr, kX0, kZr)},
      {"ldadd: bad op",
       AtomicMemoryOperation(AtomicOp::kSwp, k64, MemOrder::kRelaxed, kX0, kX1, kX2),
       AtomicMemoryOperation(static_cast<AtomicOp>(9), k64, MemOrder::kRelaxed, kX0, kX1, kX2)},
      {"ldadd: bad order",
       AtomicMemoryOperation(AtomicOp::kLdadd, k64, MemOrder::kAcquireRelease, kX0, kX1, kX2),
       AtomicMemoryOperation(AtomicOp::kLdadd, k64, static_cast<MemOrder>(4), kX0, kX1, kX2)},
      {"ldadd: rn is SP, not ZR",
       AtomicMemoryOperation(AtomicOp::kLdadd, k32, MemOrder::kRelaxed, kX0, kX1, kSp),
       AtomicMemoryOperation(AtomicOp::kLdadd, k32, MemOrder::kRelaxed, kX0, kX1, kZr)},
      {"ldadd: rs is ZR, not SP",
       AtomicMemoryOperation(AtomicOp::kLdadd, k32, MemOrder::kRelaxed, kZr, kX1, kX2),
       AtomicMemoryOperation(AtomicOp::kLdadd, k32, MemOrder::kRelaxed, kSp, kX1, kX2)},
      {"cas: rt is ZR, not SP", CompareAndSwap(k64, MemOrder::kAcquireRelease, kX0, kZr, kX2),
       CompareAndSwap(k64, MemOrder::kAcquireRelease, kX0, kSp, kX2)},
      {"cas: bad size", CompareAndSwap(k64, MemOrder::kRelaxed, kX0, kX1, kX2),
       CompareAndSwap(static_cast<Size>(4), MemOrder::kRelaxed, kX0, kX1, kX2)},
  });
}

TEST(a64_sentinel, BranchesAndSystem) {
  Check({
      {"b misaligned", UnconditionalBranchImmediate(BranchOp::kB, 4),
       UnconditionalBranchImmediate(BranchOp::kB, 2)},
      {"b out of range", UnconditionalBranchImmediate(BranchOp::kB, 134217724),
       UnconditionalBranchImmediate(BranchOp::kB, 134217728)},
      {"bl out of range (negative)", UnconditionalBranchImmediate(BranchOp::kBl, -134217728),
       UnconditionalBranchImmediate(BranchOp::kBl, -134217732)},
      {"br: rn is ZR, not SP", UnconditionalBranchRegister(BranchRegOp::kBr, kX30),
       UnconditionalBranchRegister(BranchRegOp::kBr, kSp)},
      {"branch register: bad op", UnconditionalBranchRegister(BranchRegOp::kRet, kX30),
       UnconditionalBranchRegister(static_cast<BranchRegOp>(3), kX30)},
      {"b.cond out of range", ConditionalBranchImmediate(Cond::kNe, 1048572),
       ConditionalBranchImmediate(Cond::kNe, 1048576)},
      {"b.cond out of range (negative)", ConditionalBranchImmediate(Cond::kNe, -1048576),
       ConditionalBranchImmediate(Cond::kNe, -1048580)},
      {"b.cond misaligned", ConditionalBranchImmediate(Cond::kEq, 8),
       ConditionalBranchImmediate(Cond::kEq, 6)},
      {"b.cond: bad condition", ConditionalBranchImmediate(Cond::kNv, 8),
       ConditionalBranchImmediate(static_cast<Cond>(16), 8)},
      {"cbz out of range", CompareAndBranchImmediate(CompareBranchOp::kCbz, kX, kX0, -1048576),
       CompareAndBranchImmediate(CompareBranchOp::kCbz, kX, kX0, -1048580)},
      {"cbnz misaligned", CompareAndBranchImmediate(CompareBranchOp::kCbnz, kW, kX0, 4),
       CompareAndBranchImmediate(CompareBranchOp::kCbnz, kW, kX0, 1)},
      {"cbz: rt is ZR, not SP", CompareAndBranchImmediate(CompareBranchOp::kCbz, kX, kZr, 0),
       CompareAndBranchImmediate(CompareBranchOp::kCbz, kX, kSp, 0)},
      {"tbz out of range", TestAndBranchImmediate(TestBranchOp::kTbz, kX0, 3, 32764),
       TestAndBranchImmediate(TestBranchOp::kTbz, kX0, 3, 32768)},
      {"tbnz out of range (negative)", TestAndBranchImmediate(TestBranchOp::kTbnz, kX0, 3, -32768),
       TestAndBranchImmediate(TestBranchOp::kTbnz, kX0, 3, -32772)},
      {"tbz misaligned", TestAndBranchImmediate(TestBranchOp::kTbz, kX0, 3, 8),
       TestAndBranchImmediate(TestBranchOp::kTbz, kX0, 3, 10)},
      {"tbz bit 64", TestAndBranchImmediate(TestBranchOp::kTbz, kX0, 63, 8),
       TestAndBranchImmediate(TestBranchOp::kTbz, kX0, 64, 8)},
      {"svc imm16 out of range", ExceptionGeneration(ExceptionOp::kSvc, 0xffff),
       ExceptionGeneration(ExceptionOp::kSvc, 0x10000)},
      {"exception: bad op", ExceptionGeneration(ExceptionOp::kBrk, 1),
       ExceptionGeneration(static_cast<ExceptionOp>(0), 1)},
      {"udf imm16 out of range", PermanentlyUndefined(0xffff), PermanentlyUndefined(0x10000)},
      {"isb takes only sy", Barrier(BarrierOp::kIsb, BarrierOption::kSy),
       Barrier(BarrierOp::kIsb, BarrierOption::kIsh)},
      {"dmb: option 0 not offered", Barrier(BarrierOp::kDmb, BarrierOption::kOshld),
       Barrier(BarrierOp::kDmb, static_cast<BarrierOption>(0))},
      {"dsb: option 16", Barrier(BarrierOp::kDsb, BarrierOption::kSy),
       Barrier(BarrierOp::kDsb, static_cast<BarrierOption>(16))},
      {"barrier: bad op", Barrier(BarrierOp::kDmb, BarrierOption::kSy),
       Barrier(static_cast<BarrierOp>(7), BarrierOption::kSy)},
      {"hint #128", Hint(static_cast<HintOp>(127)), Hint(static_cast<HintOp>(128))},
      {"mrs: op0 1 is not a register",
       SystemRegisterMove(SystemRegisterDirection::kMrs, {3, 0, 0, 0, 0}, kX0),
       SystemRegisterMove(SystemRegisterDirection::kMrs, {1, 0, 0, 0, 0}, kX0)},
      {"mrs: CRn 16", SystemRegisterMove(SystemRegisterDirection::kMrs, {3, 0, 15, 0, 0}, kX0),
       SystemRegisterMove(SystemRegisterDirection::kMrs, {3, 0, 16, 0, 0}, kX0)},
      {"msr: op2 8", SystemRegisterMove(SystemRegisterDirection::kMsr, {3, 0, 0, 0, 7}, kX0),
       SystemRegisterMove(SystemRegisterDirection::kMsr, {3, 0, 0, 0, 8}, kX0)},
      {"mrs: rt is ZR, not SP", SystemRegisterMove(SystemRegisterDirection::kMrs, kTpidrEl0, kZr),
       SystemRegisterMove(SystemRegisterDirection::kMrs, kTpidrEl0, kSp)},
      {"ic iallu takes no register", SystemInstruction(kIcIallu, kZr),
       SystemInstruction(kIcIallu, kX0)},
      {"dc cvau: rt is ZR, not SP", SystemInstruction(kDcCvau, kX0),
       SystemInstruction(kDcCvau, kSp)},
      {"sys: op1 8", SystemInstruction({7, 7, 5, 1, true}, kX0),
       SystemInstruction({8, 7, 5, 1, true}, kX0)},
  });
}

TEST(a64_sentinel, Aliases) {
  Check({
      {"lsl #64", LslImm(kX, kX0, kX1, 63), LslImm(kX, kX0, kX1, 64)},
      {"lsl w #32", LslImm(kW, kX0, kX1, 31), LslImm(kW, kX0, kX1, 32)},
      {"lsr #64", LsrImm(kX, kX0, kX1, 63), LsrImm(kX, kX0, kX1, 64)},
      {"asr w #32", AsrImm(kW, kX0, kX1, 31), AsrImm(kW, kX0, kX1, 32)},
      {"cset al", Cset(kX, kX0, Cond::kLe), Cset(kX, kX0, Cond::kAl)},
      {"cset nv", Cset(kX, kX0, Cond::kLe), Cset(kX, kX0, Cond::kNv)},
      {"mov with SP (use MovSp)", Mov(kX, kX0, kX1), Mov(kX, kX0, kSp)},
      {"mov sp with ZR (use Mov)", MovSp(kX, kSp, kX1), MovSp(kX, kZr, kX1)},
      {"cmp imm out of range", CmpImm(kX, kX0, 4095), CmpImm(kX, kX0, 4096)},
      {"tst with a non-bitmask", TstImm(kX, kX0, 0xff), TstImm(kX, kX0, 0xf0f)},
  });
}

TEST(a64_sentinel, MoveImmediate) {
  const MoveSequence good = MoveImmediate(kW, kX0, 0xffffffff);
  const MoveSequence bad = MoveImmediate(kW, kX0, 0x100000000);
  EXPECT_NE(good[0], kBreakFault);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], kBreakFault);
  const MoveSequence bad_reg = MoveImmediate(kX, kSp, 0x1234);
  ASSERT_EQ(bad_reg.size(), 1u);
  EXPECT_EQ(bad_reg[0], kBreakFault);
}

// The encoders are usable at compile time.
static_assert(AddSubImmediate(AddSubOp::kAdd, kX, kX0, kX1, 1) == 0x91000420);
static_assert(UnconditionalBranchImmediate(BranchOp::kB, -4) == 0x17ffffff);
static_assert(Ret() == 0xd65f03c0);
static_assert(Brk(0x100) == kBreakFault);
static_assert(EncodeBitmaskImmediate(0x5555555555555555, kX) == 0x03c);
static_assert(MoveImmediate(kX, kX0, 0).size() == 1);
static_assert(Invert(Cond::kEq) == Cond::kNe && Invert(Cond::kLt) == Cond::kGe);

}  // namespace
}  // namespace bpfdiff::a64
