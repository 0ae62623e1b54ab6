#include "report/history.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

std::filesystem::path FreshDir(std::string_view name) {
  const auto dir = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(History, ReadsNightsOldestFirst) {
  auto history = ReadHistory(Fixture("history"), 60);
  ASSERT_TRUE(history.ok()) << history.message();
  ASSERT_EQ(history->entries.size(), 3u);
  EXPECT_EQ(history->entries.front().timestamp, "2024-04-28T03:00:00Z");
  EXPECT_EQ(history->entries.back().timestamp, "2024-04-30T03:00:00Z");
  EXPECT_EQ(history->entries.back().fuzz_inputs, 3000);
  EXPECT_EQ(history->entries.back().forms_completed, 163);
  EXPECT_TRUE(history->unreadable.empty());
}

TEST(History, KeepsOnlyTheLastNights) {
  auto history = ReadHistory(Fixture("history"), 2);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->entries.size(), 2u);
  EXPECT_EQ(history->entries.front().timestamp, "2024-04-29T03:00:00Z");
}

TEST(History, AMissingDirectoryIsTheFirstNight) {
  auto history = ReadHistory(FreshDir("history-none"), 60);
  ASSERT_TRUE(history.ok());
  EXPECT_TRUE(history->entries.empty());
}

TEST(History, AnEntryWrittenTonightIsReadTomorrow) {
  const auto dir = FreshDir("history-write");
  const ReportModel model = FixtureModel();
  auto path = WriteHistoryEntry(dir, model.Headline());
  ASSERT_TRUE(path.ok()) << path.message();
  EXPECT_EQ(path->filename(), "20240501T030000Z.json");
  auto history = ReadHistory(dir, 60);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->entries.size(), 1u);
  const HistoryEntry& e = history->entries[0];
  EXPECT_EQ(e.timestamp, "2024-05-01T03:00:00Z");
  EXPECT_EQ(e.tests, 4);
  EXPECT_EQ(e.failed, 1);
  EXPECT_EQ(e.not_comparable, 2);
  EXPECT_EQ(e.fuzz_inputs, 1234 + 321);
  EXPECT_EQ(e.forms_completed, 168);
  EXPECT_EQ(e.planted_detected, 2);
  EXPECT_EQ(e.planted_total, 3);
}

TEST(History, AnUnreadableEntryIsSkippedAndNamed) {
  const auto dir = FreshDir("history-bad");
  std::filesystem::copy(Fixture("history"), dir);
  std::ofstream(dir / "20240430T120000Z.json") << "{ truncated";
  auto history = ReadHistory(dir, 60);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->entries.size(), 3u);
  ASSERT_EQ(history->unreadable.size(), 1u);
  EXPECT_NE(history->unreadable[0].find("20240430T120000Z.json"), std::string::npos);
}

}  // namespace
}  // namespace bpfdiff::report
