// The bug-finding benchmark against the previous nights: what fails a
// night, and how a bug the benchmark missed tonight stands.
//
// The benchmark is timed on a shared machine, and a fuzzer's time to a
// bug it finds by mutation varies from run to run: a bug whose time lies
// near the limit is caught one night and missed the next. That a planted
// bug can still be caught at all is the gate's to say (planted_gate.h),
// deterministically. The benchmark fails a night only on a regression
// against the history, beyond this tolerance:
//
//  1. From the seeds: a bug detected from the seeds in each of the last
//     kSeedsNights nights that measured it, each time within
//     kSeedsShareOfLimit of tonight's limit, and not detected tonight.
//     A bug found that quickly that often is found while the seeds are
//     replayed or in the first mutations; missing it is a change, not
//     chance (were its times exponential with a mean of a quarter of the
//     limit, it would pass the first condition one time in two and then
//     miss one night in fifty; a bug found while the seeds replay never
//     misses by chance).
//  2. From an empty corpus: the bugs detected (median run within the
//     limit) falling more than kEmptyDrop below the median of the last
//     kEmptyNights nights measured with tonight's settings (limit, runs
//     per bug, number of bugs), once there are kEmptyMinNights of them.
//     The bugs whose median time lies near the limit move that count by
//     one or two from night to night; a fall of more is a loss of
//     fuzzing power.
//
// A first night cannot regress, and neither can a night whose settings
// no earlier night shares, until enough of them are recorded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/report_model.h"

namespace bpfdiff::report {

inline constexpr size_t kSeedsNights = 5;
inline constexpr double kSeedsShareOfLimit = 0.5;
inline constexpr size_t kEmptyNights = 7;
inline constexpr size_t kEmptyMinNights = 3;
inline constexpr int64_t kEmptyDrop = 3;

// The tolerance, in one sentence, for the reports.
std::string PlantedTolerance();

struct PlantedRegression {
  std::string bug;   // empty: the count detected from an empty corpus
  std::string what;  // one line
};

// Tonight's benchmark (model.planted, model.Headline()) against
// model.history, oldest first.
std::vector<PlantedRegression> PlantedRegressions(const ReportModel& model);

// How the previous nights saw a bug the benchmark did not detect from the
// seeds tonight: "REGRESSION: ...", "known: ...", or why it is not judged.
std::string SeedsMissNote(const PlantedCheck& bug, const std::vector<HistoryEntry>& history);

}  // namespace bpfdiff::report
