// Lines from llvm-cov's segments, by llvm-cov's own rule: the lines a
// report names as never run are the ones llvm-cov's view marks.
#include "report/line_coverage.h"

#include <gtest/gtest.h>

namespace bpfdiff::report {
namespace {

std::vector<std::pair<uint64_t, uint64_t>> Pairs(const std::vector<LineCount>& lines) {
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  for (const LineCount& line : lines) pairs.emplace_back(line.line, line.count);
  return pairs;
}

TEST(LineCoverage, CountsEachLineByTheRegionsStartingOnItAndTheOneInEffect) {
  // 1 { runs 5 times; 2 an `if` whose gap region (not code) starts at its
  // end; 3 the branch never taken; 4 back to 5; 5-7 code the preprocessor
  // skipped; 8 two regions start.
  auto lines = LinesFromSegments(Json::parse(R"([[1, 10, 5, true, true, false], [2, 9, 0, true, true, true],
      [3, 5, 0, true, true, false], [3, 20, 5, true, false, false], [5, 1, 0, false, true, false],
      [7, 7, 5, true, false, false], [8, 3, 2, true, true, false], [8, 9, 7, true, true, false]])"),
                                 "f");
  ASSERT_TRUE(lines) << lines.message();
  using P = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(Pairs(*lines), (std::vector<P>{{1, 5}, {2, 5}, {3, 0}, {4, 5}, {8, 7}}))
      << "2 keeps the count in effect (a gap does not count); 3 starts a region never run; 5 to 7 are skipped "
         "(no region with a count starts on 7, and none is in effect as it begins); 8 the largest count of the "
         "regions starting on it and the one in effect";
}

TEST(LineCoverage, RefusesSegmentsThatAreNotLlvmCovsNamingWhere) {
  auto not_array = LinesFromSegments(Json::parse(R"({"a": 1})"), "file x");
  ASSERT_FALSE(not_array);
  EXPECT_NE(not_array.message().find("file x"), std::string::npos) << not_array.message();
  auto short_segment = LinesFromSegments(Json::parse(R"([[1, 2, 3]])"), "file x");
  ASSERT_FALSE(short_segment);
  EXPECT_NE(short_segment.message().find("file x.segments[0]"), std::string::npos) << short_segment.message();
  auto unsorted = LinesFromSegments(Json::parse(R"([[4, 1, 1, true, true, false], [2, 1, 1, true, true, false]])"),
                                    "file x");
  ASSERT_FALSE(unsorted);
  EXPECT_NE(unsorted.message().find("segments[1]"), std::string::npos) << unsorted.message();
  auto none = LinesFromSegments(Json::array(), "file x");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace bpfdiff::report
