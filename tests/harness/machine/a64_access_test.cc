// harness_access: MemoryAccessOf (harness/machine/a64_access.h), the decoder the
// fast machine uses to find the faulting instruction of a block, on words
// from the a64 encoder in every addressing form, with known register
// values. Each expected range is computed by hand from the Arm ARM's
// address calculation; each word is also disassembled by LLVM, so that the
// test states which instruction it is about (and a wrong encoder word
// cannot make a wrong expectation pass).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/machine/a64_access.h"
#include "jit/a64/aliases.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "jit/a64/encoder.h"

namespace bpfdiff {
namespace {

using a64::AtomicOp;
using a64::ExclusiveOp;
using a64::Extend;
using a64::Indexing;
using a64::LoadStoreOp;
using a64::MemOrder;
using a64::PairOp;
using a64::Reg;
using a64::Size;
using a64::Width;

constexpr uint64_t kPc = 0x1000'2000;
constexpr uint64_t kSp = 0x0400'8000;
// x<n> = 0x1000_0000 + n * 0x1000, except:
constexpr uint64_t kX2 = 3;                       // an index
constexpr uint64_t kX4 = static_cast<uint64_t>(-2);  // a negative index
constexpr uint64_t kX5 = 0xdead'beef'0000'0005;   // upper garbage for the W extends
constexpr uint64_t kX7 = 0x0000'0000'8000'0000;   // a W register that is negative as sxtw
constexpr uint64_t kX8 = 0xffff'ffff'ffff'fff8;   // a base near the top of the address space

class FakeRegisters final : public RegisterReader {
 public:
  uint64_t X(int reg) const override {
    EXPECT_GE(reg, 0);
    EXPECT_LE(reg, 30) << "register 31 is SP or ZR, never read as X";
    switch (reg) {
      case 2: return kX2;
      case 4: return kX4;
      case 5: return kX5;
      case 7: return kX7;
      case 8: return kX8;
      default: return 0x1000'0000 + static_cast<uint64_t>(reg) * 0x1000;
    }
  }
  uint64_t Sp() const override { return kSp; }
};

constexpr uint64_t X(int n) { return 0x1000'0000 + static_cast<uint64_t>(n) * 0x1000; }

struct AccessCase {
  std::string text;  // what LLVM prints for the word
  uint32_t word;
  std::optional<AccessRange> expected;
};

AccessCase Case(std::string text, uint32_t word, uint64_t begin, uint64_t bytes) {
  return {std::move(text), word, AccessRange{begin, begin + bytes}};
}
AccessCase NoAccess(std::string text, uint32_t word) { return {std::move(text), word, std::nullopt}; }

void Check(const std::vector<AccessCase>& cases) {
  auto disassembler = A64Disassembler::Create();
  ASSERT_TRUE(disassembler.ok()) << disassembler.message();
  const FakeRegisters registers;
  for (const AccessCase& c : cases) {
    SCOPED_TRACE(fmt::format("{} (0x{:08x})", c.text, c.word));
    ASSERT_NE(c.word, a64::kBreakFault) << "the encoder refused the operands";
    EXPECT_EQ(disassembler->Disassemble(c.word, kPc), c.text);
    const auto range = MemoryAccessOf(c.word, kPc, registers);
    if (!c.expected) {
      EXPECT_FALSE(range.has_value()) << fmt::format("[0x{:x}, 0x{:x})", range->begin, range->end);
      continue;
    }
    ASSERT_TRUE(range.has_value()) << "not recognised as a memory access";
    EXPECT_EQ(range->begin, c.expected->begin) << fmt::format("0x{:x}, expected 0x{:x}", range->begin, c.expected->begin);
    EXPECT_EQ(range->end - range->begin, c.expected->end - c.expected->begin) << "bytes";
  }
}

const Reg x0 = Reg::kX0, x1 = Reg::kX1, x2 = Reg::kX2, x3 = Reg::kX3, x4 = Reg::kX4, x5 = Reg::kX5, x6 = Reg::kX6,
          x7 = Reg::kX7, x8 = Reg::kX8, sp = Reg::kSp, zr = Reg::kZr;

uint32_t Unsigned(LoadStoreOp op, Size size, Reg rt, Reg rn, int64_t offset) {
  return a64::LoadStoreUnsignedImmediate(op, size, rt, rn, offset);
}

TEST(harness_access, UnsignedOffset) {
  Check({
      Case("ldrb w0, [x1, #4095]", Unsigned(LoadStoreOp::kLoad, Size::k8, x0, x1, 4095), X(1) + 4095, 1),
      Case("ldrh w0, [x1, #8190]", Unsigned(LoadStoreOp::kLoad, Size::k16, x0, x1, 8190), X(1) + 8190, 2),
      Case("ldr w0, [x1, #16380]", Unsigned(LoadStoreOp::kLoad, Size::k32, x0, x1, 16380), X(1) + 16380, 4),
      Case("ldr x0, [sp, #32760]", Unsigned(LoadStoreOp::kLoad, Size::k64, x0, sp, 32760), kSp + 32760, 8),
      Case("ldr x3, [x6]", Unsigned(LoadStoreOp::kLoad, Size::k64, x3, x6, 0), X(6), 8),
      Case("strb w0, [x1, #1]", Unsigned(LoadStoreOp::kStore, Size::k8, x0, x1, 1), X(1) + 1, 1),
      Case("strh wzr, [sp, #2]", Unsigned(LoadStoreOp::kStore, Size::k16, zr, sp, 2), kSp + 2, 2),
      Case("str w0, [x1, #4]", Unsigned(LoadStoreOp::kStore, Size::k32, x0, x1, 4), X(1) + 4, 4),
      Case("str x0, [x1, #512]", Unsigned(LoadStoreOp::kStore, Size::k64, x0, x1, 512), X(1) + 512, 8),
      Case("ldrsb x0, [x1, #7]", Unsigned(LoadStoreOp::kLoadSigned64, Size::k8, x0, x1, 7), X(1) + 7, 1),
      Case("ldrsh x0, [x1, #6]", Unsigned(LoadStoreOp::kLoadSigned64, Size::k16, x0, x1, 6), X(1) + 6, 2),
      Case("ldrsw x0, [x1, #8]", Unsigned(LoadStoreOp::kLoadSigned64, Size::k32, x0, x1, 8), X(1) + 8, 4),
      Case("ldrsb w0, [x1, #3]", Unsigned(LoadStoreOp::kLoadSigned32, Size::k8, x0, x1, 3), X(1) + 3, 1),
      Case("ldrsh w0, [x1, #2]", Unsigned(LoadStoreOp::kLoadSigned32, Size::k16, x0, x1, 2), X(1) + 2, 2),
  });
}

TEST(harness_access, UnscaledOffset) {
  Check({
      Case("ldur x0, [x1, #-256]", a64::LoadStoreUnscaledImmediate(LoadStoreOp::kLoad, Size::k64, x0, x1, -256),
           X(1) - 256, 8),
      Case("sturb w0, [sp, #255]", a64::LoadStoreUnscaledImmediate(LoadStoreOp::kStore, Size::k8, x0, sp, 255),
           kSp + 255, 1),
      Case("ldursw x0, [x1, #-4]", a64::LoadStoreUnscaledImmediate(LoadStoreOp::kLoadSigned64, Size::k32, x0, x1, -4),
           X(1) - 4, 4),
      Case("ldurh w0, [x1, #1]", a64::LoadStoreUnscaledImmediate(LoadStoreOp::kLoad, Size::k16, x0, x1, 1), X(1) + 1, 2),
  });
}

TEST(harness_access, PreAndPostIndexed) {
  auto indexed = [](LoadStoreOp op, Size size, Reg rt, Reg rn, int64_t offset, Indexing indexing) {
    return a64::LoadStoreImmediateIndexed(op, size, rt, rn, offset, indexing);
  };
  Check({
      // Pre-index: the access is at base + offset (then written back).
      Case("ldr x0, [x1, #-16]!", indexed(LoadStoreOp::kLoad, Size::k64, x0, x1, -16, Indexing::kPreIndex), X(1) - 16, 8),
      Case("ldrh w0, [sp, #2]!", indexed(LoadStoreOp::kLoad, Size::k16, x0, sp, 2, Indexing::kPreIndex), kSp + 2, 2),
      Case("strb w0, [x1, #-256]!", indexed(LoadStoreOp::kStore, Size::k8, x0, x1, -256, Indexing::kPreIndex),
           X(1) - 256, 1),
      // Post-index: the access is at the base.
      Case("str w0, [x1], #255", indexed(LoadStoreOp::kStore, Size::k32, x0, x1, 255, Indexing::kPostIndex), X(1), 4),
      Case("ldrsw x0, [x1], #-8", indexed(LoadStoreOp::kLoadSigned64, Size::k32, x0, x1, -8, Indexing::kPostIndex),
           X(1), 4),
  });
}

TEST(harness_access, RegisterOffset) {
  auto reg = [](LoadStoreOp op, Size size, Reg rt, Reg rn, Reg rm, Extend extend, bool scaled) {
    return a64::LoadStoreRegisterOffset(op, size, rt, rn, rm, extend, scaled);
  };
  Check({
      Case("ldr x0, [x1, x2]", reg(LoadStoreOp::kLoad, Size::k64, x0, x1, x2, Extend::kUxtx, false), X(1) + 3, 8),
      Case("ldr x0, [x1, x2, lsl #3]", reg(LoadStoreOp::kLoad, Size::k64, x0, x1, x2, Extend::kUxtx, true), X(1) + 24, 8),
      Case("ldrh w0, [x1, x2, lsl #1]", reg(LoadStoreOp::kLoad, Size::k16, x0, x1, x2, Extend::kUxtx, true), X(1) + 6, 2),
      Case("ldrb w0, [x1, x2, lsl #0]", reg(LoadStoreOp::kLoad, Size::k8, x0, x1, x2, Extend::kUxtx, true), X(1) + 3, 1),
      Case("ldr w0, [x1, w5, uxtw]", reg(LoadStoreOp::kLoad, Size::k32, x0, x1, x5, Extend::kUxtw, false), X(1) + 5, 4),
      Case("ldr w0, [x1, w5, uxtw #2]", reg(LoadStoreOp::kLoad, Size::k32, x0, x1, x5, Extend::kUxtw, true), X(1) + 20, 4),
      Case("str x0, [x1, w4, sxtw #3]", reg(LoadStoreOp::kStore, Size::k64, x0, x1, x4, Extend::kSxtw, true), X(1) - 16, 8),
      Case("ldrsw x0, [x1, w7, sxtw]", reg(LoadStoreOp::kLoadSigned64, Size::k32, x0, x1, x7, Extend::kSxtw, false),
           X(1) - 0x8000'0000, 4),
      Case("ldr x0, [x1, x4, sxtx]", reg(LoadStoreOp::kLoad, Size::k64, x0, x1, x4, Extend::kSxtx, false), X(1) - 2, 8),
      Case("strh w0, [x1, x4, sxtx #1]", reg(LoadStoreOp::kStore, Size::k16, x0, x1, x4, Extend::kSxtx, true), X(1) - 4, 2),
      Case("ldr x0, [sp, xzr]", reg(LoadStoreOp::kLoad, Size::k64, x0, sp, zr, Extend::kUxtx, false), kSp, 8),
      Case("ldrsb x3, [x6, x2]", reg(LoadStoreOp::kLoadSigned64, Size::k8, x3, x6, x2, Extend::kUxtx, false), X(6) + 3, 1),
  });
}

TEST(harness_access, Pairs) {
  auto pair = [](PairOp op, Width width, Reg rt, Reg rt2, Reg rn, int64_t offset, Indexing indexing) {
    return a64::LoadStorePair(op, width, rt, rt2, rn, offset, indexing);
  };
  Check({
      Case("stp x29, x30, [sp, #-16]!", pair(PairOp::kStore, Width::kX, a64::kFp, a64::kLr, sp, -16, Indexing::kPreIndex),
           kSp - 16, 16),
      Case("ldp x29, x30, [sp], #16", pair(PairOp::kLoad, Width::kX, a64::kFp, a64::kLr, sp, 16, Indexing::kPostIndex),
           kSp, 16),
      Case("ldp w0, w1, [x6, #-256]", pair(PairOp::kLoad, Width::kW, x0, x1, x6, -256, Indexing::kOffset), X(6) - 256, 8),
      Case("stp w0, w1, [x6, #252]!", pair(PairOp::kStore, Width::kW, x0, x1, x6, 252, Indexing::kPreIndex), X(6) + 252, 8),
      Case("stp x0, x1, [x6, #504]", pair(PairOp::kStore, Width::kX, x0, x1, x6, 504, Indexing::kOffset), X(6) + 504, 16),
      Case("ldp x0, x1, [x6, #-512]", pair(PairOp::kLoad, Width::kX, x0, x1, x6, -512, Indexing::kOffset), X(6) - 512, 16),
      Case("ldpsw x0, x1, [x6, #252]", pair(PairOp::kLoadSignedWords, Width::kX, x0, x1, x6, 252, Indexing::kOffset),
           X(6) + 252, 8),
      Case("ldpsw x0, x1, [x6], #-8", pair(PairOp::kLoadSignedWords, Width::kX, x0, x1, x6, -8, Indexing::kPostIndex),
           X(6), 8),
  });
}

TEST(harness_access, ExclusiveAndOrdered) {
  auto excl = [](ExclusiveOp op, Size size, Reg rs, Reg rt, Reg rn) { return a64::LoadStoreExclusive(op, size, rs, rt, rn); };
  Check({
      Case("ldxr x0, [x6]", a64::Ldxr(Size::k64, x0, x6), X(6), 8),
      Case("ldxrb w0, [x6]", a64::Ldxr(Size::k8, x0, x6), X(6), 1),
      Case("ldxrh w0, [x6]", a64::Ldxr(Size::k16, x0, x6), X(6), 2),
      Case("ldaxr w0, [sp]", a64::Ldaxr(Size::k32, x0, sp), kSp, 4),
      Case("stxr w3, x0, [x6]", a64::Stxr(Size::k64, x3, x0, x6), X(6), 8),
      Case("stlxr w3, w0, [x6]", a64::Stlxr(Size::k32, x3, x0, x6), X(6), 4),
      Case("stlxrb w3, w0, [x6]", excl(ExclusiveOp::kStlxr, Size::k8, x3, x0, x6), X(6), 1),
      Case("ldar x0, [x6]", a64::Ldar(Size::k64, x0, x6), X(6), 8),
      Case("ldarh w0, [x6]", a64::Ldar(Size::k16, x0, x6), X(6), 2),
      Case("stlr w0, [x6]", a64::Stlr(Size::k32, x0, x6), X(6), 4),
      Case("stlrb w0, [sp]", a64::Stlr(Size::k8, x0, sp), kSp, 1),
  });
}

TEST(harness_access, CompareAndSwap) {
  Check({
      Case("cas x0, x1, [x6]", a64::CompareAndSwap(Size::k64, MemOrder::kRelaxed, x0, x1, x6), X(6), 8),
      Case("casal w0, w1, [x6]", a64::CompareAndSwap(Size::k32, MemOrder::kAcquireRelease, x0, x1, x6), X(6), 4),
      Case("casah w0, w1, [sp]", a64::CompareAndSwap(Size::k16, MemOrder::kAcquire, x0, x1, sp), kSp, 2),
      Case("caslb w0, w1, [x6]", a64::CompareAndSwap(Size::k8, MemOrder::kRelease, x0, x1, x6), X(6), 1),
  });
}

TEST(harness_access, LseAtomics) {
  auto amo = [](AtomicOp op, Size size, MemOrder order, Reg rs, Reg rt, Reg rn) {
    return a64::AtomicMemoryOperation(op, size, order, rs, rt, rn);
  };
  Check({
      Case("ldadd x2, x0, [x6]", amo(AtomicOp::kLdadd, Size::k64, MemOrder::kRelaxed, x2, x0, x6), X(6), 8),
      Case("ldaddalb w2, w0, [x6]", amo(AtomicOp::kLdadd, Size::k8, MemOrder::kAcquireRelease, x2, x0, x6), X(6), 1),
      Case("ldclrh w2, w0, [sp]", amo(AtomicOp::kLdclr, Size::k16, MemOrder::kRelaxed, x2, x0, sp), kSp, 2),
      Case("ldeoral w2, w0, [x6]", amo(AtomicOp::kLdeor, Size::k32, MemOrder::kAcquireRelease, x2, x0, x6), X(6), 4),
      Case("ldsetal x2, x0, [x6]", amo(AtomicOp::kLdset, Size::k64, MemOrder::kAcquireRelease, x2, x0, x6), X(6), 8),
      Case("swpal x2, x0, [x6]", amo(AtomicOp::kSwp, Size::k64, MemOrder::kAcquireRelease, x2, x0, x6), X(6), 8),
      Case("swpb w2, w0, [x6]", amo(AtomicOp::kSwp, Size::k8, MemOrder::kRelaxed, x2, x0, x6), X(6), 1),
      Case("ldumax x2, x0, [x6]", amo(AtomicOp::kLdumax, Size::k64, MemOrder::kRelaxed, x2, x0, x6), X(6), 8),
      Case("stadd x2, [x6]", a64::StAtomic(AtomicOp::kLdadd, Size::k64, MemOrder::kRelaxed, x2, x6), X(6), 8),
      Case("stclr w2, [x6]", a64::StAtomic(AtomicOp::kLdclr, Size::k32, MemOrder::kRelaxed, x2, x6), X(6), 4),
      Case("steorh w2, [sp]", a64::StAtomic(AtomicOp::kLdeor, Size::k16, MemOrder::kRelaxed, x2, sp), kSp, 2),
  });
}

TEST(harness_access, LoadLiteral) {
  Check({
      Case("ldr w0, #-8", a64::LoadRegisterLiteral(a64::LiteralOp::kLdrW, x0, -8), kPc - 8, 4),
      Case("ldr x0, #1048572", a64::LoadRegisterLiteral(a64::LiteralOp::kLdrX, x0, 1048572), kPc + 1048572, 8),
      Case("ldr x3, #-1048576", a64::LoadRegisterLiteral(a64::LiteralOp::kLdrX, x3, -1048576), kPc - 1048576, 8),
  });
}

// LDRSW (literal) reads a word: opc 10 is not a doubleword.
TEST(harness_access, LoadLiteralSignedWord) {
  Check({
      Case("ldrsw x0, #16", a64::LoadRegisterLiteral(a64::LiteralOp::kLdrsw, x0, 16), kPc + 16, 4),
  });
}

// Pair forms the encoder does not offer, as words (LLVM confirms them).
// LDXP/STXP move two registers: 2 x 4 or 2 x 8 bytes.
TEST(harness_access, ExclusivePairs) {
  Check({
      Case("ldxp x0, x1, [x6]", 0xc87f04c0, X(6), 16),
      Case("ldaxp w0, w1, [x6]", 0x887f84c0, X(6), 8),
      Case("stxp w3, x0, x1, [x6]", 0xc82304c0, X(6), 16),
      Case("stlxp w3, w0, w1, [sp]", 0x882387e0, kSp, 8),
  });
}

// CASP compares and swaps a pair (2 x 4 bytes, or 2 x 8 with sz = 1); its
// size field is 0:sz, not log2 of the element size.
TEST(harness_access, CompareAndSwapPair) {
  Check({
      Case("casp x0, x1, x2, x3, [x6]", 0x48207cc2, X(6), 16),
      Case("caspal w0, w1, w2, w3, [x6]", 0x0860fcc2, X(6), 8),
  });
}

// How each class accesses its range: what a stepped machine checks the
// permissions for (a read-modify-write as both), and which accesses must
// be naturally aligned.
TEST(harness_access, HowEachClassAccesses) {
  struct Way {
    std::string text;
    uint32_t word;
    bool reads, writes, atomic;
  };
  const Way ways[] = {
      {"ldr x0, [x6, #8]", Unsigned(LoadStoreOp::kLoad, Size::k64, x0, x6, 8), true, false, false},
      {"ldrsb x0, [x6]", Unsigned(LoadStoreOp::kLoadSigned64, Size::k8, x0, x6, 0), true, false, false},
      {"str w0, [x6]", Unsigned(LoadStoreOp::kStore, Size::k32, x0, x6, 0), false, true, false},
      {"stur x0, [x6, #-8]", a64::LoadStoreUnscaledImmediate(LoadStoreOp::kStore, Size::k64, x0, x6, -8), false, true,
       false},
      {"ldr x0, [x6, x2]", a64::LoadStoreRegisterOffset(LoadStoreOp::kLoad, Size::k64, x0, x6, x2, Extend::kUxtx, false),
       true, false, false},
      {"strb w0, [x6, x2]",
       a64::LoadStoreRegisterOffset(LoadStoreOp::kStore, Size::k8, x0, x6, x2, Extend::kUxtx, false), false, true,
       false},
      {"stp x0, x1, [sp, #-16]!", a64::LoadStorePair(PairOp::kStore, Width::kX, x0, x1, sp, -16, Indexing::kPreIndex),
       false, true, false},
      {"ldp x0, x1, [sp], #16", a64::LoadStorePair(PairOp::kLoad, Width::kX, x0, x1, sp, 16, Indexing::kPostIndex),
       true, false, false},
      {"ldxr x0, [x6]", a64::Ldxr(Size::k64, x0, x6), true, false, true},
      {"stlxr w3, w0, [x6]", a64::Stlxr(Size::k32, x3, x0, x6), false, true, true},
      {"ldar x0, [x6]", a64::Ldar(Size::k64, x0, x6), true, false, true},
      {"stlr w0, [x6]", a64::Stlr(Size::k32, x0, x6), false, true, true},
      {"casal w0, w1, [x6]", a64::CompareAndSwap(Size::k32, MemOrder::kAcquireRelease, x0, x1, x6), true, true, true},
      {"caspal w0, w1, w2, w3, [x6]", 0x0860fcc2, true, true, true},
      {"ldaddal x2, x0, [x6]", a64::AtomicMemoryOperation(AtomicOp::kLdadd, Size::k64, MemOrder::kAcquireRelease, x2, x0, x6),
       true, true, true},
      {"stadd x2, [x6]", a64::StAtomic(AtomicOp::kLdadd, Size::k64, MemOrder::kRelaxed, x2, x6), true, true, true},
      {"ldr x0, #16", a64::LoadRegisterLiteral(a64::LiteralOp::kLdrX, x0, 16), true, false, false},
  };
  auto disassembler = A64Disassembler::Create();
  ASSERT_TRUE(disassembler.ok()) << disassembler.message();
  const FakeRegisters registers;
  for (const Way& w : ways) {
    SCOPED_TRACE(w.text);
    EXPECT_EQ(disassembler->Disassemble(w.word, kPc), w.text);
    const auto range = MemoryAccessOf(w.word, kPc, registers);
    ASSERT_TRUE(range.has_value());
    EXPECT_EQ(range->reads, w.reads);
    EXPECT_EQ(range->writes, w.writes);
    EXPECT_EQ(range->atomic, w.atomic);
  }
}

TEST(harness_access, NotMemoryAccesses) {
  Check({
      NoAccess("add x0, x1, #1", a64::AddSubImmediate(a64::AddSubOp::kAdd, Width::kX, x0, x1, 1)),
      NoAccess("mov x0, x1", a64::Mov(Width::kX, x0, x1)),
      NoAccess("nop", a64::Nop()),
      NoAccess("ret", a64::Ret()),
      NoAccess("b #-4", a64::B(-4)),
      NoAccess("brk #0x1", a64::Brk(1)),
      NoAccess("mov x0, #65536", a64::MoveWideImmediate(a64::MoveWideOp::kMovz, Width::kX, x0, 1, 16)),
      NoAccess("dmb ish", a64::Dmb(a64::BarrierOption::kIsh)),
      NoAccess("mrs x0, TPIDR_EL1", a64::Mrs(x0, a64::kTpidrEl1)),
      NoAccess("cbnz w12, #-12", a64::CompareAndBranchImmediate(a64::CompareBranchOp::kCbnz, Width::kW, Reg::kX12, -12)),
      // SIMD&FP loads and stores: not general registers.
      NoAccess("ldr q0, [x1]", 0x3dc00020),
      NoAccess("str d0, [sp, #8]", 0xfd0007e0),
      NoAccess("ldp q0, q1, [x1]", 0xad400420),
      NoAccess("ldr d0, #8", 0x5c000040),
  });
}

// PRFM is a hint, not a load: it never faults (unsigned-offset and literal
// forms).
TEST(harness_access, PrefetchIsNotAnAccess) {
  Check({
      NoAccess("prfm pldl1keep, [x1]", 0xf9800020),
      NoAccess("prfm pldl1keep, #8", 0xd8000040),
  });
}

// A range may wrap around the top of the address space; Contains() is
// modular, so the fast machine still matches the faulting address.
TEST(harness_access, RangeWrappingAroundTheTop) {
  const FakeRegisters registers;
  const auto range = MemoryAccessOf(a64::LoadStorePair(PairOp::kLoad, Width::kX, x0, x1, x8, 0), kPc, registers);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->begin, kX8);
  EXPECT_TRUE(range->Contains(kX8));
  EXPECT_TRUE(range->Contains(0xffff'ffff'ffff'ffff));
  EXPECT_TRUE(range->Contains(0));
  EXPECT_TRUE(range->Contains(7));
  EXPECT_FALSE(range->Contains(8));
  EXPECT_FALSE(range->Contains(kX8 - 1));
}

}  // namespace
}  // namespace bpfdiff
