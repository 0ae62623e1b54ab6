// The four forms of one report, from the fixtures.
#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "report/report_writers.h"
#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

bool Contains(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

ReportModel ModelWithHistory() {
  ReportModel model = FixtureModel();
  HistoryEntry night;
  night.timestamp = "2024-04-30T03:00:00Z";
  night.failed = 7;
  night.fuzz_inputs = 999;
  night.planted_detected = night.planted_total = 3;
  model.history.push_back(night);
  return model;
}

TEST(TextReport, ShowsCountsPerEngineFailuresOnlyAndEachPart) {
  const std::string text = TextReport(ModelWithHistory());
  EXPECT_TRUE(Contains(text, "FAILED"));
  EXPECT_TRUE(Contains(text, "conformance: 4 tests: 2 passed, 1 failed, 1 skipped"));
  EXPECT_TRUE(Contains(text, "  jit-llsc      1 passed    1 failed    1 skipped    1 not comparable"));
  EXPECT_TRUE(Contains(text, "FAIL atomic-fetch-add.data [jit-llsc]"));
  EXPECT_FALSE(Contains(text, "alu-add.data")) << "passing tests are not listed";
  EXPECT_TRUE(Contains(text, "12  diff_fuzzer: helper refused its arguments"));
  EXPECT_TRUE(Contains(text, "7  diff_fuzzer: load: back-edge at insn N"));
  EXPECT_TRUE(Contains(text, "recursion_fuzzer   no stats"));
  EXPECT_TRUE(Contains(text, "forms 168/174 completed"));
  EXPECT_TRUE(Contains(text, "alu32-add-no-zext                diff_fuzzer       detected in 1.9 s"));
  EXPECT_TRUE(Contains(text, "recursion-rctx-wrong-bits        recursion_fuzzer  not detected in 60 s (no earlier "
                            "night measured it: not judged)"));
  EXPECT_TRUE(Contains(text, "planted-bug gate: 2/3 caught by replaying their reproducers, clean without the bug: "
                            "FAILED\n  FAIL recursion-rctx-wrong-bits (recursion_fuzzer): its reproducer is not "
                            "caught"));
  EXPECT_TRUE(Contains(text, "  against the history: no regression\n"));
  EXPECT_TRUE(Contains(text, "conformance failed: 7 1"));
  EXPECT_TRUE(Contains(text, "fuzz inputs:        999 1555"));
}

TEST(TextReport, ALongReasonStaysOneShortLine) {
  ReportModel model = FixtureModel();
  model.conformance.results[1].reason = "rejected at load:\n" + std::string(8000, 'x');
  std::istringstream lines(TextReport(model));
  for (std::string line; std::getline(lines, line);) EXPECT_LT(line.size(), 240u) << line.substr(0, 80);
}

TEST(TextReport, SaysWhenTheUpstreamSuiteWasNotNamed) {
  ReportModel model = FixtureModel();
  std::string text = TextReport(model);
  EXPECT_TRUE(Contains(text, "suites: tests/conformance (3 tests), tests/<conformance> (1 tests)")) << text;
  EXPECT_TRUE(Contains(text, "only bpfdiff's own vectors ran")) << text;
  EXPECT_TRUE(Contains(text, "BPFDIFF_UPSTREAM_SUITE")) << text;
  model.upstream_suite = "tests/conformance/";
  text = TextReport(model);
  EXPECT_TRUE(Contains(text, "tests/conformance (3 tests, upstream bpf_conformance)")) << text;
  EXPECT_FALSE(Contains(text, "only bpfdiff's own vectors ran")) << text;
  model.upstream_suite = "/nowhere";
  EXPECT_TRUE(Contains(TextReport(model), "the upstream suite /nowhere gave no test"));
}

TEST(TextReport, ShowsSourceCoveragePerAreaAndTheLeastCoveredFiles) {
  ReportModel model = FixtureModel();
  auto coverage = LoadSourceCoverage(Fixture("coverage.json"), "/checkout");
  ASSERT_TRUE(coverage) << coverage.message();
  model.source_coverage = *coverage;
  const std::string text = TextReport(model);
  EXPECT_TRUE(Contains(text, "  jit           230 of   300 lines  76.7%,    80 of   140 branches  57.1%")) << text;
  EXPECT_FALSE(Contains(text, "  recursion ")) << "an area with nothing measured is left out";
  EXPECT_TRUE(Contains(text, "least covered: jit/jump.cc 50.0%, harness/lifecycle/world.cc 80.0%")) << text;
}

TEST(Reports, CountEveryTargetsRunsNotComparableWithReasons) {
  ReportModel model = FixtureModel();
  ASSERT_TRUE(model.fuzz[1].stats);
  model.fuzz[1].stats->not_comparable = {{"the prog_array changed during the call", 3}};
  const std::string text = TextReport(model);
  EXPECT_TRUE(Contains(text, "not comparable 3 (1 reason")) << text;
  EXPECT_TRUE(Contains(text, "3  pack_fuzzer: the prog_array changed during the call")) << text;
  const std::string html = HtmlReport(model);
  EXPECT_TRUE(Contains(html, "<summary>3</summary><span class=\"reason\">3 &times; the prog_array changed")) << html;
}

TEST(TextReport, ATargetThatHungFailsTheNightWithItsCount) {
  ReportModel model;
  model.timestamp = "2024-05-01T03:00:00Z";
  FuzzRun run;
  run.target = "pack_fuzzer";
  run.result = "timeout";
  run.timeouts = 3;
  run.artifacts = "/tmp/x";
  model.fuzz.push_back({"pack_fuzzer", run, std::nullopt});
  EXPECT_FALSE(model.Passed());
  EXPECT_TRUE(Contains(TextReport(model), "  pack_fuzzer        TIMEOUT (exit 0, 3 timeouts), artifacts in /tmp/x"))
      << TextReport(model);
}

TEST(Reports, GroupTheNightsFindingsByTheirKind) {
  ReportModel model;
  model.timestamp = "2024-05-01T03:00:00Z";
  const auto finding = [](std::string target, std::string kind) {
    FuzzRun run;
    run.target = target;
    run.result = "finding";
    run.exit_code = 77;
    run.finding_kind = std::move(kind);
    run.artifacts = "/tmp/" + target;
    return FuzzTarget{target, run, std::nullopt};
  };
  model.fuzz = {finding("diff_fuzzer", "culprit jset32 (jit)"),
                finding("jit_determinism_fuzzer", "culprit jset32 (jit)"),
                finding("pack_fuzzer", "pack invariant icache discipline"), finding("recursion_fuzzer", "")};
  const auto groups = model.FindingsByKind();
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].kind, "culprit jset32 (jit)");
  EXPECT_EQ(groups[0].targets, (std::vector<std::string>{"diff_fuzzer", "jit_determinism_fuzzer"}));
  EXPECT_EQ(groups[2].kind, "kind not printed");
  const std::string text = TextReport(model);
  EXPECT_TRUE(Contains(text, "  diff_fuzzer        FINDING (exit 77): culprit jset32 (jit), artifacts in /tmp/diff_fuzzer"))
      << text;
  EXPECT_TRUE(Contains(text, "findings by kind (3, one bug each):\n  culprit jset32 (jit): diff_fuzzer, "
                             "jit_determinism_fuzzer\n"))
      << text;
  const auto json = Json::parse(JsonReport(model));
  EXPECT_EQ(json["findings_by_kind"][0]["targets"][1], "jit_determinism_fuzzer");
  EXPECT_EQ(json["fuzz"][0]["run"]["finding_kind"], "culprit jset32 (jit)");
}

// pack_fuzzer's state coverage: every writer names the states the
// campaign never reached; a target that counts none shows nothing of it.
TEST(Reports, NameTheStatesACampaignNeverReached) {
  ReportModel model = FixtureModel();
  auto pack = std::find_if(model.fuzz.begin(), model.fuzz.end(), [](const FuzzTarget& t) { return t.target == "pack_fuzzer"; });
  ASSERT_NE(pack, model.fuzz.end());
  ASSERT_TRUE(pack->stats);
  pack->stats->states_reached = {{"images_crossing_a_page", 3}, {"frees_deferred_cpu_inside_by_tail_call", 0}};
  pack->stats->states_largest = {{"largest_image_bytes", 65536}};
  const std::string line = "states not reached: frees_deferred_cpu_inside_by_tail_call; largest: largest_image_bytes 65536";
  const std::string text = TextReport(model);
  EXPECT_TRUE(Contains(text, line)) << text;
  EXPECT_EQ(Count(text, "states not reached"), 1u) << "diff_fuzzer counts no states";
  EXPECT_TRUE(Contains(JunitReport(model), line));
  EXPECT_TRUE(Contains(HtmlReport(model), line));
  const auto json = Json::parse(JsonReport(model));
  bool found = false;
  for (const auto& target : json["fuzz"]) {
    if (target["target"] != "pack_fuzzer") continue;
    found = true;
    EXPECT_EQ(target["stats"]["states"]["reached"]["images_crossing_a_page"], 3);
    EXPECT_EQ(target["stats"]["states"]["reached"]["frees_deferred_cpu_inside_by_tail_call"], 0);
  }
  EXPECT_TRUE(found);
  pack->stats->states_reached.back().second = 1;
  EXPECT_TRUE(Contains(TextReport(model), "every state reached; largest: largest_image_bytes 65536"));
}

TEST(TextReport, SaysAllPassedWhenEveryPartPassed) {
  ReportModel model;
  model.timestamp = "2024-05-01T03:00:00Z";
  EXPECT_TRUE(Contains(TextReport(model), "all parts passed"));
}

TEST(JunitReport, ASuitePerEngineThePlantedBugsAndEachFuzzTarget) {
  const std::string xml = JunitReport(FixtureModel());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_EQ(Count(xml, "<testsuite "), 3u + 2u + 3u);
  EXPECT_EQ(Count(xml, "</testsuite>"), 8u);
  EXPECT_TRUE(Contains(xml, "<testsuite name=\"conformance.jit-llsc\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  // The gate fails the bug it did not catch; the benchmark's miss is a
  // measurement (no history to regress against): it passes and says so.
  EXPECT_TRUE(Contains(xml, "<testsuite name=\"planted-gate\" tests=\"3\" failures=\"1\""));
  EXPECT_TRUE(Contains(xml, "<testsuite name=\"planted-benchmark\" tests=\"3\" failures=\"0\""));
  EXPECT_TRUE(Contains(xml, "<system-out>not detected from the seeds within 60 s (no earlier night measured it"));
  EXPECT_TRUE(Contains(xml, "<testsuite name=\"fuzz.recursion_fuzzer\" tests=\"1\" failures=\"0\""));
  EXPECT_TRUE(Contains(xml, "time=\"1.900\""));
  EXPECT_TRUE(Contains(xml, "<testsuites name=\"bpfdiff\" tests=\"21\" failures=\"2\" errors=\"0\" skipped=\"3\""));
  EXPECT_EQ(Count(xml, "<failure "), 2u);
  EXPECT_EQ(Count(xml, "<skipped "), 3u);
  EXPECT_TRUE(Contains(xml, "<system-out>not comparable: helper refused its arguments</system-out>"));
}

TEST(JunitReport, EscapesNamesAndReasons) {
  const std::string xml = JunitReport(FixtureModel());
  EXPECT_FALSE(Contains(xml, "<script>"));
  EXPECT_TRUE(Contains(xml, "name=\"callx-&lt;script&gt;alert(1)&lt;/script&gt;.data\""));
  EXPECT_TRUE(Contains(xml, "message=\"needs group callx &amp; &quot;packet&quot;\""));
}

TEST(JunitReport, ConformanceAloneHasOnlyItsSuites) {
  ReportModel model;
  model.conformance = FixtureModel().conformance;
  EXPECT_EQ(Count(JunitReport(model), "<testsuite "), 3u);
}

TEST(JsonReport, MergesEveryInput) {
  const auto json = Json::parse(JsonReport(ModelWithHistory()));
  EXPECT_EQ(json["format"], "bpfdiff-report-1");
  EXPECT_EQ(json["passed"], false);
  EXPECT_EQ(json["conformance"]["tests"].size(), 4u);
  EXPECT_EQ(json["fuzz"].size(), 3u);
  EXPECT_TRUE(json["fuzz"][2]["stats"].is_null());
  EXPECT_EQ(json["fuzz"][0]["stats"]["forms"]["completed"], 168);
  EXPECT_EQ(json["planted"].size(), 3u);
  EXPECT_EQ(json["planted_gate"]["passed"], false);
  EXPECT_EQ(json["planted_gate"]["bugs"].size(), 3u);
  EXPECT_EQ(json["planted_gate"]["bugs"][0]["with_bug"]["result"], "finding");
  EXPECT_TRUE(json["planted_regressions"].empty());
  EXPECT_EQ(json["history"].size(), 1u);
  EXPECT_EQ(json["headline"]["fuzz_inputs"], 1555);
}

TEST(HtmlReport, IsSelfContainedAndEscapesInputs) {
  const std::string html = HtmlReport(ModelWithHistory());
  EXPECT_FALSE(Contains(html, "<script>alert"));
  EXPECT_TRUE(Contains(html, "callx-&lt;script&gt;alert(1)&lt;/script&gt;.data"));
  EXPECT_TRUE(Contains(html, "title=\"tests/&lt;conformance&gt;\""));
  EXPECT_EQ(Count(html, "<script"), 1u) << "only the inline filter script";
  EXPECT_FALSE(Contains(html, " src=")) << "nothing loaded from elsewhere";
  EXPECT_FALSE(Contains(html, " href="));
  EXPECT_FALSE(Contains(html, "@import"));
}

TEST(HtmlReport, HasEveryTable) {
  const std::string html = HtmlReport(ModelWithHistory());
  EXPECT_EQ(Count(html, "<tr data-status="), 4u);
  EXPECT_EQ(Count(html, "<td class=\"cell "), 12u);
  EXPECT_TRUE(Contains(html, "<td class=\"cell s-fail\" title=\"r0 differs: interp 0x1, jit-llsc 0x2\">FAIL</td>"));
  EXPECT_TRUE(Contains(html, "<table id=\"planted\">"));
  EXPECT_TRUE(Contains(html, "<table id=\"planted-gate\">"));
  EXPECT_TRUE(Contains(html, "<td class=\"num s-skip\" title=\"no earlier night measured it: not judged\">no</td>"));
  EXPECT_TRUE(Contains(html, "<table id=\"fuzz\">"));
  EXPECT_TRUE(Contains(html, "<table id=\"coverage\">"));
  EXPECT_TRUE(Contains(html, "<code>ldabs b</code>"));
  EXPECT_TRUE(Contains(html, "<table id=\"trend\">"));
  EXPECT_EQ(Count(html, "<svg class=\"spark\""), 7u);
  EXPECT_TRUE(Contains(html, "no stats (the target wrote none)"));
}

TEST(HtmlReport, ShowsSourceCoverageLeastCoveredFirstWithTheLineByLineLink) {
  ReportModel model = FixtureModel();
  EXPECT_TRUE(Contains(HtmlReport(model), "<h2>Source coverage</h2>\n<p class=\"muted\">Not measured.</p>"));
  EXPECT_TRUE(Contains(HtmlReport(model), "id=\"no-upstream-suite\""));
  auto coverage = LoadSourceCoverage(Fixture("coverage.json"), "/checkout");
  ASSERT_TRUE(coverage) << coverage.message();
  model.source_coverage = *coverage;
  model.source_coverage->html = "coverage/html/index.html";
  model.upstream_suite = "tests/conformance";
  const std::string html = HtmlReport(model);
  EXPECT_FALSE(Contains(html, "id=\"no-upstream-suite\""));
  EXPECT_TRUE(Contains(html, "<a href=\"coverage/html/index.html\">"));
  EXPECT_TRUE(Contains(html, "<table id=\"source-coverage-areas\">"));
  const size_t jump = html.find("<code>jit/jump.cc</code>"), alu = html.find("<code>jit/alu.cc</code>");
  ASSERT_NE(jump, std::string::npos);
  ASSERT_NE(alu, std::string::npos);
  EXPECT_LT(jump, alu) << "least covered first";
  EXPECT_TRUE(Contains(html, "<td class=\"num\">50/100</td><td class=\"num\">50.0%</td><td class=\"num\">10/40</td>"));
  const std::string json = JsonReport(model);
  EXPECT_TRUE(Contains(json, "\"upstream_suite\": \"tests/conformance\""));
  EXPECT_TRUE(Contains(json, "\"path\": \"jit/jump.cc\""));
}

ReportModel ModelWithKernelCoverage() {
  ReportModel model = FixtureModel();
  auto reasons = LoadUncoveredReasons(Fixture("uncovered.txt"));
  EXPECT_TRUE(reasons.ok()) << (reasons.ok() ? "" : reasons.message());
  auto kernel =
      LoadKernelCoverage(Fixture("kernel_coverage.json"), "/tree", reasons.ok() ? *reasons : UncoveredReasons{});
  EXPECT_TRUE(kernel.ok()) << (kernel.ok() ? "" : kernel.message());
  if (kernel.ok()) model.kernel_coverage = *kernel;
  if (model.kernel_coverage) model.kernel_coverage->html = "coverage/html/index.html";
  auto coverage = LoadSourceCoverage(Fixture("coverage.json"), "/checkout");
  EXPECT_TRUE(coverage.ok()) << (coverage.ok() ? "" : coverage.message());
  if (coverage.ok()) model.source_coverage = *coverage;
  return model;
}

TEST(HtmlReport, ShowsTheKernelTreesCoverageBeforeTheSourceCoverageOfOurModel) {
  const std::string without = HtmlReport(FixtureModel());
  const size_t kernel_without = without.find("<h2>Kernel tree coverage</h2>");
  ASSERT_NE(kernel_without, std::string::npos);
  EXPECT_LT(kernel_without, without.find("<h2>Source coverage</h2>"));
  EXPECT_TRUE(Contains(without, "<h2>Kernel tree coverage</h2>\n<p class=\"muted\">Not measured"));

  const std::string html = HtmlReport(ModelWithKernelCoverage());
  const size_t kernel = html.find("<h2>Kernel tree coverage</h2>"), source = html.find("<h2>Source coverage</h2>");
  ASSERT_NE(kernel, std::string::npos);
  ASSERT_NE(source, std::string::npos);
  EXPECT_LT(kernel, source) << "the tree's code first: it is what the nights test";
  EXPECT_LT(html.find("<table id=\"kernel-coverage-files\">"), source);
  EXPECT_LT(html.find("<table id=\"kernel-never-run\">"), source);
  // Least covered file first, each linked to llvm-cov's page of it.
  const size_t insn =
      html.find("<a href=\"coverage/html/coverage/tree/arch/arm64/lib/insn.c.html\">arch/arm64/lib/insn.c</a>");
  const size_t jit = html.find(
      "<a href=\"coverage/html/coverage/tree/arch/arm64/net/bpf_jit_comp.c.html\">arch/arm64/net/bpf_jit_comp.c</a>");
  ASSERT_NE(insn, std::string::npos) << html.substr(kernel, source - kernel);
  ASSERT_NE(jit, std::string::npos);
  EXPECT_LT(insn, jit);
  EXPECT_TRUE(Contains(html, "<td class=\"num\">100/200</td><td class=\"num\">50.0%</td><td class=\"num\">10/20</td>"
                             "<td class=\"num\">50.0%</td><td class=\"num\">1/2</td><td class=\"num\">1</td>"));
  // The functions never run: the least covered file's first, by line, each
  // with its reason or none recorded.
  const size_t dsb = html.find("insn.c.html#L1521\">aarch64_insn_gen_dsb</a>");
  const size_t invalidate = html.find("bpf_jit_comp.c.html#L251\">bpf_arch_text_invalidate</a>");
  const size_t bhb = html.find("bpf_jit_comp.c.html#L867\">build_bhb_mitigation</a>");
  ASSERT_NE(dsb, std::string::npos);
  ASSERT_NE(invalidate, std::string::npos);
  ASSERT_NE(bhb, std::string::npos);
  EXPECT_LT(dsb, invalidate);
  EXPECT_LT(invalidate, bhb);
  EXPECT_TRUE(Contains(html, "<td class=\"num\">251</td><td class=\"muted\">no reason recorded</td>"));
  EXPECT_TRUE(Contains(html, "<td class=\"reason\">only for classic BPF from an unprivileged loader</td>"));
  EXPECT_TRUE(Contains(html, "id=\"kernel-reasons-not-needed\""));
  EXPECT_TRUE(Contains(html, "<code>emit</code>"));
}

TEST(TextReport, ShowsTheKernelTreesCoverageFirstAndTheFunctionsWithoutAReason) {
  const std::string text = TextReport(ModelWithKernelCoverage());
  const size_t kernel = text.find("kernel tree coverage (/tree), lines / branches / functions:\n");
  ASSERT_NE(kernel, std::string::npos) << text;
  EXPECT_LT(kernel, text.find("source coverage"));
  EXPECT_TRUE(Contains(text, "  arch/arm64/lib/insn.c            100 of   200 lines  50.0%,   10 of   20 branches  50.0%,"
                             "   1 of   2 functions\n    1 functions never run, 1 with a reason (report.html)\n"
                             "  arch/arm64/net/bpf_jit_comp.c"))
      << text;
  EXPECT_TRUE(Contains(text, "    2 functions never run, 1 with a reason (report.html)\n"
                             "    no reason recorded: bpf_arch_text_invalidate:251\n"))
      << text;
}

TEST(JsonReport, CarriesTheKernelTreesCoverage) {
  const Json json = Json::parse(JsonReport(ModelWithKernelCoverage()));
  const Json& kernel = json["kernel_coverage"];
  EXPECT_EQ(kernel["tree"], "/tree");
  ASSERT_EQ(kernel["files"].size(), 2u);
  EXPECT_EQ(kernel["files"][0]["path"], "arch/arm64/lib/insn.c");
  EXPECT_EQ(kernel["files"][0]["counts"]["lines_covered"], 100);
  EXPECT_EQ(kernel["files"][1]["never_run"][0]["name"], "bpf_arch_text_invalidate");
  EXPECT_EQ(kernel["files"][1]["never_run"][0]["line"], 251);
  EXPECT_TRUE(kernel["files"][1]["never_run"][0]["reason"].is_null());
  EXPECT_EQ(kernel["files"][1]["never_run"][1]["reason"], "only for classic BPF from an unprivileged loader");
  EXPECT_EQ(kernel["reasons_not_needed"], Json::array({"emit"}));
  EXPECT_TRUE(Json::parse(JsonReport(FixtureModel()))["kernel_coverage"].is_null());
}

}  // namespace
}  // namespace bpfdiff::report
