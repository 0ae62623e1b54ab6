// The export the other way, checked end to end: bpfdiff's .data vectors,
// written as lib/test_bpf.c entries by `bpfdiff export --format test-bpf`
// and compiled into a copy of the tree's file (test_bpf_export/), run
// through bpfdiff's test_bpf runner as test_bpf.ko would run them.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "exported.h"
#include "harness/test_bpf/runner.h"
#include "kernelsrc/test_bpf/bridge.h"

extern "C" const struct bpfdiff_test_bpf_file* bpfdiff_test_bpf_exported_file(void);

namespace bpfdiff {
namespace {

using kernelsrc::TestBpfFile;

std::string Refused() {
  std::ifstream in(BPFDIFF_EXPORT_DIR "/refused.txt");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TestBpfSummary RunExported(std::string engine, std::string filter = "^bpfdiff: ") {
  const TestBpfFile file = TestBpfFile::Of(bpfdiff_test_bpf_exported_file());
  TestBpfOptions options;
  options.file = &file;
  options.engine = std::move(engine);
  options.filter = std::move(filter);
  std::ostringstream out;
  auto summary = RunTestBpf(options, out);
  EXPECT_TRUE(summary.ok()) << summary.message();
  std::cout << out.str();
  return summary ? *summary : TestBpfSummary{};
}

// Every vector is either exported or refused with its reason, and the
// copy holds what was exported.
TEST(TestBpfExport, EveryVectorIsExportedOrRefusedWithItsReason) {
  const std::string refused = Refused();
  std::cout << "refused:\n" << refused;
  // At 6.12, 23 cases of bpfdiff's 88 vectors (most need maps, helpers or
  // BPF functions, which test_bpf.c has not), and 209 of bpf_conformance's
  // 225 when the build has that suite (12 of the others shift by the
  // operand's width or more).
  EXPECT_GE(BPFDIFF_EXPORTED_CASES, 23) << refused;
  EXPECT_GE(BPFDIFF_EXPORTED_TAIL_CALLS, 3);
  const TestBpfFile file = TestBpfFile::Of(bpfdiff_test_bpf_exported_file());
  auto tree = TestBpfFile::Open();
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(file.Count(kernelsrc::TestBpfSuite::kCases),
            tree->Count(kernelsrc::TestBpfSuite::kCases) + BPFDIFF_EXPORTED_CASES);
  EXPECT_EQ(file.Count(kernelsrc::TestBpfSuite::kTailCalls),
            tree->Count(kernelsrc::TestBpfSuite::kTailCalls) + BPFDIFF_EXPORTED_TAIL_CALLS);
  // One line per refused vector; an exported one is one case or one group.
  EXPECT_EQ(Lines(refused) + BPFDIFF_EXPORTED_CASES + BPFDIFF_EXPORTED_TAIL_CALL_GROUPS,
            static_cast<size_t>(BPFDIFF_EXPORT_VECTORS));
}

using Failure = std::tuple<std::string, std::string, std::string>;  // suite, name, engine

std::set<Failure> Failures(const TestBpfSummary& summary) {
  std::set<Failure> failures;
  for (const auto& f : summary.failures) failures.insert({f.suite, f.name, f.engine});
  return failures;
}

// Every entry ran on every engine; the kernel's interpreter leaves out what
// only the kernel's verifier would stop (alu-divmod-zero's division by the
// constant 0), and runs the rest.
void ExpectEveryEntryRan(const TestBpfSummary& summary) {
  EXPECT_TRUE(summary.left_out.empty());
  for (const auto& tally : summary.cases) {
    EXPECT_EQ(tally.run + tally.not_run, BPFDIFF_EXPORTED_CASES) << tally.engine;
    EXPECT_EQ(tally.not_run, tally.engine == "kernel-interp" ? 1 : 0) << tally.engine;
  }
  for (const auto& tally : summary.tail_calls) EXPECT_EQ(tally.run, BPFDIFF_EXPORTED_TAIL_CALLS) << tally.engine;
}

// On bpfdiff's JIT, every entry gives the interpreter's result.
TEST(TestBpfExport, EveryEntryPassesOnTheInterpreterAndBpfdiffsJit) {
  const TestBpfSummary summary = RunExported("all");
  ExpectEveryEntryRan(summary);
  EXPECT_EQ(Failures(summary), std::set<Failure>{});
}

// On the kernel's JIT of 6.12, the entries fail exactly where the
// kernel's findings are (kernelsrc/SHIMS.md, "Findings in the kernel's
// code"): the LL/SC fetch atomic whose src is its address, on the
// lowerings without LSE, and the tail call to an empty slot that the JIT
// does not count, on every engine that JITs a tail call.
TEST(TestBpfExport, OnTheKernelsJitTheEntriesOfItsFindingsFail) {
  const TestBpfSummary summary = RunExported("kernel");
  ExpectEveryEntryRan(summary);
  std::set<Failure> expected;
  for (const char* engine : {"kernel-jit-llsc", "kernel-jit-llsc-blind"}) {
    expected.insert({"test_bpf", "bpfdiff: atomic-fetch-src-is-dst", engine});
  }
  for (const char* engine : {"kernel-jit", "kernel-jit-llsc", "kernel-jit-blind", "kernel-jit-llsc-blind"}) {
    expected.insert({"test_tail_calls", "bpfdiff: tailcall-count-rules", engine});
  }
  EXPECT_EQ(Failures(summary), expected);
}

// The loop past the first MiB of code, built by its fill helper: the
// kernel's JIT refuses it (test_bpf then runs it interpreted and counts it
// not JIT'ed, as without CONFIG_BPF_JIT_ALWAYS_ON), bpfdiff's compiles it.
TEST(TestBpfExport, TheKernelsJitRefusesTheLoopPastTheFirstMibOfCode) {
  const std::string only = "^bpfdiff: loop-past-first-mib$";
  const TestBpfSummary kernel = RunExported("interp,kernel-jit,kernel-jit-llsc", only);
  ASSERT_EQ(kernel.cases.size(), 3u);
  for (const auto& tally : kernel.cases) {
    EXPECT_EQ(tally.run, 1) << tally.engine;
    EXPECT_EQ(tally.passed, 1) << tally.engine;
    EXPECT_EQ(tally.jited, 0) << tally.engine;
  }
  const TestBpfSummary model = RunExported("interp,jit", only);
  ASSERT_EQ(model.cases.size(), 2u);
  EXPECT_EQ(model.cases[1].jited, 1);
  EXPECT_EQ(model.cases[1].passed, 1);
}

}  // namespace
}  // namespace bpfdiff
