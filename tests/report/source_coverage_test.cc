// Source coverage from llvm-cov's export: areas, least covered first, and
// the errors a wrong file gives.
#include "report/source_coverage.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

TEST(SourceCoverage, KeepsTheAreasFilesLeastCoveredFirstWithTotals) {
  auto coverage = LoadSourceCoverage(Fixture("coverage.json"), "/checkout");
  ASSERT_TRUE(coverage) << coverage.message();
  // The generator and a system header are not code under test.
  ASSERT_EQ(coverage->files.size(), 4u);
  EXPECT_EQ(coverage->files[0].path, "jit/jump.cc") << "least covered first, the path normalized";
  EXPECT_EQ(coverage->files[1].path, "harness/lifecycle/world.cc");
  EXPECT_EQ(coverage->files[1].area, "pack");
  EXPECT_EQ(coverage->files[3].path, "oracle/interpreter/alu.h");
  ASSERT_EQ(coverage->areas.size(), 4u);
  EXPECT_EQ(coverage->areas[0].area, "jit");
  EXPECT_EQ(coverage->areas[0].counts.lines, 300u);
  EXPECT_EQ(coverage->areas[0].counts.lines_covered, 230u);
  EXPECT_EQ(coverage->areas[0].counts.branches_covered, 80u);
  EXPECT_EQ(coverage->areas[3].area, "recursion");
  EXPECT_FALSE(coverage->areas[3].counts.LinePercent()) << "nothing measured is not 0%";
  EXPECT_EQ(coverage->total.lines, 680u);
  EXPECT_EQ(coverage->total.lines_covered, 550u);
  EXPECT_NEAR(*coverage->total.BranchPercent(), 100.0 * 170 / 260, 1e-9);
}

TEST(SourceCoverage, AnotherCheckoutOrAnotherFormatIsAnErrorNamingTheFile) {
  auto elsewhere = LoadSourceCoverage(Fixture("coverage.json"), "/elsewhere");
  ASSERT_FALSE(elsewhere);
  EXPECT_NE(elsewhere.message().find("coverage.json"), std::string::npos) << elsewhere.message();
  EXPECT_NE(elsewhere.message().find("/elsewhere"), std::string::npos) << elsewhere.message();

  auto not_coverage = LoadSourceCoverage(Fixture("planted_v2.json"), "/checkout");
  ASSERT_FALSE(not_coverage);
  EXPECT_NE(not_coverage.message().find("llvm-cov export"), std::string::npos) << not_coverage.message();

  auto bad = SourceCoverageFromJson(
      Json::parse(R"({"type": "llvm.coverage.json.export", "data": [{"files": [
          {"filename": "/c/jit/a.cc", "summary": {"lines": {"count": 1, "covered": 2}}}]}]})"),
      "/c", "coverage x");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("jit/a.cc"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace bpfdiff::report
