// Loading the report's input files into the model's parts. Each loader
// names its file in every message; a missing file or malformed JSON is an
// error, an unknown key is ignored, a missing optional key is absent.
//
// Fuzz stats (BPFDIFF_FUZZ_STATS_JSON, written by each fuzz target at exit):
//   the schema of fuzz/stats/stats_file.h.
// Fuzz runs (ci/nightly.sh):
//   [{"target": "diff_fuzzer", "result": "clean"|"finding"|"error", "exit_code": 0,
//     "seconds": 60.4, "artifacts": "/tmp/..."}, ...]
//   [{"bug": "alu32-add-no-zext", "target": "diff_fuzzer", "detected": true,
//     "seconds": 1.9, "limit_seconds": 60, "artifacts": "/tmp/..."}, ...]
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "support/json_fields.h"
#include "report/report_model.h"

namespace bpfdiff::report {

// The files one report is made from (see `bpfdiff report --help`).
struct ReportInputs {
  std::filesystem::path conformance;
  std::vector<std::filesystem::path> fuzz_stats;
  std::optional<std::filesystem::path> fuzz_runs;
  std::optional<std::filesystem::path> planted;
};

// Every input loaded and merged; the timestamp, history and notes are the
// caller's to fill.
Result<ReportModel> LoadReportInputs(const ReportInputs& inputs);

Result<ConformanceSummary> LoadConformance(const std::filesystem::path& path);
Result<FuzzStats> LoadFuzzStats(const std::filesystem::path& path);
Result<std::vector<FuzzRun>> LoadFuzzRuns(const std::filesystem::path& path);

// One FuzzTarget per target named by a run or a stats file, in the order
// first seen (runs first). Two stats files for one target are an error.
Result<std::vector<FuzzTarget>> MergeFuzz(const std::vector<FuzzRun>& runs, const std::vector<FuzzStats>& stats);

}  // namespace bpfdiff::report
