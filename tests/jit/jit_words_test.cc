// jit_words: every code word of every JIT output is an instruction LLVM
// decodes, and none is AARCH64_BREAK_FAULT (the sentinel of an encoder that
// could not encode an operand) or any other trap (udf, brk, hlt). Programs
// come from the shared suite, our vectors and the fuzz seeds, each compiled
// with both atomic lowerings. The words checked are the ones the JIT
// reports (CompiledSubprogram::words) and, to be sure they are the ones
// that run, the RX copy of the image.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "jit/a64/disasm/a64_disassembler.h"
#include "jit/text_patching.h"
#include "tests/jit/jit_test_support.h"

namespace bpfdiff {
namespace {

using jit_testing::NamedCase;

struct WordCount {
  size_t cases = 0;
  size_t programs = 0;       // programs compiled (per lowering)
  size_t subprograms = 0;
  size_t words = 0;
  size_t not_loaded = 0;     // cases the load step rejects (nothing to JIT)
  size_t unsupported = 0;    // programs the JIT refuses by design (legacy packet access)
};

// What is wrong with a code word, if anything.
std::optional<std::string> WordProblem(const A64Disassembler& disassembler, uint32_t word, uint64_t pc) {
  if (word == jit::kBreakFault) return "AARCH64_BREAK_FAULT";
  const auto text = disassembler.Disassemble(word, pc);
  if (!text) return "LLVM does not decode it";
  if (text->rfind("udf", 0) == 0 || text->rfind("brk", 0) == 0 || text->rfind("hlt", 0) == 0) {
    return "a trap (" + *text + ")";
  }
  return std::nullopt;
}

void CheckCorpus(const std::vector<NamedCase>& cases, WordCount& count) {
  auto sandbox = jit_testing::MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  auto disassembler = A64Disassembler::Create();
  ASSERT_TRUE(disassembler.ok()) << disassembler.message();
  GuestMemory& memory = sandbox->env().memory();

  for (const jit::AtomicLowering lowering : {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc}) {
    jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), jit::JitOptions{lowering, {}});
    const char* lowering_name = lowering == jit::AtomicLowering::kLse ? "lse" : "llsc";
    for (const NamedCase& c : cases) {
      auto loaded = LoadCase(c.source);
      if (!loaded) {
        ++count.not_loaded;
        continue;
      }
      for (size_t p = 0; p < loaded->programs.size(); ++p) {
        auto compiled = jit.Compile(loaded->programs[p].program);
        if (!compiled) {
          // Refused by design: legacy packet access, and (as the kernel's
          // JIT, bpf_jit_supports_insn) an arena atomic without LSE.
          if (compiled.message().find("legacy packet access") != std::string::npos ||
              compiled.message().find("an arena atomic needs the LSE lowering") != std::string::npos) {
            ++count.unsupported;
          } else {
            ADD_FAILURE() << c.name << " program " << p << " (" << lowering_name
                          << "): does not compile: " << compiled.message();
          }
          continue;
        }
        ++count.programs;
        for (const auto& sub : compiled->subprograms) {
          ++count.subprograms;
          ASSERT_EQ(sub.words.size(), sub.code_words);
          const uint8_t* rx = memory.HostPointer(sub.rx_image, 4ull * sub.code_words);
          ASSERT_NE(rx, nullptr);
          for (uint32_t i = 0; i < sub.code_words; ++i) {
            const uint32_t word = sub.words[i];
            const uint64_t pc = sub.rx_image + 4ull * i;
            const std::string where = fmt::format("{} program {} ({}), instruction {}, word {} = 0x{:08x}",
                                                  c.name, p, lowering_name, sub.SlotAt(pc), i, word);
            uint32_t in_rx;
            std::memcpy(&in_rx, rx + 4ull * i, 4);
            EXPECT_EQ(in_rx, word) << where << ": the RX copy differs";
            if (auto problem = WordProblem(*disassembler, word, pc)) ADD_FAILURE() << where << ": " << *problem;
            ++count.words;
          }
        }
        jit.Release(*compiled);
      }
    }
  }
  count.cases += cases.size();
  // Everything was released: only the sandbox's resident program is left.
  const jit::PackAccounting accounting = sandbox->pack().Accounting();
  EXPECT_EQ(accounting.chunks_used, 1u);
  EXPECT_EQ(accounting.live_rw_buffers, 0);
  EXPECT_EQ(accounting.oversize_allocations, 0);
}

void Report(const char* corpus, const WordCount& count) {
  fmt::print("jit_words {}: {} cases, {} programs compiled ({} subprograms, both lowerings), "
             "{} words checked; {} cases rejected by the load step, {} programs unsupported by the JIT\n",
             corpus, count.cases, count.programs, count.subprograms, count.words, count.not_loaded,
             count.unsupported);
}

// The check itself: it must reject what it is there to reject.
TEST(jit_words, CheckRejectsSentinelTrapsAndUnallocatedWords) {
  auto disassembler = A64Disassembler::Create();
  ASSERT_TRUE(disassembler.ok()) << disassembler.message();
  EXPECT_EQ(WordProblem(*disassembler, 0xd4202000, 0), "AARCH64_BREAK_FAULT");
  EXPECT_TRUE(WordProblem(*disassembler, 0xffffffff, 0).has_value());  // unallocated
  EXPECT_TRUE(WordProblem(*disassembler, 0x00000000, 0).has_value());  // udf #0
  EXPECT_TRUE(WordProblem(*disassembler, 0xd4200000, 0).has_value());  // brk #0
  EXPECT_EQ(WordProblem(*disassembler, 0xd503201f, 0), std::nullopt);   // nop
  EXPECT_EQ(WordProblem(*disassembler, 0xf8e00041, 0), std::nullopt);   // ldaddal x0, x1, [x2]
}

TEST(jit_words, SharedSuite) {
  const auto dir = jit_testing::SharedSuiteDir();
  if (!dir) GTEST_SKIP() << "the shared suite is not at " << BPFDIFF_CONFORMANCE_SUITE;
  const auto cases = jit_testing::ReadDataFiles(*dir);
  ASSERT_GT(cases.size(), 100u);
  WordCount count;
  CheckCorpus(cases, count);
  Report("shared suite", count);
  EXPECT_GT(count.programs, 2 * 150u);
}

TEST(jit_words, OwnVectors) {
  const auto cases = jit_testing::ReadDataFiles(jit_testing::OwnVectorsDir());
  ASSERT_GT(cases.size(), 50u);
  WordCount count;
  CheckCorpus(cases, count);
  Report("own vectors", count);
  EXPECT_GT(count.programs, 2 * 50u);
}

TEST(jit_words, FuzzSeeds) {
  const auto cases = jit_testing::ReadFuzzSeeds(jit_testing::FuzzSeedDir());
  ASSERT_GT(cases.size(), 20u);
  WordCount count;
  CheckCorpus(cases, count);
  Report("fuzz seeds", count);
  EXPECT_GT(count.programs, 2 * 20u);
}

}  // namespace
}  // namespace bpfdiff
