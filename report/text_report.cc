// The short text summary: what the nightly prints. Reasons are cut to one
// line each (a rejected program's listing once made a multi-kilobyte line);
// the full text is in report.json and report.html.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/tree_fuzzing.h"
#include "report/markup_escape.h"
#include "report/planted_trend.h"
#include "report/reasons.h"
#include "report/report_writers.h"

namespace bpfdiff::report {
namespace {

constexpr size_t kReasonWidth = 160;
constexpr size_t kTopReasons = 5;
constexpr size_t kTrendNights = 14;
constexpr size_t kLeastCovered = 5;
constexpr size_t kWrapWidth = 100;

void AppendConformance(std::string& out, const ConformanceSummary& c) {
  fmt::format_to(std::back_inserter(out), "conformance: {} tests: {} passed, {} failed, {} skipped\n",
                 c.results.size(), c.passed, c.failed, c.skipped);
  for (const auto& e : c.PerEngine()) {
    fmt::format_to(std::back_inserter(out), "  {:<10} {:>4} passed {:>4} failed {:>4} skipped {:>4} not comparable\n",
                   e.engine, e.passed, e.failed, e.skipped, e.not_comparable);
  }
  for (const auto& test : c.results) {
    if (test.status != TestStatus::kFail) continue;
    std::string engines;
    for (const auto& e : test.engines) {
      if (e.status == TestStatus::kFail) engines += (engines.empty() ? "" : ",") + e.engine;
    }
    fmt::format_to(std::back_inserter(out), "  FAIL {} [{}]: {}\n", test.name, engines,
                   OneLine(test.reason, kReasonWidth));
  }
}

void AppendSuites(std::string& out, const ReportModel& model) {
  const std::vector<SuiteCount> counts = model.Suites();
  std::string suites;
  for (const auto& s : counts) {
    suites += fmt::format("{}{} ({} tests{})", suites.empty() ? "" : ", ", s.suite.empty() ? "(unnamed)" : s.suite,
                          s.tests, s.upstream ? ", upstream bpf_conformance" : "");
  }
  fmt::format_to(std::back_inserter(out), "  suites: {}\n", suites.empty() ? "none" : suites);
  if (!model.upstream_suite) {
    fmt::format_to(std::back_inserter(out), "  {}\n  ({})\n", kNoUpstreamSuite, kHowToRunUpstreamSuite);
  } else if (std::none_of(counts.begin(), counts.end(), [](const SuiteCount& s) { return s.upstream; })) {
    fmt::format_to(std::back_inserter(out), "  the upstream suite {} gave no test\n", *model.upstream_suite);
  }
}

// Line and branch coverage per area, and the least-covered files.
void AppendSourceCoverage(std::string& out, const SourceCoverage& coverage) {
  auto o = std::back_inserter(out);
  auto percent = [](std::optional<double> p) { return p ? fmt::format("{:.1f}%", *p) : std::string("-"); };
  fmt::format_to(o, "source coverage (seeds and tonight's fuzzing), lines / branches:\n");
  for (const auto& area : coverage.areas) {
    if (area.counts.lines == 0) continue;
    fmt::format_to(o, "  {:<10} {:>6} of {:>5} lines {:>6}, {:>5} of {:>5} branches {:>6}\n", area.area,
                   area.counts.lines_covered, area.counts.lines, percent(area.counts.LinePercent()),
                   area.counts.branches_covered, area.counts.branches, percent(area.counts.BranchPercent()));
  }
  fmt::format_to(o, "  {:<10} {:>6} of {:>5} lines {:>6}, {:>5} of {:>5} branches {:>6}\n", "total",
                 coverage.total.lines_covered, coverage.total.lines, percent(coverage.total.LinePercent()),
                 coverage.total.branches_covered, coverage.total.branches, percent(coverage.total.BranchPercent()));
  std::string least;
  for (size_t i = 0; i < std::min<size_t>(kLeastCovered, coverage.files.size()); ++i) {
    const auto& f = coverage.files[i];
    least += fmt::format("{}{} {}", least.empty() ? "" : ", ", f.path, percent(f.counts.LinePercent()));
  }
  fmt::format_to(o, "  least covered: {}\n", least);
}

void AppendReasons(std::string& out, const ReportModel& model, ReasonKind kind, std::string_view title) {
  const TopReasons reasons = MostFrequentReasons(model, kind, kTopReasons);
  if (reasons.top.empty()) return;
  fmt::format_to(std::back_inserter(out), "top {} reasons ({} cases, {} distinct):\n", title, reasons.total,
                 reasons.distinct);
  for (const auto& r : reasons.top) {
    fmt::format_to(std::back_inserter(out), "  {:>7}  {}: {}\n", r.count, r.source, OneLine(r.reason, kReasonWidth));
  }
}

std::string FuzzLine(const FuzzTarget& t) {
  std::string line = fmt::format("  {:<18}", t.target);
  if (t.run && !t.run->clean()) {
    std::string result = t.run->result;
    std::transform(result.begin(), result.end(), result.begin(), [](unsigned char c) { return std::toupper(c); });
    line += fmt::format(" {} (exit {}{}{}){}, artifacts in {}", result, t.run->exit_code,
                        t.run->timeouts ? fmt::format(", {} timeouts", t.run->timeouts) : "",
                        t.run->ooms ? fmt::format(", {} out of memory", t.run->ooms) : "",
                        t.run->finding_kind.empty() ? "" : fmt::format(": {}", t.run->finding_kind), t.run->artifacts);
    if (!t.stats) return line;
    line += ";";
  }
  if (!t.stats) return line + " no stats (the target wrote none)";
  const FuzzStats& s = *t.stats;
  line += fmt::format(" {:.0f} s, {} inputs", s.seconds, s.inputs);
  for (const auto& [name, count] : s.counters) line += fmt::format(", {} {}", name, count);
  if (!s.not_comparable.empty()) {
    uint64_t cases = 0;
    for (const auto& reason : s.not_comparable) cases += reason.second;
    line += fmt::format("; not comparable {} ({} reason{}, top reasons above)", cases, s.not_comparable.size(),
                        s.not_comparable.size() == 1 ? "" : "s");
  }
  if (s.forms) line += fmt::format("; forms {}/{} completed", s.forms->completed, s.forms->total);
  if (const std::string states = StatesSummary(s); !states.empty()) line += "; " + states;
  return line;
}

// `text` in lines of at most kWrapWidth characters, broken at spaces, each
// starting with `indent`: a long sentence stays readable in a terminal.
std::string Wrapped(std::string_view text, std::string_view indent) {
  std::string out, line;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > kWrapWidth) {
      out += fmt::format("{}{}\n", indent, line);
      line.clear();
    }
    line += fmt::format("{}{}", line.empty() ? "" : " ", word);
  }
  if (!line.empty()) out += fmt::format("{}{}\n", indent, line);
  return out;
}

// The tree's files, least covered first, each with the functions never
// run that nobody has explained yet (the explained ones are in the HTML).
void AppendKernelCoverage(std::string& out, const KernelCoverage& coverage) {
  auto o = std::back_inserter(out);
  auto percent = [](std::optional<double> p) { return p ? fmt::format("{:.1f}%", *p) : std::string("-"); };
  fmt::format_to(o, "kernel tree coverage ({}), lines / branches / functions:\n", coverage.tree.string());
  for (const auto& file : coverage.files) {
    const CoverageCounts& c = file.counts;
    fmt::format_to(o, "  {:<30} {:>5} of {:>5} lines {:>6}, {:>4} of {:>4} branches {:>6}, {:>3} of {:>3} functions\n",
                   file.path, c.lines_covered, c.lines, percent(c.LinePercent()), c.branches_covered, c.branches,
                   percent(c.BranchPercent()), c.functions_covered, c.functions);
    if (!file.never_run.empty()) {
      std::string unexplained;
      size_t explained = 0;
      for (const auto& f : file.never_run) {
        if (f.reason.empty()) {
          unexplained += fmt::format(" {}:{}", f.name, f.line);
        } else {
          ++explained;
        }
      }
      fmt::format_to(o, "    {} functions never run, {} with a reason (report.html)\n", file.never_run.size(),
                     explained);
      if (!unexplained.empty()) out += Wrapped("no reason recorded:" + unexplained, "    ");
    }
    if (!file.uncovered.empty()) {
      std::string unexplained;
      for (const auto& stretch : file.uncovered) {
        if (stretch.reason.empty()) unexplained += fmt::format(" {}:{}", stretch.function, stretch.first_line);
      }
      fmt::format_to(o, "    {} lines never run in {} stretches of functions that run, {} of them with a reason "
                        "(report.html)\n",
                     file.UncoveredLines(), file.uncovered.size(), file.UncoveredLinesExplained());
      if (!file.source_error.empty()) fmt::format_to(o, "    {}\n", file.source_error);
      if (!unexplained.empty()) out += Wrapped("no reason recorded:" + unexplained, "    ");
    }
  }
}

void AppendGate(std::string& out, const PlantedGate& gate) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, "planted-bug gate: {}/{} caught by replaying their reproducers, clean without the bug{}\n",
                 gate.CaughtCount(), gate.checks.size(), gate.Passed() ? "" : ": FAILED");
  if (!gate.planted_in_environment.empty()) {
    fmt::format_to(o, "  (BPFDIFF_PLANTED_BUG={} was set for the whole night)\n", gate.planted_in_environment);
  }
  for (const auto& c : gate.checks) {
    if (!c.passed()) fmt::format_to(o, "  FAIL {} ({}): {}\n", c.bug, c.target, OneLine(c.problem, kReasonWidth));
  }
  for (const auto& problem : gate.problems) fmt::format_to(o, "  FAIL {}\n", OneLine(problem, kReasonWidth));
}

// The benchmark is a measurement: each bug's times, and for a bug missed
// from the seeds how the previous nights saw it; only a regression fails.
void AppendPlanted(std::string& out, const ReportModel& model) {
  const std::vector<PlantedCheck>& planted = model.planted;
  const PlantedSummary summary = Summarize(planted);
  auto o = std::back_inserter(out);
  const std::optional<double> limit = planted.front().limit_seconds;
  fmt::format_to(o, "bug-finding benchmark (a measurement{}): {}/{} detected from the seeds",
                 limit ? fmt::format(", at most {:.0f} s a run", *limit) : "", summary.detected_from_seeds,
                 summary.bugs);
  if (summary.measured_from_empty > 0) {
    fmt::format_to(o, "; from an empty corpus {}/{} within the limit (median {}, worst {})",
                   summary.detected_from_empty, summary.measured_from_empty,
                   summary.median_from_empty ? fmt::format("{:.1f} s", *summary.median_from_empty) : "-",
                   summary.worst_from_empty ? fmt::format("{:.1f} s", *summary.worst_from_empty) : "-");
  }
  fmt::format_to(o, "\n");
  for (const auto& p : planted) {
    std::string seeds = "-";
    if (p.from_seeds) {
      seeds = p.from_seeds->detected ? fmt::format("detected in {:.1f} s", p.from_seeds->seconds)
                                     : fmt::format("not detected in {:.0f} s ({})", p.from_seeds->seconds,
                                                   SeedsMissNote(p, model.history));
    }
    std::string empty;
    if (!p.from_empty.empty()) {
      const auto median = p.EmptyMedianSeconds();
      empty = median ? fmt::format(", from empty {:.1f} s", *median) : ", from empty not detected";
    }
    fmt::format_to(o, "  {:<32} {:<17} {}{}\n", p.bug, p.target, seeds, empty);
  }
  const std::vector<PlantedRegression> regressions = PlantedRegressions(model);
  for (const auto& r : regressions) fmt::format_to(o, "  REGRESSION: {}\n", r.what);
  fmt::format_to(o, "  against the history: {}\n{}",
                 regressions.empty() ? "no regression" : fmt::format("{} REGRESSION{}", regressions.size(),
                                                                     regressions.size() == 1 ? "" : "S"),
                 Wrapped("(" + PlantedTolerance() + ")", "  "));
}

void AppendTrend(std::string& out, const ReportModel& model) {
  std::vector<HistoryEntry> nights = model.history;
  if (nights.size() > kTrendNights - 1) nights.erase(nights.begin(), nights.end() - (kTrendNights - 1));
  nights.push_back(model.Headline());
  auto series = [&](auto field) {
    std::string values;
    for (const auto& n : nights) values += fmt::format("{}{}", values.empty() ? "" : " ", field(n));
    return values;
  };
  fmt::format_to(std::back_inserter(out), "trend over {} night{} (oldest first, tonight last):\n", nights.size(),
                 nights.size() == 1 ? "" : "s");
  fmt::format_to(std::back_inserter(out), "  conformance failed: {}\n", series([](const HistoryEntry& n) { return n.failed; }));
  fmt::format_to(std::back_inserter(out), "  not comparable:     {}\n",
                 series([](const HistoryEntry& n) { return n.not_comparable; }));
  fmt::format_to(std::back_inserter(out), "  fuzz inputs:        {}\n",
                 series([](const HistoryEntry& n) { return n.fuzz_inputs; }));
  fmt::format_to(std::back_inserter(out), "  planted detected:   {}\n", series([](const HistoryEntry& n) {
                   return fmt::format("{}/{}", n.planted_detected, n.planted_total);
                 }));
  fmt::format_to(std::back_inserter(out), "  planted from empty: {}\n", series([](const HistoryEntry& n) {
                   return n.planted_detected_from_empty ? fmt::format("{}", *n.planted_detected_from_empty)
                                                        : std::string("-");
                 }));
}

// lib/test_bpf.c's suites: a line per suite and engine, test_bpf's
// Summary and bpfdiff's comparison, then each failure and what was left out.
void AppendTestBpf(std::string& out, const TestBpfSummary& summary) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, "test_bpf ({}), per engine: test_bpf's summary | bpfdiff against the interpreter:\n",
                 summary.tree.empty() ? "lib/test_bpf.c" : summary.tree);
  for (const auto& [suite, tallies] : {std::pair{"test_bpf", &summary.cases},
                                        std::pair{"test_tail_calls", &summary.tail_calls}}) {
    for (const TestBpfTally& t : *tallies) {
      fmt::format_to(o, "  {:<16} {:<22} {:>4} PASSED, {:>3} FAILED, [{}/{} JIT'ed] | {} agree, {} diverge, {} not comparable{}\n",
                     suite, t.engine, t.passed, t.failed, t.jited, t.run, t.agreed, t.diverged, t.not_comparable,
                     t.not_run == 0 ? "" : fmt::format(", {} not run", t.not_run));
    }
  }
  for (const auto& f : summary.failures) {
    out += OneLine(fmt::format("  FAIL {} #{} {} on {}: {}", f.suite, f.index, f.name, f.engine, f.reason),
                   kReasonWidth) + "\n";
  }
  for (const auto& [reason, cases] : summary.left_out) {
    out += OneLine(fmt::format("  left out: {} cases: {}", cases, reason), kReasonWidth) + "\n";
  }
}

// The kernel trees first: a block per tree, its engines' conformance, its
// test_bpf in one line per engine, and the known findings it did not run.
void AppendKernelTrees(std::string& out, const std::vector<KernelTreeRun>& trees,
                       const std::vector<FuzzTarget>& fuzz) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, "kernel trees ({}):\n", trees.size());
  for (size_t index = 0; index < trees.size(); ++index) {
    const KernelTreeRun& tree = trees[index];
    const ConformanceSummary& c = tree.conformance;
    fmt::format_to(o, "  {}: {}\n", tree.tree, tree.Passed() ? "passed" : "FAILED");
    for (const auto& e : c.PerEngine()) {
      fmt::format_to(o, "    conformance {:<22} {:>4} passed {:>4} failed {:>4} skipped {:>4} not comparable\n",
                     e.engine, e.passed, e.failed, e.skipped, e.not_comparable);
    }
    for (const auto& test : c.results) {
      if (test.status == TestStatus::kFail) {
        out += OneLine(fmt::format("    FAIL {}: {}", test.name, test.reason), kReasonWidth) + "\n";
      }
    }
    if (tree.test_bpf) {
      for (const TestBpfTally& t : tree.test_bpf->cases) {
        fmt::format_to(o, "    test_bpf    {:<22} {:>4} PASSED {:>4} FAILED [{}/{} JIT'ed], {} diverge\n", t.engine,
                       t.passed, t.failed, t.jited, t.run, t.diverged);
      }
    }
    if (!tree.known_findings.empty()) {
      fmt::format_to(o, "    known findings, left out of the conformance above (kernelsrc/SHIMS.md): {}\n",
                     fmt::join(tree.known_findings, ", "));
    }
    for (const KnownFindingDoc& doc : tree.known_docs) {
      const std::string status = tree.KnownStatus(doc.name);
      out += fmt::format("      {}: {}; reproducer {}{}; commits cited: {}\n", doc.name, doc.title, doc.reproducer,
                         status.empty() ? "" : " " + status,
                         doc.commits.empty() ? "none" : fmt::format("{}", fmt::join(doc.commits, ", ")));
    }
    const TreeFuzzing fuzzing = FuzzingOfTree(TreeVersion(tree.tree), index == 0, fuzz);
    if (!fuzzing.empty()) {
      std::vector<std::string> known;
      for (const auto& [name, count] : fuzzing.known) known.push_back(fmt::format("{} {}", name, count));
      fmt::format_to(o, "    fuzzing     {} programs compared by its engines; known findings met: {}; findings: {}\n",
                     fuzzing.compared, known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")),
                     fuzzing.findings.empty() ? "none" : fmt::format("{}", fmt::join(fuzzing.findings, "; ")));
    }
  }
}

}  // namespace

std::string TextReport(const ReportModel& model) {
  std::string out = fmt::format("bpfdiff nightly report {}: {}\n", model.timestamp,
                                model.Passed() ? "all parts passed" : "FAILED");
  if (!model.kernel_trees.empty()) AppendKernelTrees(out, model.kernel_trees, model.fuzz);
  out += "bpfdiff's model (the reference):\n";
  AppendConformance(out, model.conformance);
  AppendSuites(out, model);
  AppendReasons(out, model, ReasonKind::kNotComparable, "not comparable");
  AppendReasons(out, model, ReasonKind::kRejected, "rejected");
  if (!model.fuzz.empty()) {
    out += "fuzz:\n";
    for (const auto& target : model.fuzz) out += FuzzLine(target) + "\n";
    if (const auto groups = model.FindingsByKind(); !groups.empty()) {
      out += fmt::format("findings by kind ({}, one bug each):\n", groups.size());
      for (const auto& group : groups) {
        out += fmt::format("  {}: {}\n", group.kind, fmt::join(group.targets, ", "));
      }
    }
  }
  if (model.test_bpf) AppendTestBpf(out, *model.test_bpf);
  if (model.kernel_coverage) AppendKernelCoverage(out, *model.kernel_coverage);
  if (model.source_coverage) AppendSourceCoverage(out, *model.source_coverage);
  if (model.planted_gate) AppendGate(out, *model.planted_gate);
  if (!model.planted.empty()) AppendPlanted(out, model);
  AppendTrend(out, model);
  for (const auto& note : model.notes) out += fmt::format("note: {}\n", OneLine(note, kReasonWidth));
  return out;
}

}  // namespace bpfdiff::report
