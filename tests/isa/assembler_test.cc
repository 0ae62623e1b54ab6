// The assembler: every Shape, labels, distances, aliases, range limits, and
// errors that name line and column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/insn.h"
#include "isa/opcode_table.h"
#include "isa/syntax.h"
#include "support/files.h"
#include "tests/isa/make_insn.h"

namespace bpfdiff::isa {
namespace {

using ::testing::HasSubstr;

using isa_testing::Make;

// Assembles text expected to be valid.
std::vector<Insn> Asm(std::string_view text) {
  auto result = Assemble(text);
  EXPECT_TRUE(result.ok()) << text << "\n-> " << result.message();
  return result.ok() ? *result : std::vector<Insn>{};
}

// The error of text expected to be invalid.
std::string AsmError(std::string_view text) {
  auto result = Assemble(text);
  EXPECT_FALSE(result.ok()) << text << " assembled";
  return result.ok() ? std::string() : result.message();
}

Insn One(std::string_view text) {
  std::vector<Insn> insns = Asm(text);
  EXPECT_EQ(insns.size(), 1u) << text;
  return insns.empty() ? Insn{} : insns[0];
}

const Insn kExit = Make(kOpExit);

// One line per Shape, with the instruction it must give.
TEST(isaAssembler, AssemblesEveryShape) {
  struct Case {
    std::string_view text;
    std::vector<Insn> insns;
  };
  const Case cases[] = {
      // kAluImm, kAluReg, kAluUnary
      {"add %r0, 5", {Make(0x07, 0, 0, 0, 5)}},
      {"add32 %r3, -7", {Make(0x04, 3, 0, 0, -7)}},
      {"add32 %r0, %r1", {Make(0x0c, 0, 1)}},
      {"sdiv %r2, 3", {Make(0x37, 2, 0, 1, 3)}},
      {"smod32 %r2, %r4", {Make(0x9c, 2, 4, 1)}},
      {"neg %r9", {Make(0x87, 9)}},
      {"neg32 %r9", {Make(0x84, 9)}},
      // kEndian
      {"le16 %r1", {Make(0xd4, 1, 0, 0, 16)}},
      {"be64 %r1", {Make(0xdc, 1, 0, 0, 64)}},
      {"bswap32 %r1", {Make(0xd7, 1, 0, 0, 32)}},
      // kMovSx
      {"movsx832 %r0, %r1", {Make(0xbc, 0, 1, 8)}},
      {"movsx3264 %r0, %r1", {Make(0xbf, 0, 1, 32)}},
      // kJa, kJa32, kJumpImm, kJumpReg
      {"ja +3", {Make(0x05, 0, 0, 3)}},
      {"ja32 -2", {Make(0x06, 0, 0, 0, -2)}},
      {"jeq %r1, 5, +1", {Make(0x15, 1, 0, 1, 5)}},
      {"jsle32 %r1, %r2, -1", {Make(0xde, 1, 2, -1)}},
      // kCallHelper, kCallLocal, kCallReg, kTailCall, kExit
      {"call 5", {Make(0x85, 0, 0, 0, 5)}},
      {"call local +4", {Make(0x85, 0, 1, 0, 4)}},
      {"call %r2", {Make(0x8d, 2)}},
      {"tail_call", {Make(0xf5)}},
      {"exit", {kExit}},
      // kLddw, kLddwMapFd, kLddwMapValue
      {"lddw %r0, 0x1122334455667788", {Make(0x18, 0, 0, 0, 0x55667788), Make(0, 0, 0, 0, 0x11223344)}},
      {"lddw %r0, -2", {Make(0x18, 0, 0, 0, -2), Make(0, 0, 0, 0, -1)}},
      {"lddw %r1, map:3", {Make(0x18, 1, 1, 0, 3), Make(0)}},
      {"lddw %r1, map_value:3+16", {Make(0x18, 1, 2, 0, 3), Make(0, 0, 0, 0, 16)}},
      {"lddw %r1, map_value:3", {Make(0x18, 1, 2, 0, 3), Make(0)}},
      // kLddwFunc
      {"lddw_func %r2, +3", {Make(0x18, 2, 4, 0, 3), Make(0)}},
      // kLdAbs, kLdInd
      {"ldabsw 0x10", {Make(0x20, 0, 0, 0, 16)}},
      {"ldindb %r1, 0x10", {Make(0x50, 0, 1, 0, 16)}},
      // kLoad
      {"ldxw %r0, [%r1+4]", {Make(0x61, 0, 1, 4)}},
      {"ldxdw %r0, [%r10-8]", {Make(0x79, 0, 10, -8)}},
      {"ldxb %r0, [%r1]", {Make(0x71, 0, 1)}},
      {"ldxh %r0, [%r1+0x10]", {Make(0x69, 0, 1, 16)}},
      {"ldxsh %r0, [%r1-0x10]", {Make(0x89, 0, 1, -16)}},
      {"probe ldxw %r0, [%r1+4]", {Make(0x21, 0, 1, 4)}},
      {"probe ldxsb %r0, [%r1+4]", {Make(0x51, 0, 1, 4)}},
      // kStoreImm, kStoreReg
      {"stw [%r1+4], 5", {Make(0x62, 1, 0, 4, 5)}},
      {"stxdw [%r10-8], %r1", {Make(0x7b, 10, 1, -8)}},
      // kAtomic
      {"lock add [%r10-8], %r1", {Make(0xdb, 10, 1, -8, 0x00)}},
      {"lock fetch add32 [%r1+4], %r2", {Make(0xc3, 1, 2, 4, 0x01)}},
      {"lock xchg [%r1], %r2", {Make(0xdb, 1, 2, 0, 0xe1)}},
      {"lock cmpxchg32 [%r1], %r2", {Make(0xc3, 1, 2, 0, 0xf1)}},
      {"lock fetch xor [%r1], %r2", {Make(0xdb, 1, 2, 0, 0xa1)}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Asm(c.text), c.insns) << c.text;
  }
}

// Every mnemonic of the table is read and gives a form with that mnemonic.
TEST(isaAssembler, ReadsEveryMnemonicOfTheTable) {
  for (const Form& form : AllForms()) {
    std::string text = form.mnemonic;
    bool first = true;
    for (Operand operand : OperandsOf(form.shape)) {
      text += first ? " " : ", ";
      first = false;
      switch (operand) {
        case Operand::kDstReg: text += "%r1"; break;
        case Operand::kSrcReg: text += "%r2"; break;
        case Operand::kImm: text += "7"; break;
        case Operand::kImm64: text += "0x100000000"; break;
        case Operand::kOffsetTarget:
        case Operand::kImmTarget: text += "+0"; break;
        case Operand::kDstMem: text += "[%r1+2]"; break;
        case Operand::kSrcMem: text += "[%r2-2]"; break;
        case Operand::kMapFd: text += "map:1"; break;
        case Operand::kMapValue: text += "map_value:1+8"; break;
      }
    }
    std::vector<Insn> insns = Asm(text);
    ASSERT_EQ(insns.size(), form.is_wide() ? 2u : 1u) << text;
    EXPECT_EQ(Classify(insns[0]), form.id) << text;
  }
}

TEST(isaAssembler, UpstreamAliases) {
  EXPECT_EQ(One("swap16 %r1"), One("bswap16 %r1"));
  EXPECT_EQ(One("swap64 %r1"), One("bswap64 %r1"));
  EXPECT_EQ(One("call helper 5"), One("call 5"));
  EXPECT_EQ(One("call helper %r3"), One("call %r3"));
  EXPECT_EQ(One("lock fetch xchg [%r1], %r2"), One("lock xchg [%r1], %r2"));
  EXPECT_EQ(One("lock fetch cmpxchg32 [%r1], %r2"), One("lock cmpxchg32 [%r1], %r2"));
}

TEST(isaAssembler, CommentsBlankLinesAndSpacing) {
  EXPECT_EQ(Asm(""), std::vector<Insn>{});
  EXPECT_EQ(Asm("# only a comment\n\n   ; and another\n"), std::vector<Insn>{});
  EXPECT_EQ(Asm("  mov %r0, 1   # set r0\nexit ; done\n"),
            (std::vector<Insn>{Make(0xb7, 0, 0, 0, 1), kExit}));
  // CRLF line ends, tabs, operands without commas (upstream accepts those),
  // and spaces inside a memory operand.
  EXPECT_EQ(Asm("mov\t%r0,\t1\r\nexit\r\n"), (std::vector<Insn>{Make(0xb7, 0, 0, 0, 1), kExit}));
  EXPECT_EQ(One("add %r0 5"), One("add %r0, 5"));
  EXPECT_EQ(One("ldxw %r0, [ %r1 + 4 ]"), One("ldxw %r0, [%r1+4]"));
  EXPECT_EQ(One("stxw [%r1 - 4],%r2"), One("stxw [%r1-4], %r2"));
}

TEST(isaAssembler, LabelsResolveToDistancesFromTheNextSlot) {
  const std::vector<Insn> insns = Asm(
      "  mov %r0, 0\n"
      "  ja forward\n"          // slot 1 -> slot 4
      "back:\n"
      "  mov %r0, 1\n"          // slot 2
      "  exit\n"                // slot 3
      "forward: lddw %r1, 1\n"  // slots 4-5: a label before an instruction
      "  jne %r1, 0, back\n"    // slot 6 -> slot 2
      "  ja32 back\n"           // slot 7 -> slot 2
      "  exit\n");
  ASSERT_EQ(insns.size(), 9u);
  EXPECT_EQ(insns[1].offset, 2);
  EXPECT_EQ(insns[6].offset, -5);
  EXPECT_EQ(insns[7].imm, -6);
  EXPECT_EQ(insns[7].offset, 0);
}

TEST(isaAssembler, LocalCallsToLabels) {
  const std::vector<Insn> insns = Asm(
      "call local func\n"
      "exit\n"
      "func:\n"
      "mov %r0, 1\n"
      "exit\n");
  ASSERT_EQ(insns.size(), 4u);
  EXPECT_EQ(insns[0], Make(kOpCall, 0, kPseudoCall, 0, 1));
}

TEST(isaAssembler, LabelsOnOneLineAndAtTheEnd) {
  const std::vector<Insn> insns = Asm("a: b: ja end\nexit\nend:");
  ASSERT_EQ(insns.size(), 2u);
  EXPECT_EQ(insns[0].offset, 1);  // to slot 2: one past the last instruction
  EXPECT_EQ(Asm("a: b: ja a\nexit")[0].offset, -1);
  EXPECT_EQ(Asm("x.1_y: ja x.1_y\nexit")[0].offset, -1);
}

TEST(isaAssembler, ImplicitExitLabelNamesTheFirstExit) {
  const std::vector<Insn> insns = Asm(
      "jeq %r1, 0, exit\n"  // slot 0 -> slot 2
      "mov %r0, 1\n"
      "exit\n"
      "exit\n");
  EXPECT_EQ(insns[0].offset, 1);
  // A declared label `exit` wins, wherever it is.
  const std::vector<Insn> declared = Asm(
      "jeq %r1, 0, exit\n"  // slot 0 -> slot 3
      "mov %r0, 1\n"
      "exit\n"
      "exit:\n"
      "exit\n");
  EXPECT_EQ(declared[0].offset, 2);
  EXPECT_THAT(AsmError("ja exit\nmov %r0, 0"), HasSubstr("line 1, column 4: unknown label 'exit'"));
}

TEST(isaAssembler, NumericDistances) {
  EXPECT_EQ(One("ja +0").offset, 0);
  EXPECT_EQ(One("ja -1").offset, -1);
  EXPECT_EQ(One("ja +32767").offset, 32767);
  EXPECT_EQ(One("ja -32768").offset, -32768);
  EXPECT_EQ(One("ja +0x10").offset, 16);
  EXPECT_EQ(One("ja32 +2147483647").imm, 2147483647);
  EXPECT_EQ(One("ja32 -2147483648").imm, -2147483647 - 1);
  EXPECT_EQ(One("call local -5").imm, -5);
  EXPECT_THAT(AsmError("ja +32768"), HasSubstr("line 1, column 4: jump distance '+32768' does not fit in 16 bits"));
  EXPECT_THAT(AsmError("ja 3"), HasSubstr("line 1, column 4: jump distance '3' needs a sign"));
  EXPECT_THAT(AsmError("ja32 +2147483648"), HasSubstr("does not fit in 32 bits"));
}

TEST(isaAssembler, ImmediatesAtTheirLimits) {
  EXPECT_EQ(One("mov32 %r0, 2147483647").imm, 2147483647);
  EXPECT_EQ(One("mov32 %r0, -2147483648").imm, -2147483647 - 1);
  EXPECT_EQ(One("mov32 %r0, 0xffffffff").imm, -1);
  EXPECT_EQ(One("mov32 %r0, 0x80000000").imm, -2147483647 - 1);
  EXPECT_EQ(One("mov32 %r0, 0X7FFFFFFF").imm, 2147483647);
  EXPECT_EQ(One("mov32 %r0, -0x10").imm, -16);
  EXPECT_EQ(One("mov32 %r0, +5").imm, 5);
  EXPECT_EQ(AsmError("mov32 %r0, 2147483648"),
            "line 1, column 12: immediate '2147483648' does not fit in 32 bits (write "
            "-2147483648..2147483647 in decimal, or a bit pattern 0x0..0xffffffff)");
  EXPECT_THAT(AsmError("mov32 %r0, -2147483649"), HasSubstr("does not fit in 32 bits"));
  EXPECT_THAT(AsmError("mov32 %r0, 0x100000000"), HasSubstr("does not fit in 32 bits"));
  EXPECT_THAT(AsmError("mov32 %r0, 99999999999999999999999"),
              HasSubstr("immediate '99999999999999999999999' does not fit in 64 bits"));
  EXPECT_THAT(AsmError("mov32 %r0, 0x"), HasSubstr("'0x' is not a number"));
  EXPECT_THAT(AsmError("mov32 %r0, 12abc"), HasSubstr("'12abc' is not a number"));
  // lddw: hex is any 64-bit pattern, decimal down to INT64_MIN.
  auto lddw = [](std::string_view text) {
    auto insns = Assemble(text);
    EXPECT_TRUE(insns.ok()) << insns.message();
    return insns.ok() && insns->size() == 2 ? Imm64((*insns)[0], (*insns)[1]) : 0;
  };
  EXPECT_EQ(lddw("lddw %r0, 0xffffffffffffffff"), ~uint64_t{0});
  EXPECT_EQ(lddw("lddw %r0, 18446744073709551615"), ~uint64_t{0});
  EXPECT_EQ(lddw("lddw %r0, -9223372036854775808"), uint64_t{1} << 63);
  EXPECT_EQ(lddw("lddw %r0, -1"), ~uint64_t{0});
  EXPECT_THAT(AsmError("lddw %r0, 18446744073709551616"), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(AsmError("lddw %r0, 0x10000000000000000"), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(AsmError("lddw %r0, -9223372036854775809"), HasSubstr("does not fit in 64 bits"));
}

TEST(isaAssembler, MemoryOffsetsAtTheirLimits) {
  EXPECT_EQ(One("ldxw %r0, [%r1+32767]").offset, 32767);
  EXPECT_EQ(One("ldxw %r0, [%r1-32768]").offset, -32768);
  EXPECT_EQ(One("ldxw %r0, [%r1-0x8000]").offset, -32768);
  // As upstream: a hex offset after '+' is a 16-bit pattern.
  EXPECT_EQ(One("ldxw %r0, [%r1+0xffff]").offset, -1);
  EXPECT_THAT(AsmError("ldxw %r0, [%r1+32768]"), HasSubstr("line 1, column 15: offset '+32768' does not fit in 16 bits"));
  EXPECT_THAT(AsmError("ldxb %r0, [%r1+0x10000]"), HasSubstr("does not fit in 16 bits"));
  EXPECT_THAT(AsmError("ldxb %r0, [%r1-32769]"), HasSubstr("does not fit in 16 bits"));
  EXPECT_THAT(AsmError("ldxb %r0, [%r1+]"), HasSubstr("expected an offset after the sign"));
  EXPECT_THAT(AsmError("ldxb %r0, [%r1+-4]"), HasSubstr("expected an offset after the sign"));
  EXPECT_THAT(AsmError("ldxb %r0, [%r1*4]"), HasSubstr("unknown register '%r1*4'"));
  EXPECT_THAT(AsmError("ldxb %r0, [%r1+4"), HasSubstr("line 1, column 11: missing ']'"));
  EXPECT_THAT(AsmError("ldxb %r0, []"), HasSubstr("unknown register ''"));
  EXPECT_THAT(AsmError("ldxb %r0, [%r1 4]"),
              HasSubstr("line 1, column 16: expected '+' or '-' after the register in '[%r1 4]'"));
}

TEST(isaAssembler, MapOperands) {
  EXPECT_EQ(Asm("lddw %r1, map:0x10")[0].imm, 16);
  EXPECT_EQ(Asm("lddw %r1, map_value:2+0xffffffff")[1].imm, -1);
  EXPECT_THAT(AsmError("lddw %r1, map:"), HasSubstr("map fd '' is not a number"));
  EXPECT_THAT(AsmError("lddw %r1, map:x"), HasSubstr("line 1, column 15: map fd 'x' is not a number"));
  EXPECT_THAT(AsmError("lddw %r1, map_value:3+-1"), HasSubstr("must be 0..0xffffffff"));
  EXPECT_THAT(AsmError("lddw %r1, map_value:3+0x100000000"), HasSubstr("must be 0..0xffffffff"));
  EXPECT_THAT(AsmError("lddw %r1, map_value:"), HasSubstr("map fd '' is not a number"));
}

TEST(isaAssembler, RegisterErrors) {
  EXPECT_EQ(AsmError("mov %r0, 1\nexit\nmov %r0, %r11\n"),
            "line 3, column 10: unknown register '%r11' (registers are %r0..%r10)");
  EXPECT_EQ(AsmError("or %r0, %r50"),
            "line 1, column 9: unknown register '%r50' (registers are %r0..%r10)");
  EXPECT_THAT(AsmError("mov %r01, 1"), HasSubstr("unknown register '%r01'"));
  EXPECT_THAT(AsmError("mov %x1, 1"), HasSubstr("unknown register '%x1'"));
  EXPECT_THAT(AsmError("mov %r, 1"), HasSubstr("unknown register '%r'"));
  EXPECT_THAT(AsmError("mov r1, 1"),
              HasSubstr("line 1, column 5: operand 1 of 'mov': expected a register %r0..%r10, found 'r1'"));
  EXPECT_THAT(AsmError("call %r11"), HasSubstr("unknown register '%r11'"));
}

TEST(isaAssembler, OperandErrors) {
  EXPECT_EQ(AsmError("lddw %r0"),
            "line 1, column 1: 'lddw' is written lddw %rD, imm64 | lddw %rD, map:FD | lddw %rD, "
            "map_value:FD+OFF; found 1 operand");
  EXPECT_THAT(AsmError("exit %r0"), HasSubstr("'exit' is written exit; found 1 operand"));
  EXPECT_THAT(AsmError("ldxb %r0, %r1"),
              HasSubstr("line 1, column 11: operand 2 of 'ldxb': expected a memory operand like [%r1+4], found '%r1'"));
  EXPECT_THAT(AsmError("add %r0, [%r1]"),
              HasSubstr("operand 2 of 'add': expected a 32-bit immediate or a register %r0..%r10"));
  EXPECT_THAT(AsmError("call func"),
              HasSubstr("operand 1 of 'call': expected a 32-bit immediate or a register"));
  EXPECT_THAT(AsmError("add %r0,"), HasSubstr("line 1, column 8: missing operand after ','"));
  EXPECT_THAT(AsmError("add %r0,, 1"), HasSubstr("line 1, column 9: missing operand before ','"));
  EXPECT_THAT(AsmError("add , %r0, 1"), HasSubstr("line 1, column 5: missing operand before ','"));
  EXPECT_THAT(AsmError("lock or [%r10-8]"), HasSubstr("'lock or' is written lock or [%rD+off], %rS"));
  EXPECT_THAT(AsmError("stw [%r1], %r2"), HasSubstr("expected a 32-bit immediate"));
  EXPECT_THAT(AsmError("ja %r1"), HasSubstr("expected a label or a distance"));
  EXPECT_THAT(AsmError("ja bad-label"), HasSubstr("'bad-label' is not a label name"));
}

TEST(isaAssembler, MnemonicErrors) {
  EXPECT_EQ(AsmError("mov %r0, 1\n  ldxq %r0, %r1"), "line 2, column 3: unknown instruction 'ldxq'");
  EXPECT_THAT(AsmError("lock"), HasSubstr("line 1, column 1: unknown instruction 'lock' (known: lock add32,"));
  EXPECT_THAT(AsmError("lock foo [%r1], %r2"), HasSubstr("unknown instruction 'lock foo'"));
  EXPECT_THAT(AsmError("probe stw [%r1], 1"), HasSubstr("unknown instruction 'probe stw' (known: probe ldxw,"));
  EXPECT_THAT(AsmError("%r0 = 1"), HasSubstr("line 1, column 1: expected an instruction or a label, found '%r0 = 1'"));
  EXPECT_THAT(AsmError("5: exit"), HasSubstr("expected an instruction or a label"));
  EXPECT_THAT(AsmError("MOV %r0, 1"), HasSubstr("unknown instruction 'MOV'"));
  EXPECT_THAT(AsmError("exit2"), HasSubstr("unknown instruction 'exit2'"));
}

TEST(isaAssembler, LabelErrors) {
  EXPECT_EQ(AsmError("ja NOT_A_LABEL\nexit"), "line 1, column 4: unknown label 'NOT_A_LABEL'");
  EXPECT_EQ(AsmError("L1:\nexit\n  L1: exit"), "line 3, column 3: label 'L1' is already defined at line 1");
  // A label 16-bit jumps cannot reach; ja32 can.
  std::string far = "ja end\n";
  for (int i = 0; i < 40000; ++i) far += "exit\n";
  far += "end: exit\n";
  EXPECT_THAT(AsmError(far), HasSubstr("line 1, column 4: label 'end' is 40000 slots away, beyond the 16-bit jump offset"));
  far.replace(0, 2, "ja32");
  auto insns = Assemble(far);
  ASSERT_TRUE(insns.ok()) << insns.message();
  EXPECT_EQ((*insns)[0].imm, 40000);
}

TEST(isaAssembler, FirstLineNumbersErrors) {
  auto result = Assemble("exit\nmov %r0, %r12", {.first_line = 40});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.message(), "line 41, column 10: unknown register '%r12' (registers are %r0..%r10)");
}

TEST(isaAssembler, MessagesQuoteBinaryInputReadably) {
  const std::string text("mov %r0, \x01\xff", 11);
  EXPECT_THAT(AsmError(text), HasSubstr("found '\\x01\\xff'"));
  const std::string long_label(5000, 'a');
  const std::string message = AsmError("ja " + long_label);
  EXPECT_LT(message.size(), 200u);
}

// The row docs/assembly.md gives a form: syntax, opcode (with the field that
// tells it apart), CPU version, group, semantics.
std::string DocumentationRow(const Form& form) {
  std::string opcode = fmt::format("0x{:02x}", form.opcode);
  switch (form.discriminant) {
    case Discriminant::kNone: break;
    case Discriminant::kSrc: opcode += fmt::format(" src={}", form.discriminant_value); break;
    case Discriminant::kOffset: opcode += fmt::format(" off={}", form.discriminant_value); break;
    case Discriminant::kImm: opcode += fmt::format(" imm=0x{:x}", form.discriminant_value); break;
  }
  std::string semantics;
  for (char c : form.semantics) semantics += c == '|' ? std::string("\\|") : std::string(1, c);
  return fmt::format("| `{}` | {} | {} | {}{} | `{}` |", FormSyntax(form), opcode, CpuVersionName(form.cpu),
                     GroupNames(form.group), form.kernel_internal ? ", kernel-internal" : "", semantics);
}

// docs/assembly.md lists every form with what the table says of it, so a
// form added to the table is documented too, and a changed one re-documented.
TEST(isaAssembler, DocumentationListsEveryForm) {
  auto doc = ReadTextFile(std::string(BPFDIFF_SOURCE_DIR) + "/docs/assembly.md");
  ASSERT_TRUE(doc.ok()) << doc.message();
  for (const Form& form : AllForms()) {
    EXPECT_THAT(*doc, HasSubstr(DocumentationRow(form) + "\n")) << "docs/assembly.md does not list " << form.name;
  }
}

}  // namespace
}  // namespace bpfdiff::isa
