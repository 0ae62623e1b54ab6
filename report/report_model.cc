#include "report/report_model.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "report/planted_trend.h"

namespace bpfdiff::report {

std::string StatesSummary(const FuzzStats& stats) {
  if (stats.states_reached.empty() && stats.states_largest.empty()) return "";
  std::string not_reached;
  for (const auto& [state, times] : stats.states_reached) {
    if (times == 0) not_reached += fmt::format("{}{}", not_reached.empty() ? "" : ", ", state);
  }
  std::string line = not_reached.empty() ? "every state reached" : "states not reached: " + not_reached;
  std::string largest;
  for (const auto& [value, most] : stats.states_largest) {
    largest += fmt::format("{}{} {}", largest.empty() ? "" : ", ", value, most);
  }
  if (!largest.empty()) line += "; largest: " + largest;
  return line;
}

bool ReportModel::Passed() const {
  const bool fuzz_clean = std::none_of(fuzz.begin(), fuzz.end(), [](const FuzzTarget& t) { return t.failed(); });
  const bool gate_passed = !planted_gate || planted_gate->Passed();
  const bool test_bpf_passed = !test_bpf || test_bpf->AllPassed();
  const bool trees_passed =
      std::all_of(kernel_trees.begin(), kernel_trees.end(), [](const KernelTreeRun& t) { return t.Passed(); });
  return conformance.failed == 0 && test_bpf_passed && trees_passed && fuzz_clean && gate_passed &&
         PlantedRegressions(*this).empty();
}

HistoryEntry ReportModel::Headline() const {
  HistoryEntry entry;
  entry.timestamp = timestamp;
  entry.tests = static_cast<int64_t>(conformance.results.size());
  entry.passed = conformance.passed;
  entry.failed = conformance.failed;
  entry.skipped = conformance.skipped;
  for (const auto& counts : conformance.PerEngine()) entry.not_comparable += counts.not_comparable;
  for (const auto& target : fuzz) {
    if (target.stats) entry.fuzz_inputs += target.stats->inputs;
    if (target.failed()) ++entry.fuzz_failures;
    if (target.stats && target.stats->forms) {
      entry.forms_completed = entry.forms_completed.value_or(0) + target.stats->forms->completed;
      entry.forms_total = entry.forms_total.value_or(0) + target.stats->forms->total;
    }
  }
  entry.planted_total = static_cast<int64_t>(planted.size());
  entry.planted_detected = std::count_if(planted.begin(), planted.end(), [](const PlantedCheck& p) { return p.detected(); });
  const PlantedSummary summary = Summarize(planted);
  if (summary.measured_from_empty > 0) {
    entry.planted_detected_from_empty = summary.detected_from_empty;
    entry.planted_empty_runs = static_cast<int64_t>(planted.front().from_empty.size());
  }
  if (!planted.empty()) entry.planted_limit_seconds = planted.front().limit_seconds;
  for (const auto& p : planted) {
    if (!p.from_seeds) continue;
    entry.planted_seconds_from_seeds[p.bug] =
        p.from_seeds->detected ? std::optional<double>(p.from_seeds->seconds) : std::nullopt;
  }
  return entry;
}

std::vector<SuiteCount> ReportModel::Suites() const {
  std::vector<SuiteCount> suites;
  for (const auto& test : conformance.results) {
    auto it = std::find_if(suites.begin(), suites.end(), [&](const SuiteCount& s) { return s.suite == test.suite; });
    if (it == suites.end()) it = suites.insert(suites.end(), SuiteCount{test.suite, 0, false});
    ++it->tests;
  }
  if (upstream_suite) {
    // "dir", "dir/" and "a/../dir" name one suite.
    auto normal = [](std::string_view path) {
      auto p = std::filesystem::path(path).lexically_normal();
      return p.has_filename() ? p : p.parent_path();
    };
    for (auto& suite : suites) suite.upstream = normal(suite.suite) == normal(*upstream_suite);
  }
  return suites;
}

std::vector<FindingGroup> ReportModel::FindingsByKind() const {
  std::vector<FindingGroup> groups;
  for (const auto& target : fuzz) {
    if (!target.run || target.run->result != "finding") continue;
    const std::string kind = target.run->finding_kind.empty() ? "kind not printed" : target.run->finding_kind;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const FindingGroup& g) { return g.kind == kind; });
    if (it == groups.end()) it = groups.insert(groups.end(), FindingGroup{kind, {}});
    it->targets.push_back(target.target);
  }
  return groups;
}

}  // namespace bpfdiff::report
