// ReasonCategory: poison and rejection reasons that differ only in their
// numbers count together, and long reasons are cut visibly.
#include <string>

#include <gtest/gtest.h>

#include "fuzz/fuzz_stats.h"

namespace bpfdiff::fuzz {
namespace {

TEST(FuzzReasonCategory, DecimalNumbersBecomeN) {
  EXPECT_EQ(ReasonCategory("program 0: instruction 17: bad register r11"),
            "program N: instruction N: bad register rN");
}

TEST(FuzzReasonCategory, HexNumbersBecomeOneN) {
  EXPECT_EQ(ReasonCategory("load from 0xdeadbeef faulted at 0x1F"), "load from N faulted at N");
}

TEST(FuzzReasonCategory, LettersOutsideHexNumbersStay) {
  // a..f are hex digits only after "0x"; x starts a hex number only after
  // a lone 0.
  EXPECT_EQ(ReasonCategory("bad face: x"), "bad face: x");
  EXPECT_EQ(ReasonCategory("a 4byte load of 8bytes"), "a Nbyte load of Nbytes");
  EXPECT_EQ(ReasonCategory("10x slower, slot 3a"), "Nx slower, slot Na");
}

TEST(FuzzReasonCategory, ReasonsDifferingOnlyInNumbersShareACategory) {
  EXPECT_EQ(ReasonCategory("instruction 3: read of r2 after call at 0x10"),
            ReasonCategory("instruction 250: read of r5 after call at 0xfff8"));
}

TEST(FuzzReasonCategory, ReasonsUpTo100CharactersAreKeptWhole) {
  const std::string exactly_100(100, 'r');
  EXPECT_EQ(ReasonCategory(exactly_100), exactly_100);
}

TEST(FuzzReasonCategory, LongReasonsAreCutAt100CharactersAndEndInEllipsis) {
  const std::string head(100, 'h');
  const std::string category = ReasonCategory(head + "this part is cut");
  EXPECT_EQ(category, head + "...");
  EXPECT_LE(category.size(), 103u);
}

TEST(FuzzReasonCategory, TheCutCountsCharactersAfterNumbersBecameN) {
  // 30 numbers of 3 digits and a space: 120 characters of reason, but 60
  // of category; with 40 more, exactly 100: not cut.
  std::string reason, category;
  for (int i = 0; i < 30; ++i) {
    reason += "123 ";
    category += "N ";
  }
  reason += std::string(40, '.');
  category += std::string(40, '.');
  EXPECT_EQ(ReasonCategory(reason), category);
  // One character more is cut.
  EXPECT_EQ(ReasonCategory(reason + "!"), category + "...");
}

}  // namespace
}  // namespace bpfdiff::fuzz
