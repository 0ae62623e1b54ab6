// lib/test_bpf.c's results in the nightly report: read back as written, a
// failure failing the night, its lines in the summary, and the errors a
// wrong file gives.
#include "report/test_bpf_json.h"

#include <gtest/gtest.h>

#include "report/report_inputs.h"
#include "report/report_writers.h"
#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

bool Contains(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

TEST(TestBpfReport, ReadsTheFixtureAndWritesItBackTheSame) {
  auto summary = LoadTestBpf(Fixture("test_bpf.json"));
  ASSERT_TRUE(summary) << summary.message();
  EXPECT_EQ(summary->tree, "6.12.118");
  ASSERT_EQ(summary->cases.size(), 2u);
  EXPECT_EQ(summary->cases[1].engine, "kernel-jit");
  EXPECT_EQ(summary->cases[1].failed, 2);
  EXPECT_EQ(summary->tail_calls[1].jited, 9);
  EXPECT_EQ(summary->left_out.at("classic BPF: its converter (net/core/filter.c, bpf_prog_create) is not compiled"),
            134);
  ASSERT_EQ(summary->failures.size(), 2u);
  EXPECT_EQ(summary->failures[0].index, 313);
  EXPECT_FALSE(summary->AllPassed());

  auto again = TestBpfFromJson(TestBpfToJson(*summary), "round trip");
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(DumpJson(TestBpfToJson(*again)), DumpJson(TestBpfToJson(*summary)));
}

TEST(TestBpfReport, AFailureFailsTheNightAndIsInTheSummary) {
  ReportInputs inputs;
  inputs.conformance = Fixture("conformance.json");
  inputs.test_bpf = Fixture("test_bpf.json");
  auto model = LoadReportInputs(inputs);
  ASSERT_TRUE(model) << model.message();
  ASSERT_TRUE(model->test_bpf);
  EXPECT_FALSE(model->Passed());
  const std::string text = TextReport(*model);
  EXPECT_TRUE(Contains(text, "test_bpf (6.12.118)")) << text;
  EXPECT_TRUE(Contains(text, "kernel-jit              905 PASSED,   2 FAILED, [907/907 JIT'ed] | 905 agree, 2 diverge"))
      << text;
  EXPECT_TRUE(Contains(text, "FAIL test_bpf #313 BSWAP 32: 0x0123456789abcdef -> 0xefcdab89 on kernel-jit")) << text;
  EXPECT_TRUE(Contains(text, "left out: 134 cases: classic BPF")) << text;
  const std::string html = HtmlReport(*model);
  EXPECT_TRUE(Contains(html, "<table id=\"test-bpf-test_bpf\">")) << "a table per suite";
  EXPECT_TRUE(Contains(html, "<ul id=\"test-bpf-failures\">"));
  EXPECT_TRUE(Contains(JsonReport(*model), "\"test_bpf\": {"));
}

TEST(TestBpfReport, AllPassingResultsDoNotFailTheNight) {
  auto summary = LoadTestBpf(Fixture("test_bpf.json"));
  ASSERT_TRUE(summary);
  summary->failures.clear();
  summary->cases[1].failed = 0;
  summary->cases[1].passed = 907;
  summary->cases[1].diverged = 0;
  EXPECT_TRUE(summary->AllPassed());
  summary->tail_calls[1].diverged = 1;  // bpfdiff's verdict alone fails it
  EXPECT_FALSE(summary->AllPassed());
}

TEST(TestBpfReport, AWrongFileIsAnErrorNamingWhatIsWrong) {
  auto json = ReadJsonFile(Fixture("test_bpf.json"));
  ASSERT_TRUE(json);
  Json wrong_format = *json;
  wrong_format["format"] = "bpfdiff-test-bpf-0";
  auto refused = TestBpfFromJson(wrong_format, "f");
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.message(), "format 'bpfdiff-test-bpf-0'")) << refused.message();

  Json inconsistent = *json;
  inconsistent["suites"]["test_bpf"][1]["run"] = 1000;
  refused = TestBpfFromJson(inconsistent, "f");
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.message(), "905 passed and 2 failed, but 1000 run")) << refused.message();

  Json negative = *json;
  negative["left_out"][0]["cases"] = -1;
  EXPECT_FALSE(TestBpfFromJson(negative, "f"));
}

}  // namespace
}  // namespace bpfdiff::report
