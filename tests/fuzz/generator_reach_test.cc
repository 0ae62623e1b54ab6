// Which forms of the opcode table the generator reaches: every one is
// written by some structured input of the version that introduced it
// (version 1 all but the per-CPU move and the arena's accesses, which came
// with version 5), every
// one but legacy packet access by versions 2 and later (which leave out what
// the JITs refuse by design), and every one that the newest version writes
// runs to completion on every engine with agreement.
#include <algorithm>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/generator/generator.h"
#include "fuzz/stats/fuzz_stats.h"
#include "isa/opcode_table.h"
#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint64_t kSeed = 0x5eed'0003;

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

const std::vector<std::string> kLegacyPacketAccess = {"ldabsw", "ldindw", "ldabsh", "ldindh", "ldabsb", "ldindb"};

// The forms a format version cannot write: those a later version brought
// (the per-CPU move and the arena's accesses, version 5), and from version 2
// on legacy packet access.
std::vector<std::string> NeverWrittenBy(uint8_t version) {
  std::vector<std::string> never;
  for (const auto& form : isa::AllForms()) {
    const bool legacy = std::find(kLegacyPacketAccess.begin(), kLegacyPacketAccess.end(), form.name) !=
                        kLegacyPacketAccess.end();
    const bool since5 =
        form.name == "addr_percpu" || form.name == "addr_space_cast" || form.name.starts_with("probe32 ");
    const bool since7 = form.name == "lddw func";
    const bool since8 = form.name == "call kfunc";
    if ((since5 && version < 5) || (since7 && version < 7) || (since8 && version < 8) || (legacy && version >= 2)) {
      never.push_back(form.name);
    }
  }
  return never;
}

// How often each form appears in the programs of `inputs` random structured
// inputs of format `version`, counted as FuzzStats::Record counts them: by
// isa::Classify of each instruction as written, an lddw once (not its
// second slot).
std::vector<uint64_t> CountGeneratedForms(std::mt19937_64& random, int inputs, uint8_t version) {
  std::vector<uint64_t> count(isa::AllForms().size(), 0);
  for (int i = 0; i < inputs; ++i) {
    std::vector<uint8_t> input = RandomStructuredInput(random, 0, 64);
    input[0] = version;
    const auto source = DecodeFuzzInput(input);
    if (!source) continue;
    for (const auto& program : source->programs) {
      for (size_t pc = 0; pc < program.size(); ++pc) {
        if (pc > 0 && program[pc - 1].opcode == isa::kOpLddw) continue;
        if (const auto form = isa::Classify(program[pc])) ++count[*form];
      }
    }
  }
  return count;
}

TEST(FuzzGeneratorReach, EveryFormOfTheOpcodeTableIsGenerated) {
  // Decoding only, no engine: 100k inputs take about half a second. The
  // rarest forms (ldabs*, ldind* in version 1: one record kind in 256, and
  // then only 1 time in 32) appear some 50 times each; a form the
  // generator cannot write appears 0 times.
  for (const uint8_t version : {1, 2, 5, 7, 8}) {
    SCOPED_TRACE("format version " + std::to_string(version));
    std::mt19937_64 random(kSeed);
    const std::vector<uint64_t> count = CountGeneratedForms(random, 100'000, version);
    std::vector<std::string> never;
    for (const auto& form : isa::AllForms()) {
      if (count[form.id] == 0) never.push_back(form.name);
    }
    const std::string list = Join(never);
    RecordProperty("forms_never_generated_v" + std::to_string(version), list);
    std::cout << "format version " << int{version} << ": forms never generated: " << list << "\n";
    EXPECT_EQ(never, NeverWrittenBy(version))
        << "the generator never wrote these forms of isa::AllForms(): " << list;
  }
}

TEST(FuzzGeneratorReach, EveryFormButLegacyPacketAccessCompletesOnEveryEngine) {
  // FuzzStats' own account over engine runs: a form "completes" when a run
  // that executed it ended in exit or unwind with every engine agreeing.
  // ldabs/ldind never do: version 2 does not write them, and the JITs
  // refuse them (the kernel's verifier rewrites them).
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  std::mt19937_64 random(kSeed + 1);
  FuzzStats stats("fuzz_test");
  for (int i = 0; i < 3000; ++i) {
    const auto source = DecodeFuzzInput(RandomStructuredInput(random, 0, 64));
    ASSERT_TRUE(source);
    const CaseRun run = harness->RunCase(*source);
    stats.Record(*source, run, harness->executed());

  }
  const std::vector<std::string> missing = stats.MissingForms();
  const std::string list = Join(missing);
  RecordProperty("forms_never_completed", list);
  std::cout << "forms never completed on every engine: " << list << "\n";
  EXPECT_EQ(missing, kLegacyPacketAccess)
      << "forms the generator writes should run to completion, with every engine agreeing, on some input; one "
         "that no longer does is now only not comparable, diverging or in code that never runs";
}

}  // namespace
}  // namespace bpfdiff::fuzz
