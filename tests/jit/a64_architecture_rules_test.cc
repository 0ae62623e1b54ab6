// The CONSTRAINED UNPREDICTABLE register combinations, on words whose
// decoding llvm-mc-14 confirms (`--disassemble`; its assembler refuses each
// flagged one as "unpredictable", but ldxp and ldnp with Rt == Rt2, which
// the Arm ARM's decode makes CONSTRAINED UNPREDICTABLE too).
#include <gtest/gtest.h>

#include <cstdint>

#include "jit/a64/architecture_rules.h"
#include "jit/a64/encoder.h"

namespace bpfdiff::a64 {
namespace {

struct Case {
  uint32_t word;
  const char* text;
};

TEST(A64ArchitectureRules, FlagsEachConstrainedUnpredictableCombination) {
  const Case flagged[] = {
      {0xc8007c20, "stxr w0, x0, [x1]"},         {0xc8017c20, "stxr w1, x0, [x1]"},
      {0xc8007fe0, "stxr w0, x0, [sp]"},         {0xc805fcc5, "stlxr w5, x5, [x6]"},
      {0x08017c41, "stxrb w1, w1, [x2]"},        {0xc8200041, "stxp w0, x1, x0, [x2]"},
      {0xc87f0441, "ldxp x1, x1, [x2]"},         {0xf8408421, "ldr x1, [x1], #8"},
      {0xf8008c21, "str x1, [x1, #8]!"},         {0x38401c63, "ldrb w3, [x3, #1]!"},
      {0xa9400020, "ldp x0, x0, [x1]"},          {0xa8c10400, "ldp x0, x1, [x0], #16"},
      {0xa9bf0420, "stp x0, x1, [x1, #-16]!"},   {0x69400441, "ldpsw x1, x1, [x2]"},
      {0xa8400862, "ldnp x2, x2, [x3]"},
  };
  for (const Case& c : flagged) EXPECT_TRUE(ConstrainedUnpredictable(c.word)) << c.text;
}

TEST(A64ArchitectureRules, LeavesTheirWellFormedNeighboursAlone) {
  const Case fine[] = {
      {0xc8027c20, "stxr w2, x0, [x1]"},   {0xc8230041, "stxp w3, x1, x0, [x2]"},
      {0xc85ffc21, "ldaxr x1, [x1]"},      {0xf84087e1, "ldr x1, [sp], #8"},
      {0xf8408c41, "ldr x1, [x2, #8]!"},   {0xf8408021, "ldur x1, [x1, #8]"},
      {0xf9400421, "ldr x1, [x1, #8]"},    {0xa9bf7bfd, "stp x29, x30, [sp, #-16]!"},
      {0xa9400400, "ldp x0, x1, [x0]"},    {0xa9000441, "stp x1, x1, [x2]"},
      {0x48207c40, "casp x0, x1, x0, x1, [x2]"}, {0xc89ffc21, "stlr x1, [x1]"},
      {0xd503201f, "nop"},                 {0xd4202000, "brk #0x100"},
  };
  for (const Case& c : fine) EXPECT_FALSE(ConstrainedUnpredictable(c.word)) << c.text;
}

// bpfdiff's encoders refuse every such combination (kBreakFault): what the
// rules flag, the encoder never emits.
TEST(A64ArchitectureRules, TheEncodersNeverEmitAFlaggedWord) {
  for (int t = 0; t < 32; ++t) {
    for (int n = 0; n < 32; ++n) {
      const auto rt = static_cast<Reg>(t);
      const auto rn = static_cast<Reg>(n);
      for (const Indexing indexing : {Indexing::kPreIndex, Indexing::kPostIndex}) {
        const uint32_t word = LoadStoreImmediateIndexed(LoadStoreOp::kLoad, Size::k64, rt, rn, 8, indexing);
        if (word != kBreakFault) {
          EXPECT_FALSE(ConstrainedUnpredictable(word)) << std::hex << word;
        }
        const uint32_t pair = LoadStorePair(PairOp::kLoad, Width::kX, rt, Reg::kX3, rn, 16, indexing);
        if (pair != kBreakFault) {
          EXPECT_FALSE(ConstrainedUnpredictable(pair)) << std::hex << pair;
        }
      }
      const uint32_t stxr = LoadStoreExclusive(ExclusiveOp::kStlxr, Size::k64, rt, Reg::kX2, rn);
      if (stxr != kBreakFault) {
        EXPECT_FALSE(ConstrainedUnpredictable(stxr)) << std::hex << stxr;
      }
    }
  }
}

}  // namespace
}  // namespace bpfdiff::a64
