// The A64 encoders against an independent assembler: every case of
// a64_cross_check_cases.cc is assembled by llvm-mc in one invocation and each
// of our words must equal llvm-mc's encoding of the same syntax.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "jit/a64/encoder.h"
#include "tests/jit/a64_cross_check_cases.h"
#include "tests/jit/llvm_mc.h"

namespace bpfdiff::a64::testing {
namespace {

EncoderClass ClassAt(unsigned i) { return static_cast<EncoderClass>(i); }

TEST(a64_encoding, MatchesLlvmMc) {
  const std::vector<CrossCheckCase> cases = CrossCheckCases();
  std::vector<std::string> lines;
  lines.reserve(cases.size());
  for (const CrossCheckCase& c : cases) lines.push_back(c.syntax);

  Result<std::vector<Assembled>> assembled = AssembleWithLlvmMc(lines);
  ASSERT_TRUE(assembled.ok()) << assembled.message();

  std::map<EncoderClass, int> checked;
  int mismatches = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const CrossCheckCase& c = cases[i];
    const Assembled& reference = (*assembled)[i];
    const std::string_view name = EncoderClassName(c.encoder_class);
    if (!reference.word) {
      ADD_FAILURE() << name << ": llvm-mc rejected `" << c.syntax << "`: " << reference.error;
      ++mismatches;
      continue;
    }
    if (*reference.word != c.word) {
      ADD_FAILURE() << fmt::format("{}: `{}`: ours {:#010x}, llvm-mc {:#010x}", name, c.syntax,
                                   c.word, *reference.word);
      ++mismatches;
      continue;
    }
    ++checked[c.encoder_class];
  }

  std::string summary = fmt::format("{} cases checked against `{}`; classes covered:\n",
                                    cases.size(), LlvmMcCommand());
  for (unsigned i = 0; i < kNumEncoderClasses; ++i) {
    summary +=
        fmt::format("  {:<30} {:>5} cases\n", EncoderClassName(ClassAt(i)), checked[ClassAt(i)]);
  }
  std::cout << summary;
  EXPECT_EQ(mismatches, 0);
}

// Every class of the EncoderClass registry has a name and cross-check cases.
TEST(a64_encoding, EveryEncoderClassHasCrossCheckCases) {
  std::map<EncoderClass, int> cases_per_class;
  for (const CrossCheckCase& c : CrossCheckCases()) ++cases_per_class[c.encoder_class];
  for (unsigned i = 0; i < kNumEncoderClasses; ++i) {
    EXPECT_NE(EncoderClassName(ClassAt(i)), "?") << "class " << i << " has no name";
    EXPECT_GT(cases_per_class[ClassAt(i)], 0)
        << EncoderClassName(ClassAt(i)) << " has no llvm-mc cross-check cases";
  }
}

// Every encoder function in encoder.h (a top-level `constexpr uint32_t
// Name(`) is in the registry, and every registry entry is such a function:
// adding an encoder without a cross-check fails here.
TEST(a64_encoding, EveryEncoderInTheHeaderIsRegistered) {
  const std::string path = std::string(BPFDIFF_SOURCE_DIR) + "/jit/a64/encoder.h";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();

  std::set<std::string> in_header;
  const std::regex encoder(R"(\nconstexpr uint32_t (\w+)\()");
  for (std::sregex_iterator it(header.begin(), header.end(), encoder), end; it != end; ++it) {
    in_header.insert((*it)[1].str());
  }
  std::set<std::string> registered;
  for (unsigned i = 0; i < kNumEncoderClasses; ++i) {
    registered.insert(std::string(EncoderClassName(ClassAt(i))));
  }
  for (const std::string& name : in_header) {
    EXPECT_TRUE(registered.contains(name))
        << name << " is an encoder in encoder.h but not in EncoderClass, so it has no cross-check";
  }
  for (const std::string& name : registered) {
    EXPECT_TRUE(in_header.contains(name)) << name << " is registered but not defined in encoder.h";
  }
  EXPECT_EQ(in_header.size(), kNumEncoderClasses);
}

}  // namespace
}  // namespace bpfdiff::a64::testing
