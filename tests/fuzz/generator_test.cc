// The generator is valid by construction (fuzz/generator/generator.h): every
// structured input, whatever its bytes, decodes to a case the load step
// accepts, that reads no register a call clobbered, and on which the
// interpreter and both JIT lowerings agree.
#include <random>

#include <gtest/gtest.h>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "oracle/load.h"
#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint64_t kSeed = 0x5eed'0001;

TEST(FuzzGenerator, OtherFormatVersionsAreNotOurs) {
  EXPECT_FALSE(DecodeFuzzInput({}));
  const uint8_t one_byte[] = {kFormatVersion};
  EXPECT_FALSE(DecodeFuzzInput(one_byte));
  const uint8_t other_version[kHeaderSize] = {static_cast<uint8_t>(kFormatVersion + 1)};
  EXPECT_FALSE(DecodeFuzzInput(other_version));
}

TEST(FuzzGenerator, HeaderWithoutRecordsIsACompleteCase) {
  // Missing bytes read as zeros: the shortest input still makes a program.
  const uint8_t header_only[] = {kFormatVersion, 0};
  const auto source = DecodeFuzzInput(header_only);
  ASSERT_TRUE(source);
  ASSERT_EQ(source->programs.size(), 1u);
  EXPECT_FALSE(source->programs[0].empty());
  EXPECT_TRUE(LoadCase(*source)) << DescribeSource(*source);
}

TEST(FuzzGenerator, RawInputWithoutInstructionsIsNotACase) {
  // Bytes 2.. hold no complete slot, or only slots that name no form.
  const uint8_t too_short[] = {kFormatVersion, kModeRaw, 0x95, 0, 0};
  EXPECT_FALSE(DecodeFuzzInput(too_short));
  const uint8_t unknown_opcode[] = {kFormatVersion, kModeRaw, 0xff, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(DecodeFuzzInput(unknown_opcode));
}

TEST(FuzzGenerator, RandomStructuredInputsLoadWithoutClobberedReads) {
  // The load step only (no engine): cheap enough for a few hundred inputs.
  std::mt19937_64 random(kSeed);
  for (int i = 0; i < 400; ++i) {
    const auto input = RandomStructuredInput(random, 0, 64);
    const auto source = DecodeFuzzInput(input);
    ASSERT_TRUE(source) << "input " << i << ": " << Hex(input);
    const auto loaded = LoadCase(*source);
    ASSERT_TRUE(loaded) << "input " << i << " does not load: " << loaded.message() << "\n"
                        << Hex(input) << "\n" << DescribeSource(*source);
    // A read of r1..r5 after a call makes the case incomparable; the
    // generator promises never to emit one.
    EXPECT_FALSE(loaded->clobbered_read) << "input " << i << ": " << *loaded->clobbered_read << "\n"
                                         << Hex(input) << "\n" << DescribeSource(*source);
  }
}

TEST(FuzzGenerator, EnginesAgreeOnRandomStructuredInputs) {
  // What diff_fuzzer checks, on a fixed sample: loads, and no engine
  // diverges from the interpreter, on the case's input memory and on two
  // variants of it. Poisoned runs (legacy packet loads the JIT rejects,
  // say) are allowed but must stay the exception. About 0.1 s.
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  std::mt19937_64 random(kSeed + 1);
  constexpr int kInputs = 200;
  constexpr size_t kVariants = 2;
  int poisoned = 0;
  for (int i = 0; i < kInputs; ++i) {
    const auto input = RandomStructuredInput(random, 0, 48);
    const auto source = DecodeFuzzInput(input);
    ASSERT_TRUE(source) << "input " << i << ": " << Hex(input);
    const CaseRun run = harness->RunCase(*source, kVariants);
    ASSERT_FALSE(run.load_error) << "input " << i << ": " << *run.load_error << "\n" << Hex(input);
    if (const EngineRun* diverged = run.FirstDivergence()) {
      ADD_FAILURE() << "input " << i << " diverges on " << diverged->engine << ": " << Hex(input) << "\n"
                    << DescribeDivergence(*source, run);
    }
    if (!run.PoisonReasons().empty()) ++poisoned;
  }
  EXPECT_LE(poisoned, kInputs / 10) << "most generated cases should be comparable";
}

}  // namespace
}  // namespace bpfdiff::fuzz
