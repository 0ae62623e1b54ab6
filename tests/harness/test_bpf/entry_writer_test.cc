#include "harness/test_bpf/entry_writer.h"

#include <gtest/gtest.h>

#include "isa/assembler.h"

namespace bpfdiff {
namespace {

// test_bpf.c's values (lib/test_bpf.c, 6.12).
const kernelsrc::TestBpfMarkers kMarkers{.max_testruns = 1000,
                                         .max_insns = 512,
                                         .tail_call_marker = 0x7a11ca11,
                                         .tail_call_null = 0x7fff,
                                         .tail_call_invalid = 0x7ffe,
                                         .func_test_func = 0};

std::vector<std::string> Macros(std::string_view text) {
  auto insns = isa::Assemble(text);
  EXPECT_TRUE(insns.ok()) << insns.message();
  if (!insns) return {};
  auto lines = TestBpfMacros(*insns, kMarkers);
  EXPECT_TRUE(lines.ok()) << lines.message();
  return lines ? *lines : std::vector<std::string>{};
}

std::string Refusal(std::string_view text) {
  auto insns = isa::Assemble(text);
  EXPECT_TRUE(insns.ok()) << insns.message();
  if (!insns) return {};
  auto lines = TestBpfMacros(*insns, kMarkers);
  EXPECT_FALSE(lines.ok());
  return lines ? std::string() : lines.message();
}

TEST(TestBpfMacros, EachClassInTheKernelsMacros) {
  EXPECT_EQ(Macros("mov %r0, 1\nmov32 %r1, -1\nadd %r0, %r1\nsub32 %r2, 0xfefefefe\nneg %r3\nneg32 %r4\n"
                   "be16 %r0\nle32 %r1\nbswap64 %r2\nmovsx1632 %r1, %r2\nmovsx864 %r3, %r4\n"
                   "sdiv %r0, 3\nsmod32 %r1, %r2\n"),
            (std::vector<std::string>{
                "BPF_MOV64_IMM(R0, 1)", "BPF_MOV32_IMM(R1, -1)", "BPF_ALU64_REG(BPF_ADD, R0, R1)",
                "BPF_ALU32_IMM(BPF_SUB, R2, 0xfefefefe)", "BPF_ALU64_IMM(BPF_NEG, R3, 0)",
                "BPF_ALU32_IMM(BPF_NEG, R4, 0)", "BPF_ENDIAN(BPF_TO_BE, R0, 16)", "BPF_ENDIAN(BPF_TO_LE, R1, 32)",
                "BPF_BSWAP(R2, 64)", "BPF_MOVSX32_REG(R1, R2, 16)", "BPF_MOVSX64_REG(R3, R4, 8)",
                "BPF_ALU64_IMM_OFF(BPF_DIV, R0, 3, 1)", "BPF_ALU32_REG_OFF(BPF_MOD, R1, R2, 1)"}));
  EXPECT_EQ(Macros("lddw %r0, 0x123456789abcdef0\nlddw %r1, -1\nldxw %r2, [%r10-4]\nldxsh %r3, [%r1+2]\n"
                   "stdw [%r10-8], 4097\nstxb [%r10-1], %r2\nlock fetch add [%r10-8], %r1\n"
                   "lock cmpxchg32 [%r10-8], %r2\nlock or [%r10-8], %r3\n"),
            (std::vector<std::string>{
                "BPF_LD_IMM64(R0, 0x123456789abcdef0ULL)", "BPF_LD_IMM64(R1, -1)", "BPF_LDX_MEM(BPF_W, R2, R10, -4)",
                "BPF_LDX_MEMSX(BPF_H, R3, R1, 2)", "BPF_ST_MEM(BPF_DW, R10, -8, 0x1001)",
                "BPF_STX_MEM(BPF_B, R10, R2, -1)", "BPF_ATOMIC_OP(BPF_DW, BPF_ADD | BPF_FETCH, R10, R1, -8)",
                "BPF_ATOMIC_OP(BPF_W, BPF_CMPXCHG, R10, R2, -8)", "BPF_ATOMIC_OP(BPF_DW, BPF_OR, R10, R3, -8)"}));
  EXPECT_EQ(Macros("ja +1\njeq %r0, 5, +0\njslt32 %r1, %r2, -2\njset %r3, 0x80000000, +0\nexit\n"),
            (std::vector<std::string>{"BPF_JMP_A(1)", "BPF_JMP_IMM(BPF_JEQ, R0, 5, 0)",
                                      "BPF_JMP32_REG(BPF_JSLT, R1, R2, -2)",
                                      "BPF_JMP_IMM(BPF_JSET, R3, 0x80000000, 0)", "BPF_EXIT_INSN()"}));
}

TEST(TestBpfMacros, TailCallMarkersAreWrittenAsTheFileWritesThem) {
  std::vector<isa::Insn> insns{
      {.opcode = isa::kOpLddw, .dst = 2, .imm = kMarkers.tail_call_marker},
      {},
      {.opcode = isa::kClassAlu | isa::kAluMov | isa::kSrcK, .dst = 3, .offset = -1, .imm = kMarkers.tail_call_marker},
      {.opcode = isa::kOpTailCall},
      {.opcode = isa::kOpLddw, .dst = 2, .imm = kMarkers.tail_call_marker},
      {},
      {.opcode = isa::kClassAlu64 | isa::kAluMov | isa::kSrcK, .dst = 0, .imm = 7},
      {.opcode = isa::kClassAlu | isa::kAluMov | isa::kSrcK,
       .dst = 3,
       .offset = kMarkers.tail_call_null,
       .imm = kMarkers.tail_call_marker},
      {.opcode = isa::kOpTailCall},
  };
  auto lines = TestBpfMacros(insns, kMarkers);
  ASSERT_TRUE(lines.ok()) << lines.message();
  EXPECT_EQ(*lines, (std::vector<std::string>{
                        "TAIL_CALL(-1)", "BPF_LD_IMM64(R2, TAIL_CALL_MARKER)", "BPF_MOV64_IMM(R0, 7)",
                        "BPF_RAW_INSN(BPF_ALU | BPF_MOV | BPF_K, R3, 0, TAIL_CALL_NULL, TAIL_CALL_MARKER)",
                        "BPF_JMP_IMM(BPF_TAIL_CALL, 0, 0, 0)"}));
}

TEST(TestBpfMacros, WhatTestBpfCannotHoldIsRefusedWithTheReason) {
  EXPECT_EQ(Refusal("mov %r0, 0\ncall 7\nexit\n"),
            "instruction 1 (call helper): a helper call: test_bpf.c's cases are not verified, so nothing makes a "
            "helper's id its address");
  EXPECT_NE(Refusal("probe ldxw %r0, [%r1+0]\nexit\n").find("kernel-internal"), std::string::npos);
  EXPECT_NE(Refusal("call local +1\nexit\nmov %r0, 0\nexit\n").find("jit_subprogs()"), std::string::npos);
}

}  // namespace
}  // namespace bpfdiff
