// The culprit the lockstep localization names for each planted JIT bug of
// the catalog that diff_fuzzer must catch, on the bug's shipped reproducer
// (tests/planted/reproducers/<bug>, the input the planted-bug gate
// replays): the form of an instruction the bug miscompiles. A JIT refusal
// has no culprit; it keeps a kind of its own.
//
// The expectations are this file's, not the catalog's: they say which
// lowerings each bug's code touches (jit/*.cc, under its JitBugs flag).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/diff/triage.h"
#include "fuzz/findings/culprit_form.h"
#include "fuzz/findings/divergence_kind.h"
#include "harness/planted/planted_bugs.h"

namespace bpfdiff::fuzz {
namespace {

// Bug -> the culprit forms its code miscompiles ("" for a refusal: no
// culprit, the compilation kind).
const std::map<std::string_view, std::set<std::string_view>>& Expected() {
  static const std::map<std::string_view, std::set<std::string_view>> expected = {
      {"alu32-add-no-zext", {"add32"}},
      {"alu32-identity-no-zext", {"add32", "sub32", "or32", "and32", "xor32", "mul32", "div32", "lsh32", "rsh32",
                                  "arsh32"}},
      {"movsx32-no-zext", {"movsx32"}},
      {"sdiv32-sign-extended", {"sdiv32", "smod32"}},
      {"le-no-truncation", {"le"}},
      {"bswap32-no-zext", {"bswap"}},
      {"mod32-zero-no-zext", {"mod32"}},
      {"ldx-sign-extended", {"ldx", "probe ldx"}},
      {"helper-return-sign-extended", {"call helper", "callx"}},
      {"logical-imm32-all-ones", {"and32", "or32", "xor32", "jset32"}},
      {"divmod-imm1-skipped", {"div", "div32", "mod", "mod32", "sdiv", "sdiv32", "smod", "smod32"}},
      {"sub-imm-intmin", {"sub", "sub32"}},
      {"shift-imm0-full-width", {"rsh", "arsh"}},
      {"ldrsw-offset-as-register", {"ldxs", "probe ldxs"}},
      {"jmp32-jset-64bit", {"jset32"}},
      {"jset-clobbers-dst", {"jset", "jset32"}},
      {"jsigned-imm-32bit", {"jsgt", "jsge", "jslt", "jsle"}},
      {"jump-imm-zero-extended", {"jgt", "jge", "jlt", "jle", "jeq", "jne"}},
      {"extra-pass-grows", {""}},
      {"tail-call-limit-34", {"tail_call"}},
      {"tail-call-index-64bit", {"tail_call"}},
      {"subprogram-fp-unset", {"call local"}},
      {"extable-insn-after-load", {"probe ldx", "probe ldxs"}},
      {"extable-fixup-base-register", {"probe ldx", "probe ldxs"}},
      {"cmpxchg32-r0-upper-kept", {"lock cmpxchg32"}},
      {"xchg-as-fetch-add", {"lock xchg", "lock xchg32"}},
      {"llsc-address-overwritten", {"lock fetch add", "lock fetch and", "lock fetch or", "lock fetch xor",
                                    "lock xchg", "lock cmpxchg", "lock fetch add32", "lock fetch and32",
                                    "lock fetch or32", "lock fetch xor32", "lock xchg32", "lock cmpxchg32"}},
  };
  return expected;
}

std::filesystem::path Reproducers() { return std::filesystem::path(BPFDIFF_SOURCE_DIR) / "tests/planted/reproducers"; }

// The reproducer of `bug`: the file whose name is the bug's, with any
// extension.
std::optional<std::filesystem::path> ReproducerOf(std::string_view bug) {
  if (!std::filesystem::is_directory(Reproducers())) return std::nullopt;
  for (const auto& entry : std::filesystem::directory_iterator(Reproducers())) {
    if (entry.path().stem() == bug || entry.path().filename() == bug) return entry.path();
  }
  return std::nullopt;
}

class PlantedCulprits : public ::testing::TestWithParam<std::string_view> {};

TEST_P(PlantedCulprits, TheReproducersCulpritIsAnInstructionTheBugMiscompiles) {
  const std::string_view bug = GetParam();
  const auto expected = Expected().find(bug);
  ASSERT_NE(expected, Expected().end()) << bug << ": a diff_fuzzer bug with no expected culprit in this test";
  const auto path = ReproducerOf(bug);
  ASSERT_TRUE(path) << bug << ": no reproducer in " << Reproducers();
  auto bugs = PlantedBugsNamed(bug);
  ASSERT_TRUE(bugs.ok()) << bugs.message();
  auto harness = DiffHarness::Create(*bugs);
  ASSERT_TRUE(harness.ok()) << harness.message();
  auto source = LoadArtifact(*path);
  ASSERT_TRUE(source.ok()) << source.message();
  const CaseRun run = (*harness)->RunCase(*source, 4);  // as diff_fuzzer runs it
  ASSERT_NE(run.FirstDivergence(), nullptr) << bug << ": the reproducer does not diverge";
  const Localization localization = (*harness)->Localize(run);
  const auto kind = KindOfFirstDivergence(*source, run, &localization);
  ASSERT_TRUE(kind);
  EXPECT_TRUE(expected->second.contains(kind->culprit))
      << bug << ": culprit '" << kind->culprit << "' (" << DescribeKind(*kind) << ")\n"
      << (run.loaded ? DescribeLocalization(localization, *run.loaded) : "");
}

std::vector<std::string_view> DiffFuzzerBugs() {
  std::vector<std::string_view> bugs;
  for (const auto& info : PlantedBugCatalog()) {
    if (info.target == "diff_fuzzer") bugs.push_back(info.name);
  }
  return bugs;
}

INSTANTIATE_TEST_SUITE_P(Catalog, PlantedCulprits, ::testing::ValuesIn(DiffFuzzerBugs()),
                         [](const ::testing::TestParamInfo<std::string_view>& test) {
                           std::string name(test.param);
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace bpfdiff::fuzz
