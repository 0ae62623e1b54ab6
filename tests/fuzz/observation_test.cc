// Format version 2 makes generated programs observe their registers: a
// wrong value a JIT leaves in any register reaches the compared outcome,
// where version 1 let it vanish at the exit. The planted bug forgets the
// zero-extension of 32-bit adds.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/generator/fuzz_format.h"
#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

std::unique_ptr<DiffHarness> HarnessWithPlantedBug(std::string_view bug) {
  auto bugs = PlantedBugsNamed(bug);
  EXPECT_TRUE(bugs) << bugs.message();
  auto harness = DiffHarness::Create(*bugs);
  EXPECT_TRUE(harness) << harness.message();
  return harness ? std::move(harness).value() : nullptr;
}

// The main entry: r7 = 1; add32 %r7, -1 (a carry out of the low half, 0
// when zero-extended), then the end.
std::vector<uint8_t> Add32IntoR7(uint8_t version) {
  return {
      version, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0x3c, 0x07, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,  // mov immediate: r7 = 1 (64 bits)
      0x00, 0x00, 0x01, 0x07, 0xff, 0xff, 0xff, 0xff,  // alu: add, 32 bits, into r7, immediate 0xffffffff
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
  };
}

TEST(FuzzObservation, AWrongValueLeftInARegisterIsADivergenceFromVersion2) {
  auto harness = HarnessWithPlantedBug("alu32-add-no-zext");
  ASSERT_NE(harness, nullptr);

  const auto v1 = harness->RunInput(Add32IntoR7(1));
  ASSERT_TRUE(v1.source);
  ASSERT_FALSE(v1.run.load_error) << *v1.run.load_error;
  EXPECT_EQ(v1.run.FirstDivergence(), nullptr) << "version 1 never looks at r7: the blind spot";

  const auto v2 = harness->RunInput(Add32IntoR7(2));
  ASSERT_TRUE(v2.source);
  ASSERT_FALSE(v2.run.load_error) << *v2.run.load_error;
  const EngineRun* diverged = v2.run.FirstDivergence();
  ASSERT_NE(diverged, nullptr) << DescribeSource(*v2.source);
  // r7 is stored at r10-512 + 8 * 6 = r10-464; the carry is its fifth byte.
  EXPECT_EQ(diverged->verdict.field, "stack frame 0 at r10-460") << diverged->verdict.Describe();
  EXPECT_EQ(diverged->verdict.detail, "interp 0x0, jit 0x1");
}

TEST(FuzzObservation, Version2FindsMoreOfARegisterBugThanVersion1OnTheSameRecords) {
  auto harness = HarnessWithPlantedBug("alu32-add-no-zext");
  ASSERT_NE(harness, nullptr);
  std::mt19937_64 random(0x0b5e'7e00);
  int found_v1 = 0, found_v2 = 0, compared = 0;
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> input = RandomStructuredInput(random, 8, 48);
    input[0] = 1;
    const auto v1 = harness->RunInput(input);
    input[0] = 2;
    const auto v2 = harness->RunInput(input);
    if (!v1.source || !v2.source || v1.run.load_error || v2.run.load_error) continue;
    ++compared;
    found_v1 += v1.run.FirstDivergence() != nullptr;
    found_v2 += v2.run.FirstDivergence() != nullptr;
  }
  EXPECT_GT(compared, 250);
  EXPECT_GT(found_v2, found_v1) << "version 1 found " << found_v1 << ", version 2 " << found_v2 << " of "
                                << compared;
}

}  // namespace
}  // namespace bpfdiff::fuzz
