// pack_fuzzer's script mutator and generator: deterministic, within
// max_size, always a script of the current version, canonical bytes; and
// from nothing, within a fixed number of scripts, the deep states of
// issue 23 (by the scripts' own state counters).
#include <gtest/gtest.h>

#include "fuzz/pack/pack_script.h"
#include "fuzz/pack/script_mutator.h"

namespace bpfdiff::fuzz {
namespace {

// As libFuzzer calls it: the input in a buffer of max_size bytes.
std::vector<uint8_t> Mutated(std::vector<uint8_t> input, size_t max_size, unsigned seed) {
  const size_t size = std::min(input.size(), max_size);
  input.resize(std::max(input.size(), max_size));
  input.resize(MutatePackScript(input.data(), size, max_size, seed));
  return input;
}

TEST(PackScriptMutator, GeneratesTheSameScriptForTheSameSeed) {
  for (unsigned seed = 0; seed < 20; ++seed) EXPECT_EQ(GeneratePackScript(4096, seed), GeneratePackScript(4096, seed));
  EXPECT_NE(GeneratePackScript(4096, 1), GeneratePackScript(4096, 2));
}

TEST(PackScriptMutator, GeneratedScriptsFitAndAreCanonical) {
  for (size_t max_size : {size_t{0}, size_t{9}, size_t{10}, size_t{11}, size_t{64}, size_t{400}, size_t{4096}}) {
    for (unsigned seed = 0; seed < 50; ++seed) {
      const std::vector<uint8_t> script = GeneratePackScript(max_size, seed);
      ASSERT_LE(script.size(), max_size);
      if (max_size < kPackScriptHeaderSize) {
        EXPECT_TRUE(script.empty());
        continue;
      }
      const auto decoded = DecodePackScript(script);
      ASSERT_TRUE(decoded);
      // Canonical: encoding what was decoded gives the same bytes back.
      const auto encoded = EncodePackScript(*decoded);
      ASSERT_TRUE(encoded) << encoded.message();
      EXPECT_EQ(*encoded, script);
    }
  }
}

TEST(PackScriptMutator, AnEmptyOrForeignInputBecomesAScript) {
  for (const std::vector<uint8_t>& input : {std::vector<uint8_t>{}, std::vector<uint8_t>{2, 0, 0}}) {
    const std::vector<uint8_t> out = Mutated(input, 4096, 3);
    const auto decoded = DecodePackScript(out);
    ASSERT_TRUE(decoded);
    EXPECT_FALSE(decoded->ops.empty());
  }
}

TEST(PackScriptMutator, MutantsAreDeterministicBoundedAndStayScripts) {
  std::vector<uint8_t> input;
  for (unsigned seed = 0; seed < 2000; ++seed) {
    const size_t max_size = seed % 7 == 0 ? 300 : 4096;
    std::vector<uint8_t> out = Mutated(input, max_size, seed);
    ASSERT_EQ(out, Mutated(input, max_size, seed));
    ASSERT_LE(out.size(), max_size);
    const auto decoded = DecodePackScript(out);
    ASSERT_TRUE(decoded);
    const auto encoded = EncodePackScript(*decoded);
    ASSERT_TRUE(encoded) << encoded.message();
    ASSERT_EQ(*encoded, out);
    // A chain, as a campaign mutates its own mutants; a fresh start now and then.
    input = seed % 50 == 49 ? std::vector<uint8_t>{} : out;
  }
}

TEST(PackScriptMutator, MutationsInsertAndDeleteOperations) {
  const std::vector<uint8_t> base = GeneratePackScript(2048, 5);
  const size_t ops = DecodePackScript(base)->ops.size();
  bool more = false, fewer = false;
  for (unsigned seed = 0; seed < 200 && !(more && fewer); ++seed) {
    const size_t n = DecodePackScript(Mutated(base, 4096, seed))->ops.size();
    more |= n > ops;
    fewer |= n < ops;
  }
  EXPECT_TRUE(more);
  EXPECT_TRUE(fewer);
}

TEST(PackScriptMutator, CrossOverIsBoundedAndAScript) {
  const std::vector<uint8_t> a = GeneratePackScript(4096, 1);
  const std::vector<uint8_t> b = GeneratePackScript(4096, 2);
  for (unsigned seed = 0; seed < 100; ++seed) {
    const size_t max_out = seed % 3 == 0 ? 200 : 4096;
    std::vector<uint8_t> out(max_out);
    const size_t n = CrossOverPackScripts(a.data(), a.size(), b.data(), b.size(), out.data(), max_out, seed);
    ASSERT_LE(n, max_out);
    out.resize(n);
    ASSERT_TRUE(DecodePackScript(out));
    std::vector<uint8_t> again(max_out);
    again.resize(CrossOverPackScripts(a.data(), a.size(), b.data(), b.size(), again.data(), max_out, seed));
    EXPECT_EQ(out, again);
  }
}

// What an empty corpus gets before any coverage feedback: generated
// scripts alone, a fixed number of them, reach every state the world can
// be driven into.
TEST(PackScriptMutator, GeneratedScriptsReachTheDeepStates) {
  PackStates states;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const std::vector<uint8_t> script = GeneratePackScript(4096, seed);
    auto result = RunPackScript(script, PackScriptOptions{});
    ASSERT_TRUE(result) << result.message();
    EXPECT_TRUE(result->violations.empty()) << "seed " << seed;
    states.Add(result->states);
  }
  EXPECT_GT(states.loads_filling_a_bitmap_word, 0u);
  EXPECT_GT(states.most_full_bitmap_words, 0u);
  EXPECT_GT(states.loads_past_a_hole, 0u);
  EXPECT_GT(states.frees_leaving_a_hole, 0u);
  EXPECT_GT(states.images_crossing_a_page, 0u);
  EXPECT_GT(states.largest_image_bytes, 8192u);
  EXPECT_GE(states.most_live_programs, 8u);
  EXPECT_GT(states.frees_deferred_cpu_inside_directly, 0u);
  EXPECT_GT(states.frees_deferred_cpu_inside_by_tail_call, 0u);
  EXPECT_GT(states.frees_deferred_cpu_inside_by_local_call, 0u);
  EXPECT_GT(states.frees_deferred_cpu_inside_nested_in_interrupt, 0u);
}

// The mutator without any feedback, as a chain from the empty input: its
// mutants keep reaching the states (a mutator that broke the scenarios'
// shape, say a free that no longer follows its step, would not).
TEST(PackScriptMutator, AChainOfMutantsFromEmptyReachesTheDeepStates) {
  PackStates states;
  std::vector<uint8_t> input;
  for (unsigned seed = 1; seed <= 100; ++seed) {
    input = Mutated(input, 4096, seed);
    auto result = RunPackScript(input, PackScriptOptions{});
    ASSERT_TRUE(result) << result.message();
    EXPECT_TRUE(result->violations.empty()) << "seed " << seed;
    states.Add(result->states);
  }
  EXPECT_GT(states.loads_filling_a_bitmap_word, 0u);
  EXPECT_GT(states.images_crossing_a_page, 0u);
  EXPECT_GT(states.frees_leaving_a_hole, 0u);
  EXPECT_GT(states.frees_deferred_cpu_inside_directly, 0u);
  EXPECT_GT(states.frees_deferred_cpu_inside_by_tail_call, 0u);
  EXPECT_GT(states.frees_deferred_cpu_inside_by_local_call, 0u);
  EXPECT_GT(states.frees_deferred_cpu_inside_nested_in_interrupt, 0u);
}

}  // namespace
}  // namespace bpfdiff::fuzz
