// The LLVM MC disassembler wrapper: known words, an invalid word, every word
// of the encoder cross-check table, and a round trip of their text through
// llvm-mc.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "jit/a64/disasm/a64_disassembler.h"
#include "tests/jit/a64_cross_check_cases.h"
#include "tests/jit/llvm_mc.h"

namespace bpfdiff {
namespace {

A64Disassembler MakeDisassembler() {
  Result<A64Disassembler> disassembler = A64Disassembler::Create();
  EXPECT_TRUE(disassembler.ok()) << disassembler.message();
  return std::move(disassembler).value();
}

TEST(a64_disasm, KnownWords) {
  const A64Disassembler disassembler = MakeDisassembler();
  const std::pair<uint32_t, std::string> known[] = {
      {0xd4202000, "brk #0x100"},  // kBreakFault
      {0xd503201f, "nop"},
      {0xaa0103e0, "mov x0, x1"},
      {0xd65f03c0, "ret"},
      {0x54000041, "b.ne #8"},
      {0x17ffffff, "b #-4"},
      {0x00000000, "udf #0"},
      {0xd503245f, "bti c"},
      {0xd503233f, "paciasp"},
      {0xf8e00041, "ldaddal x0, x1, [x2]"},
      {0x88a07c41, "cas w0, w1, [x2]"},
      {0x910003fd, "mov x29, sp"},
      {0xa9bf7bfd, "stp x29, x30, [sp, #-16]!"},
      {0xd53bd040, "mrs x0, TPIDR_EL0"},
      {0xd50b7520, "ic ivau, x0"},
  };
  for (const auto& [word, text] : known) {
    EXPECT_EQ(disassembler.Disassemble(word, 0x1000), text) << std::hex << word;
  }
}

TEST(a64_disasm, InvalidWord) {
  const A64Disassembler disassembler = MakeDisassembler();
  EXPECT_EQ(disassembler.Disassemble(0xffffffff), std::nullopt);
  EXPECT_EQ(disassembler.Disassemble(0x80000000), std::nullopt);
}

TEST(a64_disasm, BranchTargetsArePcRelative) {
  const A64Disassembler disassembler = MakeDisassembler();
  EXPECT_EQ(disassembler.Disassemble(0x14000002, 0), "b #8");
  EXPECT_EQ(disassembler.Disassemble(0x14000002, 0xffff0000), "b #8");
}

TEST(a64_disasm, MovedFromIsEmpty) {
  A64Disassembler first = MakeDisassembler();
  A64Disassembler second = std::move(first);
  EXPECT_EQ(second.Disassemble(0xd503201f), "nop");
  EXPECT_EQ(first.Disassemble(0xd503201f), std::nullopt);  // NOLINT(bugprone-use-after-move)
  first = std::move(second);
  EXPECT_EQ(first.Disassemble(0xd503201f), "nop");
}

// Every word the encoder cross-check produces disassembles, and llvm-mc
// assembles the text back into the same word.
TEST(a64_disasm, EveryCrossCheckWordRoundTrips) {
  const A64Disassembler disassembler = MakeDisassembler();
  const std::vector<a64::testing::CrossCheckCase> cases = a64::testing::CrossCheckCases();
  std::vector<std::string> texts;
  texts.reserve(cases.size());
  for (const auto& c : cases) {
    std::optional<std::string> text = disassembler.Disassemble(c.word, 0x10000);
    ASSERT_TRUE(text.has_value()) << fmt::format("{:#010x} ({}) does not disassemble", c.word,
                                                 c.syntax);
    texts.push_back(std::move(*text));
  }
  Result<std::vector<a64::testing::Assembled>> assembled = a64::testing::AssembleWithLlvmMc(texts);
  ASSERT_TRUE(assembled.ok()) << assembled.message();
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& back = (*assembled)[i];
    EXPECT_EQ(back.word, cases[i].word) << fmt::format(
        "{:#010x} disassembles to `{}`, which llvm-mc {}", cases[i].word, texts[i],
        back.word ? fmt::format("assembles to {:#010x}", *back.word) : "rejects: " + back.error);
  }
}

}  // namespace
}  // namespace bpfdiff
