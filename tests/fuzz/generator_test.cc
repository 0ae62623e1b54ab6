// The generator is valid by construction (fuzz/generator/generator.h): every
// structured input, whatever its bytes, decodes to a case the load step
// accepts, that reads no register a call clobbered, and on which the
// interpreter and both JIT lowerings agree.
#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/generator/far_branch.h"
#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "isa/insn.h"
#include "oracle/load.h"
#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint64_t kSeed = 0x5eed'0001;

TEST(FuzzGenerator, OtherFormatVersionsAreNotOurs) {
  EXPECT_FALSE(DecodeFuzzInput({}));
  const uint8_t one_byte[] = {kFormatVersion};
  EXPECT_FALSE(DecodeFuzzInput(one_byte));
  const uint8_t newer_version[kHeaderSize] = {static_cast<uint8_t>(kFormatVersion + 1)};
  EXPECT_FALSE(DecodeFuzzInput(newer_version));
  const uint8_t version_0[kHeaderSize] = {0};
  EXPECT_FALSE(DecodeFuzzInput(version_0));
  // Every version the decoder ever wrote still reads.
  for (uint8_t version = kOldestFormatVersion; version <= kFormatVersion; ++version) {
    const uint8_t header[kHeaderSize] = {version};
    EXPECT_TRUE(DecodeFuzzInput(header)) << "version " << int{version};
  }
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
  // After the memory, no complete slot, or only slots that name no form.
  const uint8_t too_short[] = {kFormatVersion, kModeRaw, 0, 0, 0x95, 0, 0};
  EXPECT_FALSE(DecodeFuzzInput(too_short));
  const uint8_t unknown_opcode[] = {kFormatVersion, kModeRaw, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(DecodeFuzzInput(unknown_opcode));
  // A memory length past the end takes the rest: no instructions are left.
  const uint8_t all_memory[] = {kFormatVersion, kModeRaw, 40, 0, 0x95, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(DecodeFuzzInput(all_memory));
}

// ldxw %r0, [%r1+0]; exit
const std::vector<uint8_t> kLoadWordSlots = {0x61, 0x10, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0};

TEST(FuzzGenerator, RawInputsOfVersion2CarryTheirInputMemory) {
  std::vector<uint8_t> input = {2, kModeRaw, 4, 0, 0x0a, 0x0b, 0x0c, 0x0d};
  input.insert(input.end(), kLoadWordSlots.begin(), kLoadWordSlots.end());
  const auto source = DecodeFuzzInput(input);
  ASSERT_TRUE(source);
  EXPECT_EQ(source->memory, (std::vector<uint8_t>{0x0a, 0x0b, 0x0c, 0x0d}));
  ASSERT_EQ(source->programs.size(), 1u);
  EXPECT_EQ(isa::ToBytes(source->programs[0]), kLoadWordSlots);
  // The encoder writes the same bytes, of the current version (raw mode
  // has not changed since version 2).
  auto encoded = EncodeRawInput(*source);
  ASSERT_TRUE(encoded) << encoded.message();
  std::vector<uint8_t> expected = input;
  expected[0] = kFormatVersion;
  EXPECT_EQ(*encoded, expected);
  // What raw mode cannot carry is refused, never dropped.
  CaseSource too_much = *source;
  too_much.memory.resize(kMaxRawMemory + 1);
  EXPECT_FALSE(EncodeRawInput(too_much));
  CaseSource two_programs = *source;
  two_programs.programs.push_back(source->programs[0]);
  EXPECT_FALSE(EncodeRawInput(two_programs));
  CaseSource with_map = *source;
  with_map.maps.push_back({1, isa::MapType::kArray, 4, 8, 1, {}, {}});
  EXPECT_FALSE(EncodeRawInput(with_map));
  CaseSource with_option = *source;
  with_option.options.inline_kptr_xchg = true;
  EXPECT_FALSE(EncodeRawInput(with_option));
}

TEST(FuzzGenerator, RawInputsOfVersion1HaveNoMemoryAndUpgradeToTheSameCase) {
  std::vector<uint8_t> input = {1, kModeRaw};
  input.insert(input.end(), kLoadWordSlots.begin(), kLoadWordSlots.end());
  const auto old = DecodeFuzzInput(input);
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->memory.empty());
  std::vector<uint8_t> upgraded = input;
  UpgradeFuzzInput(upgraded);
  EXPECT_EQ(upgraded[0], kFormatVersion);
  const auto now = DecodeFuzzInput(upgraded);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->programs, old->programs);
  EXPECT_EQ(now->memory, old->memory);
  // Current inputs, and inputs that are not ours, stay as they are.
  std::vector<uint8_t> current = upgraded;
  UpgradeFuzzInput(current);
  EXPECT_EQ(current, upgraded);
  std::vector<uint8_t> foreign = {0x7f, 'E', 'L', 'F'};
  UpgradeFuzzInput(foreign);
  EXPECT_EQ(foreign, (std::vector<uint8_t>{0x7f, 'E', 'L', 'F'}));
}

TEST(FuzzGenerator, StructuredInputsOfVersion2UpgradeToTheSameCase) {
  // Version 3 reads byte 2 modulo 8 and byte 15 as options; the upgrade
  // rewrites both so that an old input keeps the case it made.
  std::mt19937_64 random(kSeed + 7);
  for (int i = 0; i < 100; ++i) {
    std::vector<uint8_t> input = RandomStructuredInput(random, 0, 24);
    input[0] = 2;
    input[2] |= 0x04;    // a subprogram count version 3 reads differently
    input[15] |= kOptionMagnitudes;  // and the option version 2 ignored
    const auto old = DecodeFuzzInput(input);
    ASSERT_TRUE(old);
    std::vector<uint8_t> upgraded = input;
    UpgradeFuzzInput(upgraded);
    ASSERT_EQ(upgraded[0], kFormatVersion);
    const auto now = DecodeFuzzInput(upgraded);
    ASSERT_TRUE(now);
    EXPECT_EQ(DescribeSource(*now), DescribeSource(*old)) << "input " << i << ": " << Hex(input);
    // Read as version 3 without the upgrade, the same bytes make another case.
    std::vector<uint8_t> misread = input;
    misread[0] = kFormatVersion;
    if (input.size() > kHeaderSize + 4 * kRecordSize) {
      EXPECT_NE(DescribeSource(*DecodeFuzzInput(misread)), DescribeSource(*old)) << "input " << i;
    }
  }
}

TEST(FuzzGenerator, StructuredInputsOfVersion3UpgradeToTheSameCase) {
  // Version 4 reads byte 15 bits 1..6 (the tail-call chain, the bounds
  // mode); the upgrade clears them, so that every record keeps its meaning.
  std::mt19937_64 random(kSeed + 8);
  size_t misread_differs = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> input = RandomStructuredInput(random, 0, 48);
    input[0] = 3;
    input[4] |= 0x01;  // tail-call targets
    input[15] = static_cast<uint8_t>(random() & 0x7f);
    const auto old = DecodeFuzzInput(input);
    ASSERT_TRUE(old);
    std::vector<uint8_t> upgraded = input;
    UpgradeFuzzInput(upgraded);
    ASSERT_EQ(upgraded[0], kFormatVersion);
    const auto now = DecodeFuzzInput(upgraded);
    ASSERT_TRUE(now);
    EXPECT_EQ(DescribeSource(*now), DescribeSource(*old)) << "input " << i << ": " << Hex(input);
    // Read as version 4 without the upgrade, a chain or bounds bit makes
    // another case.
    std::vector<uint8_t> misread = input;
    misread[0] = kFormatVersion;
    misread_differs += DescribeSource(*DecodeFuzzInput(misread)) != DescribeSource(*old);
  }
  EXPECT_GT(misread_differs, 0u);
}

// Version 6: header byte 15 bit 7 asks for the far-branch block, which
// the hash of the whole input grants to one input in kFarBranchOneIn; the
// block leaves the rest of the program as it was. A version-5 input, which
// may have that bit set, upgrades to the same case.
TEST(FuzzGenerator, TheFarBranchModeIsForTheInputsItsHashChooses) {
  std::mt19937_64 random(kSeed + 9);
  size_t far = 0, asked = 0;
  for (int i = 0; i < 4000; ++i) {
    std::vector<uint8_t> input = RandomStructuredInput(random, 0, 8);
    input[0] = kFormatVersion;
    input[15] |= kOptionFarBranch;
    ++asked;
    const auto decoded = DecodeFuzzInput(input);
    ASSERT_TRUE(decoded);
    const bool chosen = InputHash(input.data(), input.size()) % kFarBranchOneIn == 0;
    const size_t length = decoded->programs.front().size();
    ASSERT_EQ(length > kFarBranchFillers[0], chosen) << "input " << i << ": " << Hex(input);
    if (!chosen) continue;
    ++far;
    std::vector<uint8_t> plain = input;
    plain[15] = static_cast<uint8_t>(plain[15] & ~kOptionFarBranch);
    const auto without = DecodeFuzzInput(plain);
    ASSERT_TRUE(without);
    const auto block = FarBranchBlock(static_cast<uint8_t>(input[14] >> kFarBranchFillerShift),
                                      static_cast<int32_t>(input[6] | input[7] << 8 | input[8] << 16 |
                                                           static_cast<uint32_t>(input[9]) << 24),
                                      /*define_arguments=*/true);
    ASSERT_EQ(length, block.size() + without->programs.front().size());
    EXPECT_TRUE(std::equal(block.begin(), block.end(), decoded->programs.front().begin()));
    EXPECT_TRUE(std::equal(without->programs.front().begin(), without->programs.front().end(),
                           decoded->programs.front().begin() + static_cast<std::ptrdiff_t>(block.size())));
    EXPECT_TRUE(LoadCase(*decoded).ok());
  }
  // About one in kFarBranchOneIn: 4000 inputs give 15.6 on average.
  EXPECT_GE(far, 3u);
  EXPECT_LE(far, 40u);
  EXPECT_EQ(asked, 4000u);

  std::vector<uint8_t> old = RandomStructuredInput(random, 0, 8);
  old[0] = 5;
  old[15] |= kOptionFarBranch;
  const auto before = DecodeFuzzInput(old);
  ASSERT_TRUE(before);
  UpgradeFuzzInput(old);
  EXPECT_EQ(old[0], kFormatVersion);
  EXPECT_EQ(old[15] & kOptionFarBranch, 0);
  EXPECT_EQ(DescribeSource(*DecodeFuzzInput(old)), DescribeSource(*before));
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
  // variants of it. Runs not comparable (legacy packet loads the JIT rejects,
  // say) are allowed but must stay the exception. About 0.1 s.
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  std::mt19937_64 random(kSeed + 1);
  constexpr int kInputs = 200;
  constexpr size_t kVariants = 2;
  int not_comparable = 0;
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
    if (!run.NotComparableReasons().empty()) ++not_comparable;
  }
  EXPECT_LE(not_comparable, kInputs / 10) << "most generated cases should be comparable";
}

}  // namespace
}  // namespace bpfdiff::fuzz
