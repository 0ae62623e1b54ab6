// The simulated iTLB report: the same programs and calls in both layouts,
// and the page counts each layout must give.
#include <gtest/gtest.h>

#include "fuzz/pack/itlb_report.h"

namespace bpfdiff::fuzz {
namespace {

TEST(ItlbReport, PackedCodeSharesPagesImagesOfTheirOwnDoNot) {
  ItlbOptions options;
  options.loaded = 24;
  options.run = 12;
  auto report = MeasureItlb(options);
  ASSERT_TRUE(report) << report.message();
  ASSERT_EQ(report->layouts.size(), 2u);
  const ItlbLayout& packed = report->layouts[0];
  const ItlbLayout& own = report->layouts[1];
  EXPECT_EQ(report->calls, 12u);
  EXPECT_EQ(packed.code_bytes, own.code_bytes) << "the same programs in both layouts";
  // Every image of its own starts a page; packed images share them.
  EXPECT_GE(own.loaded_pages_4k, 24u);
  EXPECT_LT(packed.loaded_pages_4k, own.loaded_pages_4k);
  // Only the programs run are fetched from, at least one page each.
  EXPECT_GE(own.fetched_pages_4k, 12u);
  EXPECT_LT(own.fetched_pages_4k, own.loaded_pages_4k);
  EXPECT_GT(packed.fetched_pages_4k, 0u);
  EXPECT_EQ(packed.itlb_entries, packed.fetched_pages_2m);
  EXPECT_EQ(own.itlb_entries, own.fetched_pages_4k);
  EXPECT_LT(packed.itlb_entries, own.itlb_entries);
}

TEST(ItlbReport, RefusesMoreRunThanLoaded) {
  ItlbOptions options;
  options.loaded = 4;
  options.run = 5;
  auto report = MeasureItlb(options);
  ASSERT_FALSE(report);
  EXPECT_NE(report.message().find("run (5) <= loaded (4)"), std::string::npos) << report.message();
}

}  // namespace
}  // namespace bpfdiff::fuzz
