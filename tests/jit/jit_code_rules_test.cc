// jit::FirstUnpredictableWord names the first CONSTRAINED UNPREDICTABLE word
// of a compiled program by its address, its BPF slot and the rule.
#include <gtest/gtest.h>

#include "jit/code_rules.h"

namespace bpfdiff::jit {
namespace {

CompiledProgram Program(std::vector<uint32_t> words) {
  CompiledProgram program;
  CompiledSubprogram sub;
  sub.first_slot = 0;
  sub.end_slot = 3;
  sub.rx_image = 0x10000040;
  sub.code_words = static_cast<uint32_t>(words.size());
  sub.offsets = {1, 2, 3, 4};  // slot i's code starts at word i + 1; word 0 is the prologue
  sub.words = std::move(words);
  program.subprograms.push_back(std::move(sub));
  return program;
}

TEST(JitCodeRules, NamesTheFirstUnpredictableWordItsAddressAndSlot) {
  // nop; nop; stxr w0, x0, [x1] (status = data); ldp x0, x0, [x1]
  const auto bad = FirstUnpredictableWord(Program({0xd503201f, 0xd503201f, 0xc8007c20, 0xa9400020}));
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->find("0xc8007c20 at 0x10000048"), std::string::npos) << *bad;
  EXPECT_NE(bad->find("BPF slot 1"), std::string::npos) << *bad;
  EXPECT_NE(bad->find("status register is its data register"), std::string::npos) << *bad;
}

TEST(JitCodeRules, WellFormedCodeHasNone) {
  // stp x29, x30, [sp, #-16]!; stxr w2, x0, [x1]; ldp x0, x1, [x0]; ret
  EXPECT_FALSE(FirstUnpredictableWord(Program({0xa9bf7bfd, 0xc8027c20, 0xa9400400, 0xd65f03c0})));
  EXPECT_FALSE(FirstUnpredictableWord(CompiledProgram{}));
}

}  // namespace
}  // namespace bpfdiff::jit
