// Loading the report's input files into the model's parts. Each loader
// names its file in every message; a missing file or malformed JSON is an
// error, an unknown key is ignored, a missing optional key is absent.
//
// Fuzz stats (BPFDIFF_FUZZ_STATS_JSON, written by each fuzz target, or each
//   of its -fork workers, at exit): the schema of fuzz/stats/stats_file.h.
// Fuzz runs (ci/nightly.sh):
//   [{"target": "diff_fuzzer", "result": "clean"|"finding"|"error"|"timeout"|"oom",
//     "exit_code": 0, "timeouts": 0, "ooms": 0, "seconds": 60.4, "artifacts": "/tmp/..."}, ...]
// Planted bugs (ci/planted_benchmark.sh): report/planted_results.h.
// The planted-bug gate (ci/planted_gate.py): report/planted_gate.h.
// Source coverage (llvm-cov export): report/source_coverage.h.
// Kernel tree coverage (llvm-cov export with functions, and the reasons
//   functions are never run): report/kernel_coverage.h.
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
  std::optional<std::filesystem::path> planted_gate;
  std::optional<std::string> upstream_suite;  // as given to `bpfdiff conformance --suite`
  // llvm-cov export JSON (source_coverage.h), the checkout its paths are
  // under, and a link to llvm-cov's HTML view (relative to the report).
  std::optional<std::filesystem::path> coverage;
  std::filesystem::path checkout = ".";
  std::string coverage_html;
  // llvm-cov export JSON of the kernel tree's files, with functions
  // (kernel_coverage.h), the tree its paths are under, and why functions
  // are never run (kernelsrc/uncovered.txt). The HTML link is
  // coverage_html's.
  std::optional<std::filesystem::path> kernel_coverage;
  std::filesystem::path kernel_tree;
  std::optional<std::filesystem::path> uncovered_reasons;
  // `bpfdiff test-bpf --json` (report/test_bpf_json.h).
  std::optional<std::filesystem::path> test_bpf;
  // One directory per Linux tree the night ran (report/kernel_trees.h).
  std::vector<std::filesystem::path> kernel_trees;
  // kernelsrc/SHIMS.md, for what it says of each tree's known findings
  // (report/known_findings_doc.h).
  std::optional<std::filesystem::path> known_findings_doc;
};

// Every input loaded and merged; the timestamp, history and notes are the
// caller's to fill. The conformance results are required (an error when
// they do not load); an optional part that does not load is left out and
// its loader's message kept in ReportModel::inputs_left_out.
Result<ReportModel> LoadReportInputs(const ReportInputs& inputs);

Result<ConformanceSummary> LoadConformance(const std::filesystem::path& path);
Result<TestBpfSummary> LoadTestBpf(const std::filesystem::path& path);
Result<FuzzStats> LoadFuzzStats(const std::filesystem::path& path);
Result<std::vector<FuzzRun>> LoadFuzzRuns(const std::filesystem::path& path);

// One FuzzTarget per target named by a run or a stats file, in the order
// first seen (runs first). Several stats files for one target are its
// workers' (libFuzzer's -fork runs each in a process of its own, each
// writing its file): they are added up (MergeWorkerStats).
Result<std::vector<FuzzTarget>> MergeFuzz(const std::vector<FuzzRun>& runs, const std::vector<FuzzStats>& stats);

// Two workers of one target: inputs, counters, reasons and the times a
// state was reached summed, the longer time (they ran side by side), a
// form completed if either completed it, the larger of each largest value.
FuzzStats MergeWorkerStats(const FuzzStats& a, const FuzzStats& b);

}  // namespace bpfdiff::report
