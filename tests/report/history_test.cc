#include "report/history.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

std::filesystem::path FreshDir(std::string_view name) {
  const auto dir = ScratchPath(name);
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

TEST(History, AnEntryThatCannotBeWrittenIsNamed) {
  // (support/files_test shows that a failed write leaves the old file.)
  const auto dir = FreshDir("history-unwritable");
  std::filesystem::create_directories(dir / "20240501T030000Z.json" / "in-the-way");
  auto written = WriteHistoryEntry(dir, FixtureModel().Headline());
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find((dir / "20240501T030000Z.json").string()), std::string::npos)
      << written.message();
  EXPECT_TRUE(std::filesystem::is_directory(dir / "20240501T030000Z.json" / "in-the-way"));
  std::filesystem::remove_all(dir);
}

// A corrupt night (a write cut short, a file edited by hand, a file from
// elsewhere) is skipped and named once, with what is wrong with it; the
// other nights still make the trend.
struct CorruptNight {
  const char* what;
  const char* text;
  const char* reason;  // in the message, after the file's name
};

class HistoryCorruptNight : public testing::TestWithParam<CorruptNight> {};

TEST_P(HistoryCorruptNight, IsSkippedAndNamedOnce) {
  const CorruptNight& night = GetParam();
  const auto dir = FreshDir(std::string("history-bad-") + night.what);
  std::filesystem::copy(Fixture("history"), dir);
  const auto bad = dir / "20240430T120000Z.json";
  std::ofstream(bad) << night.text;
  auto history = ReadHistory(dir, 60);
  ASSERT_TRUE(history.ok()) << history.message();
  ASSERT_EQ(history->entries.size(), 3u);
  EXPECT_EQ(history->entries.back().timestamp, "2024-04-30T03:00:00Z");
  ASSERT_EQ(history->unreadable.size(), 1u);
  const std::string& message = history->unreadable[0];
  EXPECT_EQ(message.rfind(bad.string(), 0), 0u) << message;  // the file first
  EXPECT_NE(message.find(night.reason), std::string::npos) << message;
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Nights, HistoryCorruptNight,
    testing::Values(
        CorruptNight{"truncated", R"({"timestamp": "2024-04-30T12:00:00Z", "tests": 3)", "not valid JSON"},
        CorruptNight{"empty", "", "not valid JSON"},
        CorruptNight{"count-as-text", R"({"timestamp": "2024-04-30T12:00:00Z", "tests": "300"})",
                     "field 'tests' must be a non-negative integer"},
        CorruptNight{"timestamp-as-number", R"({"timestamp": 20240430, "tests": 3})",
                     "field 'timestamp' must be a string"},
        CorruptNight{"negative", R"({"timestamp": "2024-04-30T12:00:00Z", "fuzz_inputs": -1})",
                     "field 'fuzz_inputs' must be a non-negative integer"},
        CorruptNight{"array", R"([{"timestamp": "2024-04-30T12:00:00Z"}])", "expected a JSON object"},
        CorruptNight{"no-timestamp", R"({"tests": 3})", "missing required field 'timestamp'"},
        CorruptNight{"binary", "\x7f" "ELF\x02\x01\x01", "not valid JSON"}),
    [](const testing::TestParamInfo<CorruptNight>& night) {
      std::string name;
      for (const char* c = night.param.what; *c != '\0'; ++c) name += *c == '-' ? '_' : *c;
      return name;
    });

}  // namespace
}  // namespace bpfdiff::report
