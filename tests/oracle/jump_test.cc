// JMP and JMP32 (RFC 9669 section 4.3): every condition, taken and not
// taken, at the boundaries where signed and unsigned, 32 and 64 bits, and
// sign-extended and raw immediates disagree; ja and ja32 (gotol).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "isa/opcode_table.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

using isa::Shape;

struct JumpCase {
  std::string_view form;  // e.g. "jsgt32 imm"
  uint64_t dst;
  int64_t operand;  // imm (s32) or the source register's value
  bool taken;
};

constexpr int64_t S(uint64_t v) { return static_cast<int64_t>(v); }

constexpr JumpCase kJumpCases[] = {
    // --- JMP: 64-bit operands, imm sign-extended to 64 bits ---
    {"jeq imm", 5, 5, true},
    {"jeq imm", 5, 6, false},
    {"jeq imm", 0xffffffffffffffff, -1, true},
    {"jeq imm", 0x00000000ffffffff, -1, false},  // -1 is 0xffff_ffff_ffff_ffff
    {"jeq reg", 0x123456789, 0x123456789, true},
    {"jeq reg", 0x100000005, 5, false},
    {"jne imm", 5, 5, false},
    {"jne imm", 0xffffffff, -1, true},
    {"jne reg", 1, 2, true},
    {"jne reg", 7, 7, false},
    {"jgt imm", 0xffffffffffffffff, 1, true},  // unsigned
    {"jgt imm", 1, -1, false},
    {"jgt imm", 5, 5, false},
    {"jgt reg", 0x8000000000000000, 0x7fffffffffffffff, true},
    {"jgt reg", 1, 2, false},
    {"jge imm", 5, 5, true},
    {"jge imm", 4, 5, false},
    {"jge imm", 0xffffffffffffffff, -1, true},
    {"jge reg", 0, 0, true},
    {"jge reg", 0, 1, false},
    {"jlt imm", 1, -1, true},
    {"jlt imm", 0xffffffffffffffff, 0, false},
    {"jlt imm", 5, 5, false},
    {"jlt reg", 0x7fffffffffffffff, S(0x8000000000000000), true},
    {"jlt reg", 2, 1, false},
    {"jle imm", 5, 5, true},
    {"jle imm", 6, 5, false},
    {"jle imm", 0xfffffffffffffffe, -1, true},
    {"jle reg", 0, 0, true},
    {"jle reg", 1, 0, false},
    {"jset imm", 0x8000000000000000, INT32_MIN, true},  // imm is 0xffff_ffff_8000_0000
    {"jset imm", 0x100000000, 0x7fffffff, false},
    {"jset imm", 0x100000000, -1, true},
    {"jset reg", 0xf0, 0x0f, false},
    {"jset reg", 0xf0, 0x10, true},
    {"jsgt imm", 1, -1, true},  // signed
    {"jsgt imm", 0xffffffffffffffff, 0, false},
    {"jsgt imm", 5, 5, false},
    {"jsgt reg", 0x7fffffffffffffff, S(0x8000000000000000), true},
    {"jsgt reg", 0x8000000000000000, 0x7fffffffffffffff, false},
    {"jsge imm", 0xffffffffffffffff, -1, true},
    {"jsge imm", 0xfffffffffffffffe, -1, false},
    {"jsge imm", 0, -1, true},
    {"jsge reg", 0x8000000000000000, S(0x8000000000000000), true},
    {"jsge reg", 0x8000000000000000, 0, false},
    {"jslt imm", 0xffffffffffffffff, 0, true},
    {"jslt imm", 0, -1, false},
    {"jslt imm", 0xffffffff, -1, false},  // 4294967295 is not below -1
    {"jslt reg", 0x8000000000000000, 0x7fffffffffffffff, true},
    {"jslt reg", 0, 0, false},
    {"jsle imm", 0xffffffffffffffff, -1, true},
    {"jsle imm", 0, -1, false},
    {"jsle imm", 0x80000000, 0x7fffffff, false},
    {"jsle reg", 0x8000000000000000, 0, true},
    {"jsle reg", 1, 0, false},
    // --- JMP32: only the low halves, imm as 32 bits ---
    {"jeq32 imm", 0xdeadbeef00000005, 5, true},
    {"jeq32 imm", 5, 6, false},
    {"jeq32 imm", 0x12345678ffffffff, -1, true},
    {"jeq32 reg", 0x100000005, 0x200000005, true},
    {"jeq32 reg", 5, 6, false},
    {"jne32 imm", 0x100000005, 5, false},
    {"jne32 imm", 1, 0, true},
    {"jne32 reg", 0xffffffff00000001, 1, false},
    {"jne32 reg", 1, 2, true},
    {"jgt32 imm", 0xffffffff, 1, true},
    {"jgt32 imm", 0x100000000, 0, false},  // the 64-bit jgt would be taken
    {"jgt32 imm", 0xffffffff00000001, 0, true},
    {"jgt32 reg", 0x80000000, 0x7fffffff, true},
    {"jgt32 reg", 0x100000000, 0xffffffff, false},
    {"jge32 imm", 5, 5, true},
    {"jge32 imm", 0x100000004, 5, false},
    {"jge32 imm", 0xffffffff, -1, true},
    {"jge32 reg", 0, 0, true},
    {"jge32 reg", 0xffffffff00000000, 1, false},
    {"jlt32 imm", 0x100000000, 1, true},
    {"jlt32 imm", 5, 5, false},
    {"jlt32 imm", 0xfffffffe, -1, true},
    {"jlt32 reg", 0x7fffffff, 0x80000000, true},
    {"jlt32 reg", 0xffffffff, 0x100000000, false},
    {"jle32 imm", 5, 5, true},
    {"jle32 imm", 0xffffffff, 0x7fffffff, false},
    {"jle32 imm", 0xffffffff00000000, 0, true},
    {"jle32 reg", 0, 0x100000000, true},
    {"jle32 reg", 1, 0x100000000, false},
    {"jset32 imm", 0x100000000, -1, false},
    {"jset32 imm", 0x80000000, INT32_MIN, true},
    {"jset32 reg", 0xff00000000, 0xff00000000, false},
    {"jset32 reg", 1, 3, true},
    {"jsgt32 imm", 1, -1, true},
    {"jsgt32 imm", 0xffffffff, 0, false},  // the 64-bit jsgt would be taken
    {"jsgt32 imm", 0x7fffffff, INT32_MIN, true},
    {"jsgt32 reg", 0x7fffffff, 0x80000000, true},
    {"jsgt32 reg", 0x80000000, 0x7fffffff, false},
    {"jsge32 imm", 0xffffffff, -1, true},
    {"jsge32 imm", 0x80000000, -1, false},
    {"jsge32 imm", 0x100000000, 0, true},
    {"jsge32 reg", 0xffffffff, S(0xfffffffffffffffe), true},
    {"jsge32 reg", 0xfffffffe, 0xffffffff, false},
    {"jslt32 imm", 0xffffffff, 0, true},
    {"jslt32 imm", 0, -1, false},
    {"jslt32 imm", 0x80000000, 0x7fffffff, true},
    {"jslt32 reg", 0x80000000, 0, true},
    {"jslt32 reg", 0x7fffffff, 0x80000000, false},
    {"jsle32 imm", 0xffffffff, -1, true},
    {"jsle32 imm", 0x100000000, -1, false},  // low half 0 is not <= -1
    {"jsle32 imm", 0x80000000, INT32_MIN, true},
    {"jsle32 reg", 0x80000000, 0x7fffffff, true},
    {"jsle32 reg", 1, 0x100000000, false},
};

const isa::Form* FormNamed(std::string_view name) {
  for (const isa::Form& form : isa::AllForms()) {
    if (form.name == name) return &form;
  }
  return nullptr;
}

// r1 = dst; r2 = operand; if (r1 OP r2|imm) goto taken; r0 = 0; exit;
// taken: r0 = 1; exit.
std::vector<isa::Insn> JumpProgram(const isa::Form& form, uint64_t dst, int64_t operand) {
  std::vector<isa::Insn> insns = Lddw(1, dst);
  for (const isa::Insn& insn : Lddw(2, static_cast<uint64_t>(operand))) insns.push_back(insn);
  isa::Insn jump = Make(form.opcode, 1, 0, 2);
  if (form.shape == Shape::kJumpImm) jump.imm = static_cast<int32_t>(operand);
  if (form.shape == Shape::kJumpReg) jump.src = 2;
  insns.push_back(jump);
  insns.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 0));
  insns.push_back(kExit);
  insns.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 1));
  insns.push_back(kExit);
  return insns;
}

TEST(oracle_jump, EveryConditionHasATakenAndANotTakenCase) {
  std::map<std::string, std::pair<int, int>> count;  // taken, not taken
  for (const JumpCase& c : kJumpCases) {
    const isa::Form* form = FormNamed(c.form);
    ASSERT_NE(form, nullptr) << "no form named '" << c.form << "'";
    EXPECT_TRUE(form->shape == Shape::kJumpImm || form->shape == Shape::kJumpReg) << c.form;
    auto& [taken, not_taken] = count[std::string(c.form)];
    ++(c.taken ? taken : not_taken);
  }
  int forms = 0;
  for (const isa::Form& form : isa::AllForms()) {
    if (form.shape != Shape::kJumpImm && form.shape != Shape::kJumpReg) continue;
    ++forms;
    EXPECT_GT(count[form.name].first, 0) << form.name << " is never taken";
    EXPECT_GT(count[form.name].second, 0) << form.name << " is never not taken";
  }
  EXPECT_EQ(forms, 44);  // 11 conditions x {imm, reg} x {JMP, JMP32}
}

TEST(oracle_jump, EveryConditionAtItsBoundaries) {
  for (const JumpCase& c : kJumpCases) {
    const isa::Form* form = FormNamed(c.form);
    ASSERT_NE(form, nullptr) << c.form;
    EXPECT_TRUE(ExitsWith(RunInsns(JumpProgram(*form, c.dst, c.operand)), c.taken ? 1 : 0))
        << c.form << " with dst=0x" << std::hex << c.dst << " operand=0x" << c.operand
        << (c.taken ? " must be taken" : " must not be taken");
  }
}

TEST(oracle_jump, JaForwardAndBackward) {
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 1\nja +1\nmov %r0, 2\nexit"), 1));
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 1\nja +0\nadd %r0, 2\nexit"), 3));  // +0: the next one
  EXPECT_TRUE(ExitsWith(RunAsm(
                            "  mov %r0, 0\n"
                            "  ja fwd\n"
                            "back:\n"
                            "  add %r0, 100\n"
                            "  exit\n"
                            "fwd:\n"
                            "  add %r0, 1\n"
                            "  ja back\n"),
                        101));
}

TEST(oracle_jump, Ja32ForwardAndBackward) {
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 1\nja32 +1\nmov %r0, 2\nexit"), 1));
  EXPECT_TRUE(ExitsWith(RunAsm(
                            "  mov %r0, 0\n"
                            "  ja32 fwd\n"
                            "back:\n"
                            "  add %r0, 100\n"
                            "  exit\n"
                            "fwd:\n"
                            "  add %r0, 1\n"
                            "  ja32 back\n"),
                        101));
}

TEST(oracle_jump, Ja32ReachesBeyondSixteenBits) {
  // gotol: the distance is the 32-bit imm, here 40000 slots each way.
  constexpr int kGap = 40000;
  std::vector<isa::Insn> insns;
  insns.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 1));  // 0
  insns.push_back(Make(isa::kClassJmp32 | isa::kJmpJa, 0, 0, 0, kGap + 1));          // 1 -> 3 + kGap
  insns.push_back(kExit);                                                             // 2
  for (int i = 0; i < kGap; ++i) {
    insns.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 2));  // skipped
  }
  // 3 + kGap: r0 += 10, then back to the exit at 2.
  insns.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, 0, 0, 0, 10));
  insns.push_back(Make(isa::kClassJmp32 | isa::kJmpJa, 0, 0, 0, -(kGap + 3)));
  EXPECT_TRUE(ExitsWith(RunInsns(std::move(insns)), 11));
}

TEST(oracle_jump, ConditionalJumpBackwardLoops) {
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 0\nloop: add %r0, 1\njlt %r0, 10, loop\nexit"), 10));
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 0\nloop: add32 %r0, 3\njslt32 %r0, 30, loop\nexit"), 30));
}

}  // namespace
}  // namespace bpfdiff::testing
