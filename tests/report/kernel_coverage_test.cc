// The kernel tree's coverage from llvm-cov's export with its functions:
// the tree's files least covered first, the functions never run with their
// reasons, and the errors a wrong file gives.
#include "report/kernel_coverage.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

bool Contains(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

UncoveredReasons FixtureReasons() {
  auto reasons = LoadUncoveredReasons(Fixture("uncovered.txt"));
  EXPECT_TRUE(reasons.ok()) << (reasons.ok() ? "" : reasons.message());
  return reasons.ok() ? std::move(reasons).value() : UncoveredReasons{};
}

TEST(KernelCoverage, KeepsTheTreesFilesLeastCoveredFirstWithTheirCounts) {
  auto coverage = LoadKernelCoverage(Fixture("kernel_coverage.json"), "/tree", {});
  ASSERT_TRUE(coverage) << coverage.message();
  EXPECT_EQ(coverage->tree, "/tree");
  // kernelsrc/services.c is a shim of the checkout, not a file of the tree.
  ASSERT_EQ(coverage->files.size(), 2u);
  EXPECT_EQ(coverage->files[0].path, "arch/arm64/lib/insn.c") << "least covered first, the path normalized";
  EXPECT_EQ(coverage->files[0].counts.lines, 200u);
  EXPECT_EQ(coverage->files[0].counts.lines_covered, 100u);
  EXPECT_EQ(coverage->files[0].counts.branches_covered, 10u);
  EXPECT_EQ(coverage->files[0].counts.functions, 2u);
  EXPECT_EQ(coverage->files[0].counts.functions_covered, 1u);
  EXPECT_EQ(coverage->files[1].path, "arch/arm64/net/bpf_jit_comp.c");
  EXPECT_NEAR(*coverage->files[1].counts.LinePercent(), 80.0, 1e-9);
  EXPECT_NEAR(*coverage->files[1].counts.BranchPercent(), 60.0, 1e-9);
}

TEST(KernelCoverage, NamesTheFunctionsNeverRunByLineWithTheirReasons) {
  auto coverage = LoadKernelCoverage(Fixture("kernel_coverage.json"), "/tree", FixtureReasons());
  ASSERT_TRUE(coverage) << coverage.message();
  ASSERT_EQ(coverage->files.size(), 2u);
  const auto& insn = coverage->files[0].never_run;
  ASSERT_EQ(insn.size(), 1u);
  EXPECT_EQ(insn[0].name, "aarch64_insn_gen_dsb") << "llvm-cov's 'file:' prefix of a static function goes";
  EXPECT_EQ(insn[0].line, 1521u);
  EXPECT_EQ(insn[0].reason, "only build_bhb_mitigation calls it: see there") << "trimmed, its own colons kept";
  // emit and build_insn ran (build_insn in one of the two binaries that
  // hold it); the header's and the shim's functions are not the tree's files'.
  const auto& jit = coverage->files[1].never_run;
  ASSERT_EQ(jit.size(), 2u);
  EXPECT_EQ(jit[0].name, "bpf_arch_text_invalidate") << "by line, a full path prefix stripped too";
  EXPECT_EQ(jit[0].line, 251u);
  EXPECT_EQ(jit[0].reason, "") << "no reason recorded";
  EXPECT_EQ(jit[1].name, "build_bhb_mitigation");
  EXPECT_EQ(jit[1].line, 867u) << "the first region's line, not a macro expansion's";
  EXPECT_EQ(jit[1].reason, "only for classic BPF from an unprivileged loader");
  EXPECT_EQ(coverage->reasons_not_needed, std::vector<std::string>{"emit"}) << "a reason for a function that ran";
}

TEST(KernelCoverage, AnotherTreeOrASummaryOnlyExportIsAnErrorNamingTheFile) {
  auto elsewhere = LoadKernelCoverage(Fixture("kernel_coverage.json"), "/elsewhere", {});
  ASSERT_FALSE(elsewhere);
  EXPECT_TRUE(Contains(elsewhere.message(), "kernel_coverage.json")) << elsewhere.message();
  EXPECT_TRUE(Contains(elsewhere.message(), "/elsewhere")) << elsewhere.message();

  auto no_tree = LoadKernelCoverage(Fixture("kernel_coverage.json"), "", {});
  ASSERT_FALSE(no_tree);
  EXPECT_TRUE(Contains(no_tree.message(), "--kernel-tree")) << no_tree.message();

  auto missing = LoadKernelCoverage(Fixture("no-such-kernel-coverage.json"), "/tree", {});
  ASSERT_FALSE(missing);
  EXPECT_TRUE(Contains(missing.message(), "no-such-kernel-coverage.json")) << missing.message();

  // The source coverage's file: the tree's files would be in it, but no functions.
  auto summary_only = KernelCoverageFromJson(
      Json::parse(R"({"type": "llvm.coverage.json.export", "data": [{"files": [{"filename": "/t/a.c",
          "summary": {"lines": {"count": 1, "covered": 1}, "branches": {"count": 0, "covered": 0},
                      "functions": {"count": 1, "covered": 1}}}]}]})"),
      "/t", {}, "kernel coverage k.json");
  ASSERT_FALSE(summary_only);
  EXPECT_TRUE(Contains(summary_only.message(), "k.json")) << summary_only.message();
  EXPECT_TRUE(Contains(summary_only.message(), "-summary-only")) << summary_only.message();

  auto not_export = LoadKernelCoverage(Fixture("planted_v2.json"), "/tree", {});
  ASSERT_FALSE(not_export);
  EXPECT_TRUE(Contains(not_export.message(), "planted_v2.json")) << not_export.message();
  EXPECT_TRUE(Contains(not_export.message(), "llvm-cov export")) << not_export.message();

  auto bad_function = KernelCoverageFromJson(
      Json::parse(R"({"type": "llvm.coverage.json.export", "data": [{"files": [{"filename": "/t/a.c",
          "summary": {"lines": {"count": 1, "covered": 1}, "branches": {"count": 0, "covered": 0},
                      "functions": {"count": 1, "covered": 1}}}],
          "functions": [{"name": "f", "count": 1, "regions": [], "filenames": ["/t/a.c"]}]}]})"),
      "/t", {}, "kernel coverage k.json");
  ASSERT_FALSE(bad_function);
  EXPECT_TRUE(Contains(bad_function.message(), "k.json: data[0].functions[0] (f)")) << bad_function.message();
}

TEST(UncoveredReasons, ReadsOneReasonPerFunctionAndNamesTheLineOfAMistake) {
  auto reasons = ParseUncoveredReasons("# comment\n\nf: why\n  g :because: of this  \n", "r.txt");
  ASSERT_TRUE(reasons) << reasons.message();
  ASSERT_EQ(reasons->functions.size(), 2u);
  EXPECT_EQ(reasons->functions.at("f"), "why");
  EXPECT_EQ(reasons->functions.at("g"), "because: of this");
  EXPECT_TRUE(reasons->lines.empty());

  auto no_colon = ParseUncoveredReasons("# comment\nf: why\ng because\n", "r.txt");
  ASSERT_FALSE(no_colon);
  EXPECT_TRUE(Contains(no_colon.message(), "r.txt:3")) << no_colon.message();
  auto no_reason = ParseUncoveredReasons("f:   \n", "r.txt");
  ASSERT_FALSE(no_reason);
  EXPECT_TRUE(Contains(no_reason.message(), "r.txt:1")) << no_reason.message();
  auto not_a_name = ParseUncoveredReasons("arch/x.c f: why\n", "r.txt");
  ASSERT_FALSE(not_a_name);
  EXPECT_TRUE(Contains(not_a_name.message(), "r.txt:1")) << not_a_name.message();
  auto twice = ParseUncoveredReasons("f: why\n\nf: why not\n", "r.txt");
  ASSERT_FALSE(twice);
  EXPECT_TRUE(Contains(twice.message(), "r.txt:3")) << twice.message();
  EXPECT_TRUE(Contains(twice.message(), "line 1")) << twice.message();

  auto missing = LoadUncoveredReasons(Fixture("no-such-reasons.txt"));
  ASSERT_FALSE(missing);
  EXPECT_TRUE(Contains(missing.message(), "no-such-reasons.txt")) << missing.message();
}

// The nightly reads kernelsrc/uncovered.txt; a mistake in it would leave
// every reason out of the report, found only by reading it.
TEST(UncoveredReasons, TheShippedFileReads) {
  auto reasons = LoadUncoveredReasons(BPFDIFF_SHIPPED_REASONS);
  ASSERT_TRUE(reasons) << reasons.message();
  EXPECT_FALSE(reasons->functions.empty());
  EXPECT_FALSE(reasons->lines.empty());
}

TEST(UncoveredReasons, ReadsReasonsForLinesByAFragmentOfTheirCode) {
  auto reasons = ParseUncoveredReasons(
      "f \"pr_err(\": a self-check: never\nf: never run\ng\"return -1;\" : why: this\nf \"x\": other\n", "r.txt");
  ASSERT_TRUE(reasons) << reasons.message();
  EXPECT_EQ(reasons->functions.at("f"), "never run") << "a function's reason and its lines' are apart";
  ASSERT_EQ(reasons->lines.size(), 3u);
  EXPECT_EQ(reasons->lines[0].function, "f");
  EXPECT_EQ(reasons->lines[0].fragment, "pr_err(") << "the text between the quotes, as it is";
  EXPECT_EQ(reasons->lines[0].reason, "a self-check: never");
  EXPECT_EQ(reasons->lines[1].function, "g");
  EXPECT_EQ(reasons->lines[1].fragment, "return -1;");
  EXPECT_EQ(reasons->lines[1].reason, "why: this");

  for (const char* mistake : {"f \"unclosed: why\n", "f \"\": an empty fragment\n", "f \"x\" why\n",
                              "f \"x\":\n", "f g: two names\n"}) {
    auto refused = ParseUncoveredReasons(std::string("# one\n") + mistake, "r.txt");
    ASSERT_FALSE(refused) << mistake;
    EXPECT_TRUE(Contains(refused.message(), "r.txt:2")) << refused.message();
    EXPECT_TRUE(Contains(refused.message(), "fragment")) << "says what is expected: " << refused.message();
  }
  auto twice = ParseUncoveredReasons("f \"x\": why\nf \"x\": why not\n", "r.txt");
  ASSERT_FALSE(twice);
  EXPECT_TRUE(Contains(twice.message(), "r.txt:2")) << twice.message();
  EXPECT_TRUE(Contains(twice.message(), "f \"x\"")) << twice.message();
}

// A file of the tree with a function that runs (f: lines 4 and 7-9 never
// run) and one that never does (g), as llvm-cov exports them.
constexpr std::string_view kSource =
    "int f(int x)\n"            // 1
    "{\n"                       // 2
    "\tif (x)\n"                // 3
    "\t\treturn error_path();\n" // 4
    "\ty();\n"                  // 5
    "\tif (z) {\n"              // 6
    "\t\tpr_err(\"JIT bug\");\n"  // 7
    "\t\treturn -1;\n"           // 8
    "\t}\n"                     // 9
    "\treturn 0;\n"             // 10
    "}\n"                       // 11
    "void g(void)\n"            // 12
    "{ h(); }\n";               // 13

Json ExportOf(const std::filesystem::path& tree) {
  const std::string file = (tree / "arch/a.c").string();
  Json json = Json::parse(R"({"type": "llvm.coverage.json.export", "data": [{"files": [{
      "segments": [[1, 13, 5, true, true, false], [3, 9, 0, true, true, true], [4, 5, 0, true, true, false],
                   [4, 27, 5, true, false, false], [6, 10, 0, true, true, false], [9, 2, 5, true, false, false],
                   [11, 2, 0, false, false, false], [12, 13, 0, true, true, false], [13, 9, 0, false, false, false]],
      "summary": {"lines": {"count": 13, "covered": 7}, "branches": {"count": 4, "covered": 2},
                  "functions": {"count": 2, "covered": 1}}}],
    "functions": [{"name": "f", "count": 5, "regions": [[1, 13, 11, 2, 5, 0, 0, 0]], "filenames": []},
                  {"name": "g", "count": 0, "regions": [[12, 13, 13, 9, 0, 0, 0, 0]], "filenames": []}]}]})");
  json["data"][0]["files"][0]["filename"] = file;
  for (Json& function : json["data"][0]["functions"]) function["filenames"].push_back(file);
  return json;
}

TEST(KernelCoverage, NamesTheLinesNeverRunInFunctionsThatRunWithTheirCodeAndReasons) {
  const std::filesystem::path tree = ScratchPath("tree-with-source");
  std::filesystem::create_directories(tree / "arch");
  {
    std::ofstream(tree / "arch/a.c") << kSource;
  }
  auto reasons = ParseUncoveredReasons(
      "g: never\nf \"int f(\": too far up to guard either\nf \"if (z)\": z is never set\n"
      "f \"JIT bug\": a self-check\nf \"gone()\": code since changed\nf \"if (x)\": x is never set\n",
      "r.txt");
  ASSERT_TRUE(reasons) << reasons.message();
  auto coverage = KernelCoverageFromJson(ExportOf(tree), tree, *reasons, "k.json");
  ASSERT_TRUE(coverage) << coverage.message();
  ASSERT_EQ(coverage->files.size(), 1u);
  const KernelFileCoverage& file = coverage->files[0];
  ASSERT_EQ(file.never_run.size(), 1u);
  EXPECT_EQ(file.never_run[0].name, "g");
  // g's lines are its function's reason, not stretches of their own.
  ASSERT_EQ(file.uncovered.size(), 2u);
  EXPECT_EQ(file.uncovered[0].function, "f");
  EXPECT_EQ(file.uncovered[0].first_line, 4u) << "the line that starts the region never run, not the `if` before it";
  EXPECT_EQ(file.uncovered[0].last_line, 4u);
  EXPECT_EQ(file.uncovered[0].text, "return error_path();");
  EXPECT_EQ(file.uncovered[0].reason, "x is never set") << "the line before the stretch, its guard, holds it";
  EXPECT_EQ(file.uncovered[0].guard_line, 2u);
  EXPECT_EQ(file.uncovered[1].first_line, 7u) << "a line that ran (5, 6) ends a stretch";
  EXPECT_EQ(file.uncovered[1].last_line, 9u) << "the closing brace too, as llvm-cov counts it";
  EXPECT_EQ(file.uncovered[1].lines, 3u);
  EXPECT_EQ(file.uncovered[1].text, "pr_err(\"JIT bug\");");
  EXPECT_EQ(file.uncovered[1].reason, "a self-check") << "a fragment of the stretch before one of its guard";
  EXPECT_EQ(file.uncovered[1].guard_line, 5u);
  EXPECT_EQ(file.UncoveredLines(), 4u);
  EXPECT_EQ(file.UncoveredLinesExplained(), 4u);
  EXPECT_EQ(file.source_error, "");
  EXPECT_EQ(coverage->reasons_not_needed, (std::vector<std::string>{"f \"int f(\"", "f \"if (z)\"", "f \"gone()\""}))
      << "fragments no line never run holds, nor its guard; and one a stretch's own fragment preceded";

  // Without the tree's source: the stretches stay, and the report says why
  // they have no reasons.
  std::filesystem::remove(tree / "arch/a.c");
  auto no_source = KernelCoverageFromJson(ExportOf(tree), tree, *reasons, "k.json");
  ASSERT_TRUE(no_source) << no_source.message();
  ASSERT_EQ(no_source->files[0].uncovered.size(), 2u);
  EXPECT_EQ(no_source->files[0].uncovered[1].reason, "");
  EXPECT_TRUE(Contains(no_source->files[0].source_error, "arch/a.c")) << no_source->files[0].source_error;
}

TEST(KernelCoverage, LinksAFileAndALineOfLlvmCovsView) {
  EXPECT_EQ(LineViewLink("coverage/html/index.html", "/tree", "arch/arm64/lib/insn.c"),
            "coverage/html/coverage/tree/arch/arm64/lib/insn.c.html");
  EXPECT_EQ(LineViewLink("coverage/html/index.html", "/tree/", "arch/arm64/lib/insn.c", 1521),
            "coverage/html/coverage/tree/arch/arm64/lib/insn.c.html#L1521");
  EXPECT_EQ(LineViewLink("", "/tree", "arch/arm64/lib/insn.c"), "") << "no view, no link";
  EXPECT_EQ(LineViewLink("https://ci/coverage/", "/tree", "a.c"), "") << "not llvm-cov's index";
}

TEST(KernelCoverage, AnInputThatDoesNotLoadIsLeftOutAndNamed) {
  ReportInputs inputs;
  inputs.conformance = Fixture("conformance.json");
  inputs.kernel_coverage = Fixture("kernel_coverage.json");
  inputs.kernel_tree = "/tree";
  inputs.uncovered_reasons = Fixture("no-such-reasons.txt");
  inputs.coverage_html = "coverage/html/index.html";
  auto model = LoadReportInputs(inputs);
  ASSERT_TRUE(model) << model.message();
  // Reasons that do not load leave the measurement in, without reasons.
  ASSERT_TRUE(model->kernel_coverage);
  EXPECT_EQ(model->kernel_coverage->html, "coverage/html/index.html");
  EXPECT_EQ(model->kernel_coverage->files[1].never_run[1].reason, "");
  ASSERT_EQ(model->inputs_left_out.size(), 1u);
  EXPECT_TRUE(Contains(model->inputs_left_out[0], "no-such-reasons.txt")) << model->inputs_left_out[0];

  inputs.uncovered_reasons = Fixture("uncovered.txt");
  inputs.kernel_coverage = Fixture("no-such-kernel-coverage.json");
  model = LoadReportInputs(inputs);
  ASSERT_TRUE(model) << model.message();
  EXPECT_FALSE(model->kernel_coverage);
  ASSERT_EQ(model->inputs_left_out.size(), 1u);
  EXPECT_TRUE(Contains(model->inputs_left_out[0], "no-such-kernel-coverage.json")) << model->inputs_left_out[0];
}

}  // namespace
}  // namespace bpfdiff::report
