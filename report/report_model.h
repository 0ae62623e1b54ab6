// Everything one nightly report shows, merged from its input files:
// conformance results per engine, what each fuzz target did, the
// planted-bug self-check and the previous nights. The writers
// (report_writers.h) turn one model into text, JUnit, JSON and HTML.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/conformance/runner.h"

namespace bpfdiff::report {

using NamedCounts = std::vector<std::pair<std::string, int64_t>>;  // in the writer's order

// Coverage of the opcode table by a generating fuzz target.
struct FormCoverage {
  int64_t total = 0, generated = 0, completed = 0;
  std::vector<std::string> not_completed;  // forms generated or not, that never ran to completion
};

// The stats file a fuzz target writes at exit (BPFDIFF_FUZZ_STATS_JSON).
struct FuzzStats {
  std::string target;
  double seconds = 0;
  int64_t inputs = 0;
  NamedCounts counters;
  NamedCounts poisoned;  // reason -> cases, as the target wrote them
  NamedCounts rejected;
  std::optional<FormCoverage> forms;
};

// How the nightly's run of a fuzz target ended (written by ci/nightly.sh).
struct FuzzRun {
  std::string target;
  std::string result;  // "clean", "finding" or "error"
  int64_t exit_code = 0;
  double seconds = 0;
  std::string artifacts;  // where the log and any finding are
  bool clean() const { return result == "clean"; }
};

// One fuzz target in the report: its run, its stats, or both. A run
// without stats is shown as "no stats" (a finding aborts before the stats
// are written; older targets write none).
struct FuzzTarget {
  std::string target;
  std::optional<FuzzRun> run;
  std::optional<FuzzStats> stats;
  bool failed() const { return run && !run->clean(); }
};

// One planted bug run against the fuzz target that must catch it.
struct PlantedCheck {
  std::string bug;
  std::string target;
  bool detected = false;
  double seconds = 0;                  // to detection, or spent without one
  std::optional<double> limit_seconds;
  std::string artifacts;
};

// The headline numbers of one night: what the trend is drawn from.
struct HistoryEntry {
  std::string timestamp;  // UTC, ISO 8601
  int64_t tests = 0, passed = 0, failed = 0, skipped = 0;
  int64_t not_comparable = 0;  // engine runs, summed over engines
  int64_t fuzz_inputs = 0, fuzz_failures = 0;
  std::optional<int64_t> forms_completed, forms_total;
  int64_t planted_detected = 0, planted_total = 0;
};

struct ReportModel {
  std::string timestamp;  // UTC, ISO 8601: when the report was made
  ConformanceSummary conformance;
  std::vector<FuzzTarget> fuzz;
  std::vector<PlantedCheck> planted;
  std::vector<HistoryEntry> history;  // previous nights, oldest first
  std::vector<std::string> notes;     // things the reader should know (a history file skipped, ...)

  // Every part passed: no conformance failure, no fuzz finding or error,
  // every planted bug detected.
  bool Passed() const;
  // This night's headline numbers.
  HistoryEntry Headline() const;
};

}  // namespace bpfdiff::report
