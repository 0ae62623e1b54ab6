// ALU and ALU64 (RFC 9669 section 4.1 and 4.2): every form of the opcode
// table with expected values worked out by hand from the RFC, then the edge
// cases the RFC and the kernel single out, each as a named test.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "isa/opcode_table.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

using isa::Shape;

bool IsAluShape(Shape shape) {
  return shape == Shape::kAluImm || shape == Shape::kAluReg || shape == Shape::kAluUnary ||
         shape == Shape::kEndian || shape == Shape::kMovSx;
}

struct AluCase {
  std::string_view form;  // the opcode table's form name
  uint64_t dst;           // r0 before
  int64_t operand;        // imm (as s32) for imm forms, r1 for register forms
  uint64_t expected;      // r0 after
};

constexpr uint64_t kMinus(uint64_t v) { return ~v + 1; }  // two's complement -v

// Inputs of 32-bit forms carry garbage in their upper halves on purpose: the
// RFC's "(u32)" reads only the low half and zeroes the upper half.
constexpr AluCase kAluCases[] = {
    // --- ALU64 ---
    {"add imm", 0x7fffffffffffffff, 1, 0x8000000000000000},
    {"add imm", 5, -6, 0xffffffffffffffff},  // imm sign-extended to 64 bits
    {"add reg", 0xffffffffffffffff, 2, 1},   // wraps
    {"sub imm", 0, 1, 0xffffffffffffffff},
    {"sub imm", 0x100000000, -1, 0x100000001},
    {"sub reg", 5, 7, 0xfffffffffffffffe},
    {"mul imm", 0x100000000, -2, 0xfffffffe00000000},
    {"mul reg", 0x123456789, 0x1000, 0x123456789000},
    {"mul reg", 0x8000000000000001, 2, 2},
    {"div imm", 100, 7, 14},
    {"div imm", 0xffffffffffffffff, -1, 1},  // -1 is 0xffff_ffff_ffff_ffff unsigned
    {"div imm", 0x7fffffffffffffff, -1, 0},
    {"div reg", 0x8000000000000000, 3, 0x2aaaaaaaaaaaaaaa},
    {"div reg", 0xfffffffffffffff9, 2, 0x7ffffffffffffffc},  // unsigned, not -3
    {"sdiv imm", kMinus(7), 2, kMinus(3)},                   // truncates toward zero
    {"sdiv imm", 7, -2, kMinus(3)},
    {"sdiv reg", kMinus(7), -2, 3},
    {"sdiv reg", 0x8000000000000000, 2, 0xc000000000000000},
    {"or imm", 0xf0, 0x0f, 0xff},
    {"or imm", 1, INT32_MIN, 0xffffffff80000001},
    {"or reg", 0x00ff00ff00ff00ff, static_cast<int64_t>(0xff00ff00ff00ff00), 0xffffffffffffffff},
    {"and imm", 0x123456789abcdef0, -1, 0x123456789abcdef0},
    {"and imm", 0x123456789abcdef0, 0x7fffffff, 0x1abcdef0},
    {"and reg", 0xff00ff00ff00ff00, 0x0ff00ff00ff00ff0, 0x0f000f000f000f00},
    {"lsh imm", 1, 63, 0x8000000000000000},
    {"lsh imm", 1, 8, 0x100},
    {"lsh reg", 0x8000000000000001, 1, 2},
    {"rsh imm", 0x8000000000000000, 63, 1},  // logical: no sign fill
    {"rsh reg", 0xff00, 8, 0xff},
    {"rsh reg", 0xffffffffffffffff, 60, 0xf},
    {"mod imm", 100, 7, 2},
    {"mod imm", 0xffffffffffffffff, -2, 1},  // % 0xffff_ffff_ffff_fffe
    {"mod reg", 0xffffffffffffffff, 10, 5},
    {"smod imm", kMinus(7), 2, kMinus(1)},
    {"smod imm", 7, -2, 1},
    {"smod reg", kMinus(13), 3, kMinus(1)},  // the RFC's example: -13 % 3 == -1
    {"smod reg", 13, -3, 1},
    {"xor imm", 0xff, -1, 0xffffffffffffff00},
    {"xor reg", 0x5555555555555555, static_cast<int64_t>(0xffffffff00000000), 0xaaaaaaaa55555555},
    {"mov imm", 0x1234, -1, 0xffffffffffffffff},
    {"mov imm", 0xffffffffffffffff, 0x7fffffff, 0x7fffffff},
    {"mov reg", 0, 0x1122334455667788, 0x1122334455667788},
    {"arsh imm", 0x8000000000000000, 63, 0xffffffffffffffff},
    {"arsh imm", 0x4000000000000000, 62, 1},
    {"arsh reg", 0xfffffffffffff000, 4, 0xffffffffffffff00},
    {"neg", 1, 0, 0xffffffffffffffff},
    {"neg", 0x8000000000000000, 0, 0x8000000000000000},
    {"neg", 0, 0, 0},
    {"movsx864", 0, 0x1234567890abcd80, 0xffffffffffffff80},
    {"movsx864", 0, static_cast<int64_t>(0xffffffffffffff7f), 0x7f},
    {"movsx1664", 0, 0x8001, 0xffffffffffff8001},
    {"movsx1664", 0, 0xffff7fff, 0x7fff},
    {"movsx3264", 0, 0x0000000180000000, 0xffffffff80000000},
    {"movsx3264", 0, static_cast<int64_t>(0xffffffff7fffffff), 0x7fffffff},
    // --- ALU (32-bit) ---
    {"add32 imm", 0xdeadbeefffffffff, 1, 0},
    {"add32 imm", 0xdeadbeef00000001, -2, 0xffffffff},
    {"add32 reg", 0x100000001, static_cast<int64_t>(0xffffffff00000002), 3},
    {"sub32 imm", 0xaaaa000000000000, 1, 0xffffffff},
    {"sub32 reg", 5, 0x100000006, 0xffffffff},
    {"mul32 imm", 0x100010000, 0x10000, 0},
    {"mul32 imm", 0xff00000003, -1, 0xfffffffd},
    {"mul32 reg", 0xabcd000012345678, 0x100, 0x34567800},
    {"div32 imm", 0xffffffff0000000a, 3, 3},
    {"div32 imm", 0x12345678ffffffff, -1, 1},  // imm as u32: 0xffffffff
    {"div32 imm", 0xfffffffe, -1, 0},
    {"div32 reg", 0x100000064, 0xff00000007, 14},
    {"sdiv32 imm", 0xfffffff9, 2, 0xfffffffd},  // -7 / 2 = -3, zero-extended
    {"sdiv32 imm", 0x1234567800000007, -2, 0xfffffffd},
    {"sdiv32 reg", 7, static_cast<int64_t>(0xfffffffffffffffe), 0xfffffffd},
    {"sdiv32 reg", 0xdead0000fffffff9, 0xfffffffe, 3},  // -7 / -2
    {"or32 imm", 0xffffffff00000000, 1, 1},
    {"or32 reg", 0xffff0000000000f0, 0x0000000f0000000f, 0xff},
    {"and32 imm", 0xffffffffffffffff, -1, 0xffffffff},
    {"and32 reg", 0xffffffff12345678, static_cast<int64_t>(0xffffffff0000ffff), 0x5678},
    {"lsh32 imm", 1, 31, 0x80000000},
    {"lsh32 imm", 0xffffffff80000001, 1, 2},  // bit 31 leaves; nothing reaches bit 32
    {"lsh32 reg", 3, 0x21, 6},                // 33 & 31 = 1
    {"rsh32 imm", 0xffffffff80000000, 31, 1},
    {"rsh32 reg", 0x12345678ffffffff, 4, 0x0fffffff},
    {"mod32 imm", 0xffffffff00000064, 7, 2},
    {"mod32 imm", 0xfffffffe, -1, 0xfffffffe},  // % 0xffffffff
    {"mod32 reg", 0xffffffff0000000a, 0x300000003, 1},
    {"smod32 imm", 0xfffffff9, 2, 0xffffffff},  // -7 % 2 = -1
    {"smod32 imm", 7, -2, 1},
    {"smod32 reg", 0xabcdef00fffffff3, 3, 0xffffffff},  // -13 % 3 = -1
    {"xor32 imm", 0xffffffff0000ffff, -1, 0xffff0000},
    {"xor32 reg", 0x1111111155555555, 0x22222222ffffffff, 0xaaaaaaaa},
    {"mov32 imm", 0x123456789abcdef0, -1, 0xffffffff},
    {"mov32 reg", 0, 0x1122334455667788, 0x55667788},
    {"arsh32 imm", 0x1234567880000000, 4, 0xf8000000},
    {"arsh32 imm", 0xffffffff7fffffff, 30, 1},  // the all-ones upper half does not shift in
    {"arsh32 reg", 0xfffffff0, 2, 0xfffffffc},
    {"neg32", 0xffffffff00000001, 0, 0xffffffff},
    {"neg32", 0x100000000, 0, 0},
    {"movsx832", 0xffffffffffffffff, static_cast<int64_t>(0xffffffffffffff7f), 0x7f},
    {"movsx832", 0, 0x80, 0xffffff80},
    {"movsx1632", 0, 0x12348000, 0xffff8000},
    {"movsx1632", 0, static_cast<int64_t>(0xffffffffffff7fff), 0x7fff},
    // --- Byte swaps (the host is little endian, so le* only truncate) ---
    {"le16", 0x1122334455667788, 0, 0x7788},
    {"le32", 0x1122334455667788, 0, 0x55667788},
    {"le64", 0x1122334455667788, 0, 0x1122334455667788},
    {"be16", 0x1122334455667788, 0, 0x8877},
    {"be32", 0x1122334455667788, 0, 0x88776655},
    {"be64", 0x1122334455667788, 0, 0x8877665544332211},
    {"bswap16", 0x1122334455667788, 0, 0x8877},
    {"bswap32", 0x1122334455667788, 0, 0x88776655},
    {"bswap64", 0x1122334455667788, 0, 0x8877665544332211},
};

const isa::Form* FormNamed(std::string_view name) {
  for (const isa::Form& form : isa::AllForms()) {
    if (form.name == name) return &form;
  }
  return nullptr;
}

// r0 = dst; r1 = operand; r0 = r0 OP (r1 | imm); exit.
std::vector<isa::Insn> AluProgram(const isa::Form& form, uint64_t dst, int64_t operand) {
  std::vector<isa::Insn> insns = Lddw(0, dst);
  for (const isa::Insn& insn : Lddw(1, static_cast<uint64_t>(operand))) insns.push_back(insn);
  isa::Insn op = Make(form.opcode, 0);
  switch (form.discriminant) {
    case isa::Discriminant::kOffset: op.offset = static_cast<int16_t>(form.discriminant_value); break;
    case isa::Discriminant::kImm: op.imm = form.discriminant_value; break;
    default: break;
  }
  if (form.shape == Shape::kAluImm) op.imm = static_cast<int32_t>(operand);
  if (form.shape == Shape::kAluReg || form.shape == Shape::kMovSx) op.src = 1;
  insns.push_back(op);
  insns.push_back(kExit);
  return insns;
}

TEST(oracle_alu, EveryAluFormHasACase) {
  std::map<std::string, int> count;
  for (const AluCase& c : kAluCases) {
    const isa::Form* form = FormNamed(c.form);
    ASSERT_NE(form, nullptr) << "no form named '" << c.form << "'";
    EXPECT_TRUE(IsAluShape(form->shape)) << c.form;
    ++count[std::string(c.form)];
  }
  int forms = 0;
  for (const isa::Form& form : isa::AllForms()) {
    if (!IsAluShape(form.shape)) continue;
    ++forms;
    EXPECT_GT(count[form.name], 0) << "ALU form '" << form.name << "' has no case";
  }
  // 14 binary operations x {imm, reg} x {32, 64}, neg x 2, 5 movsx, 9 swaps.
  EXPECT_EQ(forms, 72);
}

TEST(oracle_alu, EveryAluFormComputesWhatTheRfcSays) {
  for (const AluCase& c : kAluCases) {
    const isa::Form* form = FormNamed(c.form);
    ASSERT_NE(form, nullptr) << c.form;
    const Outcome outcome = RunInsns(AluProgram(*form, c.dst, c.operand));
    EXPECT_TRUE(ExitsWith(outcome, c.expected))
        << c.form << " with dst=0x" << std::hex << c.dst << " operand=0x" << c.operand;
  }
}

// --- Named edge cases (assembly) ---

uint64_t R0Of(std::string_view text) {
  const Outcome outcome = RunAsm(text);
  EXPECT_EQ(outcome.end, EndKind::kExit) << text << "\n" << outcome.Describe();
  return outcome.r0;
}

TEST(oracle_alu, DivisionByZeroGivesZero) {
  // RFC 9669 4.1: "If BPF program execution would result in division by
  // zero, the destination register is instead set to zero."
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nmov %r1, 0\ndiv %r0, %r1\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nmov %r1, 0\nsdiv %r0, %r1\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\ndiv %r0, 0\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nsdiv %r0, 0\nexit"), 0u);
  // 32-bit: the divisor is the low half only, so 0x1_0000_0000 is zero.
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nlddw %r1, 0x100000000\ndiv32 %r0, %r1\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nlddw %r1, 0x100000000\nsdiv32 %r0, %r1\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\ndiv32 %r0, 0\nexit"), 0u);
}

TEST(oracle_alu, ModuloByZero64LeavesDstUnchanged) {
  // "for ALU64 the value of the destination register is unchanged"
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nmov %r1, 0\nmod %r0, %r1\nexit"), 0xdeadbeefcafebabeu);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nmov %r1, 0\nsmod %r0, %r1\nexit"), 0xdeadbeefcafebabeu);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nmod %r0, 0\nexit"), 0xdeadbeefcafebabeu);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nsmod %r0, 0\nexit"), 0xdeadbeefcafebabeu);
}

TEST(oracle_alu, ModuloByZero32ZeroExtendsTheLowHalf) {
  // "whereas for ALU the upper 32 bits of the destination register are zeroed"
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nlddw %r1, 0x700000000\nmod32 %r0, %r1\nexit"), 0xcafebabeu);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nlddw %r1, 0x700000000\nsmod32 %r0, %r1\nexit"), 0xcafebabeu);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nmod32 %r0, 0\nexit"), 0xcafebabeu);
  EXPECT_EQ(R0Of("lddw %r0, 0xdeadbeefcafebabe\nsmod32 %r0, 0\nexit"), 0xcafebabeu);
}

TEST(oracle_alu, SdivIntMinByMinusOneGivesIntMin) {
  // The quotient 2^63 (2^31) does not fit; it wraps to INT_MIN, as the
  // kernel's verifier patch (dst = -dst for a divisor of -1) gives.
  EXPECT_EQ(R0Of("lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit"), 0x8000000000000000u);
  EXPECT_EQ(R0Of("lddw %r0, 0x8000000000000000\nmov %r1, -1\nsdiv %r0, %r1\nexit"), 0x8000000000000000u);
  EXPECT_EQ(R0Of("lddw %r0, 0x5555555580000000\nsdiv32 %r0, -1\nexit"), 0x80000000u);
  EXPECT_EQ(R0Of("lddw %r0, 0x5555555580000000\nlddw %r1, 0x12345678ffffffff\nsdiv32 %r0, %r1\nexit"),
            0x80000000u);
}

TEST(oracle_alu, SmodIntMinByMinusOneGivesZero) {
  EXPECT_EQ(R0Of("lddw %r0, 0x8000000000000000\nsmod %r0, -1\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0x8000000000000000\nmov %r1, -1\nsmod %r0, %r1\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0x5555555580000000\nsmod32 %r0, -1\nexit"), 0u);
  EXPECT_EQ(R0Of("lddw %r0, 0x5555555580000000\nlddw %r1, 0x12345678ffffffff\nsmod32 %r0, %r1\nexit"), 0u);
}

TEST(oracle_alu, SmodSignFollowsTheDividend) {
  // Truncated division: a % n = a - n * trunc(a / n).
  EXPECT_EQ(R0Of("mov %r0, -7\nsmod %r0, 3\nexit"), kMinus(1));
  EXPECT_EQ(R0Of("mov %r0, 7\nsmod %r0, -3\nexit"), 1u);
  EXPECT_EQ(R0Of("mov %r0, -7\nsmod %r0, -3\nexit"), kMinus(1));
  EXPECT_EQ(R0Of("mov %r0, -7\nsmod32 %r0, 3\nexit"), 0xffffffffu);
  EXPECT_EQ(R0Of("mov %r0, 7\nsmod32 %r0, -3\nexit"), 1u);
  EXPECT_EQ(R0Of("mov %r0, -7\nsmod32 %r0, -3\nexit"), 0xffffffffu);
  // Unsigned mod of the same bits is a different number.
  EXPECT_EQ(R0Of("mov32 %r0, -7\nmod32 %r0, 3\nexit"), 0u);  // 0xfffffff9 = 3 * 0x55555553
}

TEST(oracle_alu, ShiftAmountsAreMaskedTo63And31) {
  // 64-bit: the amount is taken modulo 64, also for a negative imm.
  EXPECT_EQ(R0Of("mov %r0, 1\nlsh %r0, 64\nexit"), 1u);
  EXPECT_EQ(R0Of("mov %r0, 1\nlsh %r0, -1\nexit"), 0x8000000000000000u);
  EXPECT_EQ(R0Of("mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1\nexit"), 2u);
  EXPECT_EQ(R0Of("mov %r0, -1\nlddw %r1, 0xffffffffffffff7c\nrsh %r0, %r1\nexit"), 0xfu);  // & 63 = 60
  EXPECT_EQ(R0Of("lddw %r0, 0x8000000000000000\narsh %r0, -2\nexit"), 0xfffffffffffffffeu);  // by 62
  // 32-bit: modulo 32; the upper half of a register amount is ignored too.
  EXPECT_EQ(R0Of("mov %r0, 1\nlsh32 %r0, 32\nexit"), 1u);
  EXPECT_EQ(R0Of("mov %r0, 1\nlsh32 %r0, -1\nexit"), 0x80000000u);
  EXPECT_EQ(R0Of("mov32 %r0, -1\nlddw %r1, 0x100000021\nrsh32 %r0, %r1\nexit"), 0x7fffffffu);
  EXPECT_EQ(R0Of("mov32 %r0, 0x80000000\narsh32 %r0, 63\nexit"), 0xffffffffu);  // by 31
}

TEST(oracle_alu, Alu32ResultsAreZeroExtended) {
  EXPECT_EQ(R0Of("mov %r0, -1\nadd32 %r0, 0\nexit"), 0xffffffffu);
  EXPECT_EQ(R0Of("mov %r0, -1\nmov32 %r0, %r0\nexit"), 0xffffffffu);
  EXPECT_EQ(R0Of("mov %r0, -1\nor32 %r0, 0\nexit"), 0xffffffffu);
  EXPECT_EQ(R0Of("mov %r0, -1\nneg32 %r0\nexit"), 1u);
  EXPECT_EQ(R0Of("mov %r0, -1\nle16 %r0\nexit"), 0xffffu);
  EXPECT_EQ(R0Of("mov %r0, 0\nsub32 %r0, 1\nexit"), 0xffffffffu);  // no borrow into the upper half
  EXPECT_EQ(R0Of("lddw %r0, 0x7fffffffffffffff\nadd32 %r0, 1\nexit"), 0u);  // no carry either
}

TEST(oracle_alu, Alu64ImmIsSignExtended) {
  EXPECT_EQ(R0Of("lddw %r0, 0x123456789abcdef0\nand %r0, -1\nexit"), 0x123456789abcdef0u);
  EXPECT_EQ(R0Of("mov %r0, -1\nexit"), 0xffffffffffffffffu);
  EXPECT_EQ(R0Of("mov32 %r0, -1\nexit"), 0xffffffffu);
  EXPECT_EQ(R0Of("mov %r0, 0\nor %r0, 0x80000000\nexit"), 0xffffffff80000000u);
  EXPECT_EQ(R0Of("mov %r0, 0\nxor %r0, 0x7fffffff\nexit"), 0x7fffffffu);
  EXPECT_EQ(R0Of("mov %r0, 1\nadd %r0, -2\nexit"), 0xffffffffffffffffu);
}

TEST(oracle_alu, Div64ByNegativeImmDividesByTheHugeUnsignedValue) {
  // RFC 9669: for ALU64 DIV/MOD, imm is sign-extended to 64 bits and then
  // read as unsigned: -1 divides by 2^64 - 1, -2 by 2^64 - 2.
  EXPECT_EQ(R0Of("mov %r0, -1\ndiv %r0, -1\nexit"), 1u);
  EXPECT_EQ(R0Of("mov %r0, -2\ndiv %r0, -1\nexit"), 0u);
  EXPECT_EQ(R0Of("mov %r0, -1\ndiv %r0, -2\nexit"), 1u);
  EXPECT_EQ(R0Of("mov %r0, 1000\ndiv %r0, -1000\nexit"), 0u);
  EXPECT_EQ(R0Of("mov %r0, 5\nmod %r0, -1\nexit"), 5u);
  EXPECT_EQ(R0Of("mov %r0, -1\nmod %r0, -2\nexit"), 1u);
  // Whereas the 32-bit form reads imm as a 32-bit unsigned value.
  EXPECT_EQ(R0Of("mov %r0, -1\ndiv32 %r0, -1\nexit"), 1u);
  EXPECT_EQ(R0Of("lddw %r0, 0x1fffffffe\ndiv32 %r0, -1\nexit"), 0u);
}

TEST(oracle_alu, Arsh32OnANegativeLowHalf) {
  // The sign is bit 31 of the low half, whatever the upper half holds.
  EXPECT_EQ(R0Of("lddw %r0, 0x0000000080000000\narsh32 %r0, 31\nexit"), 0xffffffffu);
  EXPECT_EQ(R0Of("lddw %r0, 0x00000000f0000000\narsh32 %r0, 4\nexit"), 0xff000000u);
  EXPECT_EQ(R0Of("lddw %r0, 0x7fffffff80000000\nmov %r1, 8\narsh32 %r0, %r1\nexit"), 0xff800000u);
  // The 64-bit form sees a positive number.
  EXPECT_EQ(R0Of("lddw %r0, 0x0000000080000000\narsh %r0, 31\nexit"), 1u);
}

TEST(oracle_alu, MovsxIsOnlyAboutTheSource) {
  // MOVSX reads only the low 8/16/32 bits of src; dst's old value is gone.
  EXPECT_EQ(R0Of("mov %r0, -1\nmov %r1, 0x17f\nmovsx864 %r0, %r1\nexit"), 0x7fu);
  EXPECT_EQ(R0Of("mov %r0, 0\nmov %r1, 0xff\nmovsx832 %r0, %r1\nexit"), 0xffffffffu);
  EXPECT_EQ(R0Of("mov %r0, 0\nmov %r1, 0xff\nmovsx864 %r0, %r1\nexit"), 0xffffffffffffffffu);
}

}  // namespace
}  // namespace bpfdiff::testing
