#include "report/planted_trend.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace bpfdiff::report {
namespace {

// The last `nights` previous nights that measured `bug` from the seeds,
// newest first: seconds to detection, nullopt for a miss.
std::vector<std::optional<double>> SeedsRecord(std::string_view bug, const std::vector<HistoryEntry>& history,
                                               size_t nights) {
  std::vector<std::optional<double>> record;
  for (auto it = history.rbegin(); it != history.rend() && record.size() < nights; ++it) {
    auto found = it->planted_seconds_from_seeds.find(std::string(bug));
    if (found != it->planted_seconds_from_seeds.end()) record.push_back(found->second);
  }
  return record;
}

bool SeedsRegression(const std::vector<std::optional<double>>& record, double limit) {
  if (record.size() < kSeedsNights) return false;
  return std::all_of(record.begin(), record.end(),
                     [limit](const std::optional<double>& s) { return s && *s <= limit * kSeedsShareOfLimit; });
}

bool MissedFromSeeds(const PlantedCheck& p) { return p.from_seeds && !p.from_seeds->detected; }

std::string Seconds(double seconds) { return fmt::format("{:.0f} s", seconds); }

}  // namespace

std::string PlantedTolerance() {
  return fmt::format(
      "the benchmark fails the night only on a regression: a bug detected from the seeds in each of the last {} "
      "nights (each within {:.0f}% of the limit) and not tonight, or the bugs detected from an empty corpus "
      "falling more than {} below the median of the last {} nights with tonight's settings (once there are {})",
      kSeedsNights, kSeedsShareOfLimit * 100, kEmptyDrop, kEmptyNights, kEmptyMinNights);
}

std::vector<PlantedRegression> PlantedRegressions(const ReportModel& model) {
  std::vector<PlantedRegression> regressions;
  if (model.planted.empty()) return regressions;
  const HistoryEntry tonight = model.Headline();
  if (tonight.planted_limit_seconds) {
    for (const auto& p : model.planted) {
      if (!MissedFromSeeds(p)) continue;
      if (SeedsRegression(SeedsRecord(p.bug, model.history, kSeedsNights), *tonight.planted_limit_seconds)) {
        regressions.push_back({p.bug, fmt::format("{} not detected from the seeds within {}, after {} nights "
                                                  "detecting it within {}",
                                                  p.bug, Seconds(*tonight.planted_limit_seconds), kSeedsNights,
                                                  Seconds(*tonight.planted_limit_seconds * kSeedsShareOfLimit))});
      }
    }
  }
  if (tonight.planted_detected_from_empty) {
    std::vector<int64_t> counts;
    for (auto it = model.history.rbegin(); it != model.history.rend() && counts.size() < kEmptyNights; ++it) {
      const bool same_settings = it->planted_detected_from_empty &&
                                 it->planted_limit_seconds == tonight.planted_limit_seconds &&
                                 it->planted_empty_runs == tonight.planted_empty_runs &&
                                 it->planted_total == tonight.planted_total;
      if (same_settings) counts.push_back(*it->planted_detected_from_empty);
    }
    if (counts.size() >= kEmptyMinNights) {
      std::sort(counts.begin(), counts.end());
      const int64_t median = counts[(counts.size() - 1) / 2];  // the lower middle: the milder test
      if (*tonight.planted_detected_from_empty < median - kEmptyDrop) {
        regressions.push_back({"", fmt::format("{} of {} bugs detected from an empty corpus, more than {} below "
                                               "the median {} of the last {} nights with these settings",
                                               *tonight.planted_detected_from_empty, tonight.planted_total,
                                               kEmptyDrop, median, counts.size())});
      }
    }
  }
  return regressions;
}

std::string SeedsMissNote(const PlantedCheck& bug, const std::vector<HistoryEntry>& history) {
  const auto record = SeedsRecord(bug.bug, history, kSeedsNights);
  if (record.empty()) return "no earlier night measured it: not judged";
  const auto missed = std::count_if(record.begin(), record.end(), [](const auto& s) { return !s.has_value(); });
  if (missed > 0) {
    return fmt::format("known: not detected in {} of the last {} night{} either", missed, record.size(),
                       record.size() == 1 ? "" : "s");
  }
  if (bug.limit_seconds && SeedsRegression(record, *bug.limit_seconds)) {
    return fmt::format("REGRESSION: detected in each of the last {} nights within {}", record.size(),
                       Seconds(*bug.limit_seconds * kSeedsShareOfLimit));
  }
  if (record.size() < kSeedsNights) {
    return fmt::format("detected in the {} night{} before, fewer than {}: within the tolerance", record.size(),
                       record.size() == 1 ? "" : "s", kSeedsNights);
  }
  return fmt::format("detected in each of the last {} nights, but not always within {}: within the tolerance",
                     record.size(), bug.limit_seconds ? Seconds(*bug.limit_seconds * kSeedsShareOfLimit) : "the limit");
}

}  // namespace bpfdiff::report
