// The bug-finding benchmark's results (ci/planted_benchmark.sh writes them;
// ci/nightly.sh runs it): per planted bug, the runs of the fuzz target that
// must catch it, from the seeds and from an empty corpus.
//
//   {"format": "bpfdiff-planted-2", "limit_seconds": 60, "empty_seeds": [1, 2, 3],
//    "bugs": [{"bug": "...", "target": "diff_fuzzer", "area": "...", "fixed_by": "...",
//              "value_dependent": true, "artifacts": "...", "first_line": "...",
//              "from_seeds": {"detected": true, "seconds": 0.4, "exit_code": 77},
//              "from_empty": [{"seed": 1, "detected": true, "seconds": 3.1, "exit_code": 77}, ...]}]}
//
// The reader also takes version 1, the nightly's old run from the seeds: an array of
// {"bug", "target", "detected", "seconds", "limit_seconds", "artifacts"},
// each a run from the seeds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/json_fields.h"
#include "support/result.h"

namespace bpfdiff::report {

struct PlantedRun {
  std::optional<uint64_t> seed;  // libFuzzer's -seed (empty-corpus runs)
  bool detected = false;
  double seconds = 0;  // to detection, or spent without one
  int64_t exit_code = 0;
};

// One planted bug run against the fuzz target that must catch it.
struct PlantedCheck {
  std::string bug;
  std::string target;
  std::string area;      // the catalog's (empty in version 1 files)
  std::string fixed_by;  // the upstream commit, or "review: ..."
  bool value_dependent = false;
  std::optional<PlantedRun> from_seeds;
  std::vector<PlantedRun> from_empty;
  std::optional<double> limit_seconds;
  std::string first_line;  // what the finding said first
  std::string artifacts;

  // Detected from the seeds (or, when no run from the seeds was made, by
  // any run): the count the history keeps. A miss is measured, not failed
  // (planted_trend.h says when the benchmark fails a night).
  bool detected() const;
  // The median time to detect from an empty corpus, a run that missed
  // counting as never; nullopt when the median run missed (or none ran).
  std::optional<double> EmptyMedianSeconds() const;
};

struct PlantedSummary {
  int bugs = 0;
  int detected_from_seeds = 0;
  int measured_from_empty = 0;       // bugs with empty-corpus runs
  int detected_from_empty = 0;       // of those, with a median within the limit
  std::optional<double> median_from_empty;  // over the bugs detected from empty
  std::optional<double> worst_from_empty;
};
PlantedSummary Summarize(const std::vector<PlantedCheck>& planted);

Result<std::vector<PlantedCheck>> PlantedFromJson(const Json& json, std::string_view where);
Result<std::vector<PlantedCheck>> LoadPlanted(const std::filesystem::path& path);

// The benchmark as a Markdown table (the README publishes it) and its totals.
std::string PlantedMarkdown(const std::vector<PlantedCheck>& planted);

}  // namespace bpfdiff::report
