// The kernel trees, what the report shows first: each tree's directory
// loaded, its failures failing the night, and the tree rows ahead of the
// model's conformance in the text and the HTML.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "report/report_writers.h"
#include "report/known_findings_doc.h"
#include "report/tree_fuzzing.h"
#include "support/files.h"
#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

// A tree's directory as the nightly writes it, its conformance the
// fixture's (one failure among four tests).
std::filesystem::path TreeDirectory(std::string_view name, std::string_view tree_line, bool known) {
  const std::filesystem::path dir = ScratchPath(name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tree.txt") << tree_line << "\n";
  std::filesystem::copy_file(Fixture("conformance.json"), dir / "conformance.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(Fixture("test_bpf.json"), dir / "test-bpf.json",
                             std::filesystem::copy_options::overwrite_existing);
  if (known) std::ofstream(dir / "known.txt") << "atomic-fetch-src-is-dst\n\ntailcall-count-rules\n";
  return dir;
}

TEST(KernelTrees, ADirectoryLoadsWithItsTreeConformanceTestBpfAndKnownFindings) {
  auto run = LoadKernelTreeRun(TreeDirectory("tree-a", "linux 6.1.192 at /src/linux-6.1", true));
  ASSERT_TRUE(run) << run.message();
  EXPECT_EQ(run->tree, "linux 6.1.192 at /src/linux-6.1");
  EXPECT_EQ(run->conformance.failed, 1);
  ASSERT_TRUE(run->test_bpf);
  EXPECT_EQ(run->known_findings, (std::vector<std::string>{"atomic-fetch-src-is-dst", "tailcall-count-rules"}));
  EXPECT_FALSE(run->Passed());
}

TEST(KernelTrees, AMissingFileIsNamed) {
  const std::filesystem::path dir = ScratchPath("tree-empty");
  std::filesystem::create_directories(dir);
  auto run = LoadKernelTreeRun(dir);
  ASSERT_FALSE(run);
  EXPECT_NE(run.message().find("tree.txt"), std::string::npos) << run.message();
  std::ofstream(dir / "tree.txt") << "linux 6.1.192 at /src\n";
  run = LoadKernelTreeRun(dir);
  ASSERT_FALSE(run);
  EXPECT_NE(run.message().find("conformance.json"), std::string::npos) << run.message();
}

TEST(KernelTrees, TheyComeFirstAndTheirFailuresFailTheNight) {
  ReportInputs inputs;
  inputs.conformance = Fixture("conformance.json");
  inputs.kernel_trees = {TreeDirectory("tree-b", "linux 6.12.118 at /src/linux-6.12", false),
                         TreeDirectory("tree-c", "linux 6.1.192 at /src/linux-6.1", true)};
  auto model = LoadReportInputs(inputs);
  ASSERT_TRUE(model) << model.message();
  ASSERT_EQ(model->kernel_trees.size(), 2u);
  EXPECT_FALSE(model->Passed());

  const std::string text = TextReport(*model);
  const size_t trees = text.find("kernel trees (2):");
  const size_t model_part = text.find("bpfdiff's model (the reference):");
  ASSERT_NE(trees, std::string::npos) << text;
  ASSERT_NE(model_part, std::string::npos) << text;
  EXPECT_LT(trees, model_part);
  EXPECT_LT(text.find("linux 6.12.118"), text.find("linux 6.1.192"));
  EXPECT_NE(text.find("known findings, left out of the conformance above (kernelsrc/SHIMS.md): "
                      "atomic-fetch-src-is-dst, tailcall-count-rules"),
            std::string::npos)
      << text;

  const std::string html = HtmlReport(*model);
  const size_t table = html.find("id=\"kernel-trees\"");
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(table, html.find("bpfdiff's model, the reference"));
  EXPECT_NE(html.find("linux 6.1.192 at /src/linux-6.1"), std::string::npos);
}

// The night's fuzzing, per tree: the build's own tree's known findings are
// named bare, another tree's with its version; a finding's kind names the
// tree it was found on unless it is the build's own.
TEST(KernelTrees, EachTreeGetsTheFuzzingOfItsOwnEngines) {
  FuzzTarget kernel{"diff_fuzzer.kernel", std::nullopt, FuzzStats{}};
  kernel.stats->counters = {{"compared", 100}, {"compared by linux 6.12.118", 90},
                            {"known finding atomic-fetch-src-is-dst", 7}};
  FuzzTarget trees{"diff_fuzzer.trees", FuzzRun{}, FuzzStats{}};
  trees.stats->counters = {{"compared by linux 6.12.118", 40},
                           {"compared by linux 6.1.192", 38},
                           {"known finding atomic-fetch-src-is-dst", 3},
                           {"known finding tailcall-count-rules", 2},
                           {"known finding atomic-fetch-src-is-dst@6.1.192", 5}};
  trees.run->target = "diff_fuzzer.trees";
  trees.run->result = "finding";
  trees.run->finding_kind = "culprit probe ldxw (jit) on linux 6.1.192";
  const std::vector<FuzzTarget> fuzz{kernel, trees};

  const TreeFuzzing own = FuzzingOfTree("6.12.118", true, fuzz);
  EXPECT_EQ(own.compared, 130u);
  EXPECT_EQ(own.known, (std::vector<std::pair<std::string, uint64_t>>{{"atomic-fetch-src-is-dst", 10},
                                                                     {"tailcall-count-rules", 2}}));
  EXPECT_TRUE(own.findings.empty());
  const TreeFuzzing other = FuzzingOfTree("6.1.192", false, fuzz);
  EXPECT_EQ(other.compared, 38u);
  EXPECT_EQ(other.known, (std::vector<std::pair<std::string, uint64_t>>{{"atomic-fetch-src-is-dst", 5}}));
  EXPECT_EQ(other.findings, (std::vector<std::string>{"culprit probe ldxw (jit) on linux 6.1.192"}));
  EXPECT_TRUE(FuzzingOfTree("6.6.1", false, fuzz).empty());
  EXPECT_EQ(TreeVersion("linux 6.1.192 at /src/linux-6.1"), "6.1.192");
  EXPECT_EQ(TreeVersion("not built: no Linux tree"), "");

  ReportInputs inputs;
  inputs.conformance = Fixture("conformance.json");
  inputs.kernel_trees = {TreeDirectory("tree-d", "linux 6.12.118 at /src/linux-6.12", false),
                         TreeDirectory("tree-e", "linux 6.1.192 at /src/linux-6.1", true)};
  auto model = LoadReportInputs(inputs);
  ASSERT_TRUE(model) << model.message();
  model->fuzz = fuzz;
  const std::string text = TextReport(*model);
  EXPECT_NE(text.find("fuzzing     38 programs compared by its engines; known findings met: atomic-fetch-src-is-dst 5; "
                      "findings: culprit probe ldxw (jit) on linux 6.1.192"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("fuzzing     130 programs"), text.find("fuzzing     38 programs"));
  const std::string html = HtmlReport(*model);
  EXPECT_NE(html.find("fuzzing compared 38 programs on its engines"), std::string::npos);
}

// What SHIMS.md says of a known finding: the bullet naming its reproducer,
// its title, and each commit it cites once; the real SHIMS.md documents
// every known finding of kernelsrc/known_findings.txt.
TEST(KernelTrees, AKnownFindingsBulletGivesItsTitleReproducerAndCommits) {
  constexpr std::string_view kDoc =
      "# x\n\n## Findings in the kernel's code\n\n"
      "- **One finding** (6.12): see\n  `tests/conformance/one.data`. Fixed by 3733f4be2870\n"
      "  \"title\" (lore `20260220062959.195101-1`), backport of 3733f4be2870.\n"
      "- **Two\n  lines** `tests/conformance/two.data`, Fixes: 339af577ec05.\n\n"
      "## Another section\n\n- **Three** `tests/conformance/three.data`\n";
  const auto one = FindKnownFindingDoc(kDoc, "one");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->title, "One finding");
  EXPECT_EQ(one->reproducer, "tests/conformance/one.data");
  EXPECT_EQ(one->commits, (std::vector<std::string>{"3733f4be2870"}));
  const auto two = FindKnownFindingDoc(kDoc, "two");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->title, "Two lines");
  EXPECT_EQ(two->commits, (std::vector<std::string>{"339af577ec05"}));
  EXPECT_FALSE(FindKnownFindingDoc(kDoc, "three"));  // another section
  EXPECT_FALSE(FindKnownFindingDoc(kDoc, "on"));

  auto shims = ReadTextFile(std::string(BPFDIFF_SOURCE_DIR) + "/kernelsrc/SHIMS.md");
  ASSERT_TRUE(shims) << shims.message();
  auto known = ReadTextFile(std::string(BPFDIFF_SOURCE_DIR) + "/kernelsrc/known_findings.txt");
  ASSERT_TRUE(known) << known.message();
  size_t documented = 0;
  std::istringstream lines(*known);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(1, line.find('[') - 1);  // ^name[.]data$
    const auto doc = FindKnownFindingDoc(*shims, name);
    ASSERT_TRUE(doc) << name;
    EXPECT_EQ(doc->reproducer, "tests/conformance/" + name + ".data");
    EXPECT_FALSE(doc->title.empty()) << name;
    ++documented;
  }
  EXPECT_GE(documented, 3u);
}

// known.json, the known findings' reproducers run on a tree: which of its
// kernel engines reproduce each (the reference's results do not count).
TEST(KernelTrees, KnownJsonSaysWhichKnownFindingsReproduceOnTheTree) {
  const std::filesystem::path dir = TreeDirectory("tree-known", "linux 6.1.192 at /src/linux-6.1", true);
  std::ofstream(dir / "known.json") << R"({"format": "bpfdiff-conformance-1", "engines": ["interp", "kernel-jit@6.1.192", "kernel-jit-llsc@6.1.192"],
    "tests": [
      {"name": "atomic-fetch-src-is-dst.data", "suite": "s", "status": "fail", "reason": "r",
       "engines": [{"engine": "interp", "status": "pass"}, {"engine": "kernel-jit@6.1.192", "status": "pass"},
                   {"engine": "kernel-jit-llsc@6.1.192", "status": "fail", "reason": "fault"}]},
      {"name": "tailcall-count-rules.data", "suite": "s", "status": "pass",
       "engines": [{"engine": "interp", "status": "pass"}, {"engine": "kernel-jit@6.1.192", "status": "pass"},
                   {"engine": "kernel-jit-llsc@6.1.192", "status": "pass"}]},
      {"name": "arena-st-offsets.data", "suite": "s", "status": "pass",
       "engines": [{"engine": "interp", "status": "pass"}, {"engine": "kernel-jit@6.1.192", "status": "skip"},
                   {"engine": "kernel-jit-llsc@6.1.192", "status": "skip"}]}]})";
  auto run = LoadKernelTreeRun(dir);
  ASSERT_TRUE(run) << run.message();
  ASSERT_TRUE(run->known_runs);
  EXPECT_EQ(run->KnownStatus("atomic-fetch-src-is-dst"), "reproduces on kernel-jit-llsc@6.1.192");
  EXPECT_EQ(run->KnownStatus("tailcall-count-rules"), "does not reproduce (passed on every kernel engine that ran it)");
  EXPECT_EQ(run->KnownStatus("arena-st-offsets"), "not run (skipped by every kernel engine: the tree refuses it)");
}

TEST(KernelTrees, ATreeThatDoesNotLoadIsLeftOutAndNamed) {
  ReportInputs inputs;
  inputs.conformance = Fixture("conformance.json");
  inputs.kernel_trees = {ScratchPath("no-such-tree")};
  auto model = LoadReportInputs(inputs);
  ASSERT_TRUE(model) << model.message();
  EXPECT_TRUE(model->kernel_trees.empty());
  ASSERT_EQ(model->inputs_left_out.size(), 1u);
  EXPECT_NE(model->inputs_left_out.front().find("no-such-tree"), std::string::npos);
}

}  // namespace
}  // namespace bpfdiff::report
