// The shipped seeds of the differential targets test what they claim:
// every raw seed is its `.data` vector, memory included, and runs to the end
// that file expects; every vector raw mode can carry has its seed; every
// structured seed completes on every engine, all of them agreeing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "harness/conformance/case_file.h"
#include "support/files.h"
#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

const std::filesystem::path kSeeds = std::filesystem::path(BPFDIFF_SOURCE_DIR) / "fuzz/corpus/diff_fuzzer";
const std::filesystem::path kVectors = std::filesystem::path(BPFDIFF_SOURCE_DIR) / "tests/conformance";

std::vector<std::filesystem::path> SeedsNamed(std::string_view prefix) {
  std::vector<std::filesystem::path> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(kSeeds)) {
    if (entry.path().filename().string().starts_with(prefix)) seeds.push_back(entry.path());
  }
  std::sort(seeds.begin(), seeds.end());
  return seeds;
}

TEST(FuzzSeeds, EveryRawSeedIsItsVectorAndRunsToTheEndItsFileExpects) {
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  const auto seeds = SeedsNamed("raw-");
  ASSERT_FALSE(seeds.empty());
  for (const auto& seed : seeds) {
    const std::string name = seed.filename().string().substr(4);
    SCOPED_TRACE(name);
    auto file = ReadCaseFile(kVectors / (name + ".data"));
    ASSERT_TRUE(file) << "a raw seed without its vector: " << file.message();
    auto bytes = ReadBinaryFile(seed);
    ASSERT_TRUE(bytes) << bytes.message();
    const auto source = DecodeFuzzInput(*bytes);
    ASSERT_TRUE(source);
    EXPECT_EQ(source->programs, file->source.programs);
    EXPECT_EQ(source->memory, file->source.memory) << "the seed must keep its vector's input memory";

    const CaseRun run = harness->RunCase(*source);
    if (run.load_error) {
      EXPECT_TRUE(file->expected.error) << "rejected at load: " << *run.load_error;
      if (file->expected.error && !file->expected.error->empty()) {
        EXPECT_EQ(*run.load_error, *file->expected.error);
      }
      continue;
    }
    ASSERT_FALSE(run.runs.empty());
    ASSERT_TRUE(run.runs.front().outcome);
    const auto problem = CheckExpectations(file->expected, *run.runs.front().outcome);
    EXPECT_FALSE(problem) << "the interpreter does not reach the end the file expects: " << *problem;
    EXPECT_EQ(run.FirstDivergence(), nullptr) << run.FirstDivergence()->verdict.Describe();
  }
}

TEST(FuzzSeeds, EveryVectorRawModeCanCarryHasItsSeed) {
  auto files = ListFiles(kVectors, ".data");
  ASSERT_TRUE(files) << files.message();
  std::set<std::string> seeds;
  for (const auto& seed : SeedsNamed("raw-")) seeds.insert(seed.filename().string().substr(4));
  for (const auto& path : *files) {
    auto file = ReadCaseFile(path);
    ASSERT_TRUE(file) << file.message();
    const std::string name = path.stem().string();
    if (!EncodeRawInput(file->source)) continue;
    EXPECT_TRUE(seeds.count(name)) << name << " has no raw seed: run make_diff_seeds (fuzz/tools/make_seeds.cc)";
  }
}

TEST(FuzzSeeds, EveryStructuredSeedIsOfTheCurrentVersionAndCompletesOnEveryEngine) {
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  const auto seeds = SeedsNamed("seed-");
  ASSERT_FALSE(seeds.empty());
  for (const auto& seed : seeds) {
    SCOPED_TRACE(seed.filename().string());
    auto bytes = ReadBinaryFile(seed);
    ASSERT_TRUE(bytes) << bytes.message();
    ASSERT_GE(bytes->size(), 2u);
    EXPECT_EQ((*bytes)[0], kFormatVersion);
    const auto result = harness->RunInput(*bytes);
    ASSERT_TRUE(result.source);
    ASSERT_FALSE(result.run.load_error) << *result.run.load_error;
    const Outcome& reference = *result.run.runs.front().outcome;
    EXPECT_TRUE(reference.end == EndKind::kExit || reference.end == EndKind::kUnwind) << reference.Summary();
    // An engine whose verifier refuses the case (an arena atomic without
    // LSE) never runs it, by design.
    for (const EngineRun& run : result.run.runs) {
      EXPECT_TRUE(run.verdict.match() || run.verifier_refused) << run.engine << ": " << run.verdict.Describe();
    }
  }
}

}  // namespace
}  // namespace bpfdiff::fuzz
