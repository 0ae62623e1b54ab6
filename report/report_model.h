// Everything one nightly report shows, merged from its input files:
// conformance results per engine, what each fuzz target did, the
// planted-bug gate and benchmark, and the previous nights. The writers
// (report_writers.h) turn one model into text, JUnit, JSON and HTML.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/stats/stats_file.h"
#include "harness/conformance/results.h"
#include "harness/test_bpf/results.h"
#include "report/kernel_coverage.h"
#include "report/kernel_trees.h"
#include "report/planted_gate.h"
#include "report/planted_results.h"
#include "report/source_coverage.h"

namespace bpfdiff::report {

// What each fuzz target counted: the stats file's one schema
// (fuzz/stats/stats_file.h).
using fuzz::FormCoverage;
using fuzz::NamedCounts;
using FuzzStats = fuzz::FuzzStatsFile;

// How the nightly's run of a fuzz target ended (written by ci/nightly.sh).
struct FuzzRun {
  std::string target;
  // "clean", "finding", "error" (the target failed to run), "timeout" or
  // "oom" (libFuzzer's -fork counted inputs that hung or ran out of memory)
  std::string result;
  int64_t exit_code = 0;
  int64_t timeouts = 0, ooms = 0;
  double seconds = 0;
  std::string artifacts;  // where the log and any finding are
  // A finding's kind, as the target printed it ("culprit jset32 (jit)",
  // "pack invariant icache discipline"): what it files under (one
  // ClusterFuzz crash state per kind); empty when none was printed.
  std::string finding_kind;
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

// A target's state coverage (the stats file's "states", pack_fuzzer's) in
// one line: the states it never reached, named, then the largest values;
// empty when the target counts no states.
//   "states not reached: a, b; largest: most_live_programs 48, ..."
std::string StatesSummary(const FuzzStats& stats);

// The headline numbers of one night: what the trend is drawn from.
struct HistoryEntry {
  std::string timestamp;  // UTC, ISO 8601
  int64_t tests = 0, passed = 0, failed = 0, skipped = 0;
  int64_t not_comparable = 0;  // engine runs, summed over engines
  int64_t fuzz_inputs = 0, fuzz_failures = 0;
  std::optional<int64_t> forms_completed, forms_total;
  int64_t planted_detected = 0, planted_total = 0;  // from the seeds
  std::optional<int64_t> planted_detected_from_empty;  // median within the limit
  // What later nights judge the benchmark against (planted_trend.h): its
  // settings, and per bug the seconds to detection from the seeds
  // (nullopt: not detected within the limit). Absent from nights written
  // before they were kept, and from nights that ran no benchmark.
  std::optional<double> planted_limit_seconds;
  std::optional<int64_t> planted_empty_runs;  // runs from an empty corpus per bug
  std::map<std::string, std::optional<double>> planted_seconds_from_seeds;
};

// The conformance suites a night ran, with their test counts.
struct SuiteCount {
  std::string suite;  // as given to `bpfdiff conformance --suite`
  int tests = 0;
  bool upstream = false;  // the upstream bpf_conformance suite
};

struct FindingGroup {
  std::string kind;
  std::vector<std::string> targets;
};

struct ReportModel {
  std::string timestamp;  // UTC, ISO 8601: when the report was made
  ConformanceSummary conformance;
  // The upstream bpf_conformance suite the night was given (nightly:
  // BPFDIFF_UPSTREAM_SUITE); nullopt when none was, and only bpfdiff's own
  // vectors ran.
  std::optional<std::string> upstream_suite;
  std::optional<SourceCoverage> source_coverage;
  // The Linux tree's files the kernel engines compile: what the nights test.
  std::optional<KernelCoverage> kernel_coverage;
  // lib/test_bpf.c of that tree on every engine (bpfdiff test-bpf).
  std::optional<TestBpfSummary> test_bpf;
  // Every Linux tree the night ran the kernel's code from, the build's own
  // first: its kernel engines' conformance and test_bpf (kernel_trees.h).
  std::vector<KernelTreeRun> kernel_trees;
  std::vector<FuzzTarget> fuzz;
  std::vector<PlantedCheck> planted;  // the benchmark: a measurement
  std::optional<PlantedGate> planted_gate;  // the deterministic check of every planted bug
  std::vector<HistoryEntry> history;  // previous nights, oldest first
  std::vector<std::string> notes;     // things the reader should know (a history file skipped, ...)
  // Optional inputs that did not load, each the loader's message naming
  // its file (LoadReportInputs): the report is made from the others.
  std::vector<std::string> inputs_left_out;

  // Every part passed: no conformance failure, no test_bpf failure or
  // divergence, none in any kernel tree, no fuzz finding or error,
  // every planted bug caught by the gate, and no regression of the
  // benchmark against the history (planted_trend.h). A bug the benchmark
  // did not detect within its limit is not, by itself, a failure.
  bool Passed() const;
  // This night's headline numbers.
  HistoryEntry Headline() const;
  // The suites of the conformance results, in the order first seen.
  std::vector<SuiteCount> Suites() const;
  // Tonight's findings grouped by their kind (FuzzRun::finding_kind), in
  // the order first seen: the bugs ClusterFuzz would file, each with the
  // targets that found it. A finding whose target printed no kind is
  // grouped under "kind not printed".
  std::vector<FindingGroup> FindingsByKind() const;
};

// What the summary and the HTML say when no upstream suite was named.
inline constexpr std::string_view kNoUpstreamSuite =
    "only bpfdiff's own vectors ran: the upstream bpf_conformance suite was not named";
inline constexpr std::string_view kHowToRunUpstreamSuite =
    "to run it, clone https://github.com/Alan-Jowett/bpf_conformance and set BPFDIFF_UPSTREAM_SUITE to its tests/";

}  // namespace bpfdiff::report
