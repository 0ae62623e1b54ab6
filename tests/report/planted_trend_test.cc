// The benchmark against the history (report/planted_trend.h): what fails a
// night, within which tolerance, and what a miss is called.
#include "report/planted_trend.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report/history.h"

namespace bpfdiff::report {
namespace {

constexpr double kLimit = 30;

// A bug measured tonight: detected from the seeds in `seeds` seconds
// (nullopt: missed), and from an empty corpus in all three runs or none.
PlantedCheck Bug(std::string name, std::optional<double> seeds, bool from_empty = true) {
  PlantedCheck p;
  p.bug = std::move(name);
  p.target = "diff_fuzzer";
  p.limit_seconds = kLimit;
  p.from_seeds = PlantedRun{std::nullopt, seeds.has_value(), seeds.value_or(kLimit), seeds ? 77 : 0};
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    p.from_empty.push_back(PlantedRun{seed, from_empty, from_empty ? 2.0 : kLimit, from_empty ? 77 : 0});
  }
  return p;
}

// A previous night measured with tonight's settings: `seconds` per bug
// from the seeds, `from_empty` bugs detected from an empty corpus.
HistoryEntry Night(int day, std::map<std::string, std::optional<double>> seconds, int64_t from_empty, int64_t total) {
  HistoryEntry night;
  night.timestamp = fmt::format("2024-04-{:02}T03:00:00Z", day);
  night.planted_limit_seconds = kLimit;
  night.planted_empty_runs = 3;
  night.planted_total = total;
  night.planted_detected_from_empty = from_empty;
  night.planted_seconds_from_seeds = std::move(seconds);
  return night;
}

ReportModel Tonight(std::vector<PlantedCheck> planted) {
  ReportModel model;
  model.timestamp = "2024-05-01T03:00:00Z";
  model.planted = std::move(planted);
  return model;
}

TEST(PlantedTrend, AFirstNightCannotRegress) {
  const ReportModel model = Tonight({Bug("a", std::nullopt, false), Bug("b", 1.0, false)});
  EXPECT_TRUE(PlantedRegressions(model).empty());
  EXPECT_TRUE(model.Passed()) << "missed from the seeds and from empty, with no history: measured, not failed";
  EXPECT_EQ(SeedsMissNote(model.planted[0], model.history), "no earlier night measured it: not judged");
}

TEST(PlantedTrend, ABugDetectedQuicklyInEachOfTheLastNightsAndMissedTonightRegresses) {
  ReportModel model = Tonight({Bug("a", std::nullopt), Bug("b", 1.0)});
  for (int day = 1; day <= 5; ++day) model.history.push_back(Night(day, {{"a", 2.0}, {"b", 1.0}}, 2, 2));
  const auto regressions = PlantedRegressions(model);
  ASSERT_EQ(regressions.size(), 1u);
  EXPECT_EQ(regressions[0].bug, "a");
  EXPECT_NE(regressions[0].what.find("after 5 nights detecting it within 15 s"), std::string::npos)
      << regressions[0].what;
  EXPECT_FALSE(model.Passed());
  EXPECT_EQ(SeedsMissNote(model.planted[0], model.history).rfind("REGRESSION: ", 0), 0u);
}

TEST(PlantedTrend, AMissWithinTheToleranceIsNamedButDoesNotFail) {
  struct Case {
    const char* what;
    std::vector<std::optional<double>> nights;  // bug a's seconds, oldest first
    const char* note;
  };
  const Case cases[] = {
      {"fewer nights than the rule needs", {2.0, 2.0, 2.0, 2.0}, "detected in the 4 nights before, fewer than 5"},
      {"one night slower than half the limit", {2.0, 2.0, 16.0, 2.0, 2.0}, "but not always within 15 s"},
      {"a known miss", {2.0, std::nullopt, 2.0, 2.0, 2.0}, "known: not detected in 1 of the last 5 nights either"},
  };
  for (const Case& c : cases) {
    ReportModel model = Tonight({Bug("a", std::nullopt)});
    int day = 1;
    for (const auto& seconds : c.nights) model.history.push_back(Night(day++, {{"a", seconds}}, 1, 1));
    EXPECT_TRUE(PlantedRegressions(model).empty()) << c.what;
    EXPECT_TRUE(model.Passed()) << c.what;
    EXPECT_NE(SeedsMissNote(model.planted[0], model.history).find(c.note), std::string::npos)
        << c.what << ": " << SeedsMissNote(model.planted[0], model.history);
  }
}

TEST(PlantedTrend, OnlyTheLastNightsThatMeasuredTheBugCount) {
  ReportModel model = Tonight({Bug("a", std::nullopt)});
  model.history.push_back(Night(1, {{"a", std::nullopt}}, 1, 1));  // a miss long ago
  for (int day = 2; day <= 6; ++day) model.history.push_back(Night(day, {{"a", 3.0}}, 1, 1));
  HistoryEntry older_night;  // a night written before the benchmark was kept: not counted
  older_night.timestamp = "2024-04-07T03:00:00Z";
  model.history.push_back(older_night);
  EXPECT_EQ(PlantedRegressions(model).size(), 1u);
}

TEST(PlantedTrend, TheCountFromEmptyRegressesOnlyWhenItFallsMoreThanTheToleranceBelowTheMedian) {
  // Twelve bugs, all detected from the seeds; `detected` of them from empty.
  auto tonight = [](int detected) {
    std::vector<PlantedCheck> planted;
    for (int i = 0; i < 12; ++i) planted.push_back(Bug(fmt::format("bug{}", i), 1.0, i < detected));
    return Tonight(planted);
  };
  auto with_nights = [](ReportModel model, std::vector<int64_t> counts) {
    int day = 1;
    for (const int64_t count : counts) model.history.push_back(Night(day++, {}, count, 12));
    return model;
  };
  EXPECT_TRUE(PlantedRegressions(with_nights(tonight(7), {10, 11, 10})).empty()) << "3 below the median 10";
  const auto fell = PlantedRegressions(with_nights(tonight(6), {10, 11, 10}));
  ASSERT_EQ(fell.size(), 1u);
  EXPECT_EQ(fell[0].bug, "");
  EXPECT_NE(fell[0].what.find("6 of 12 bugs detected from an empty corpus"), std::string::npos) << fell[0].what;
  EXPECT_TRUE(PlantedRegressions(with_nights(tonight(6), {10, 11})).empty()) << "two nights are too few";
  // Nights measured with another limit are not compared with tonight.
  ReportModel other = with_nights(tonight(6), {10, 11, 10});
  for (auto& night : other.history) night.planted_limit_seconds = 60;
  EXPECT_TRUE(PlantedRegressions(other).empty());
}

TEST(PlantedTrend, TonightsEntryKeepsWhatTomorrowJudgesAndReadsBack) {
  const ReportModel model = Tonight({Bug("a", std::nullopt, false), Bug("b", 1.5)});
  const HistoryEntry headline = model.Headline();
  EXPECT_EQ(headline.planted_limit_seconds, kLimit);
  EXPECT_EQ(headline.planted_empty_runs, 3);
  EXPECT_EQ(headline.planted_detected_from_empty, 1);
  const std::map<std::string, std::optional<double>> seconds = {{"a", std::nullopt}, {"b", 1.5}};
  EXPECT_EQ(headline.planted_seconds_from_seeds, seconds);
  auto again = HistoryEntryFromJson(HistoryEntryToJson(headline), "round trip");
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->planted_seconds_from_seeds, seconds);
  EXPECT_EQ(again->planted_limit_seconds, kLimit);
  EXPECT_EQ(again->planted_empty_runs, 3);
  auto bad = HistoryEntryFromJson(Json::parse(R"({"timestamp": "t", "planted_from_seeds": {"a": "fast"}})"), "night");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("'planted_from_seeds': 'a'"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace bpfdiff::report
