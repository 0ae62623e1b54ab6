// report.html: one self-contained page (inline CSS and JS, nothing fetched)
// with the summary, the planted-bug gate and benchmark, the fuzz counters, the
// opcode-form coverage, the coverage of the kernel tree's files and of our
// own model, the trend over nights and the engines x tests
// matrix, last because it is long. Every string from the inputs goes
// through EscapeMarkup; the JS only filters rows and counts what it shows.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/tree_fuzzing.h"
#include "report/markup_escape.h"
#include "report/planted_trend.h"
#include "report/reasons.h"
#include "report/report_writers.h"

namespace bpfdiff::report {
namespace {

constexpr size_t kTopReasons = 10;
constexpr size_t kCellReasonWidth = 300;

constexpr std::string_view kStyle = R"css(
body { font-family: "DejaVu Sans", sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; }
h2 { font-size: 1.1em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 4px; font-weight: bold; }
.ok { background: #c8efd2; color: #124d22; }
.bad { background: #f6c4c4; color: #7a1010; }
.s-pass { background: #d9f3e0; }
.s-fail { background: #f6c4c4; font-weight: bold; }
.s-skip { background: #ececec; color: #666; }
.s-not_comparable { background: #fbe6b4; }
.reason { color: #555; max-width: 60em; word-break: break-word; }
.muted { color: #777; }
svg.spark { vertical-align: middle; }
#matrix-controls { margin: 0.4em 0; }
#matrix-shown { margin-left: 1em; color: #555; }
)css";

// Shows only the matrix rows the filter asks for and says how many.
constexpr std::string_view kScript = R"js(
(function () {
  var select = document.getElementById('matrix-filter');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#matrix tbody tr'));
  var shown = document.createElement('span');
  shown.id = 'matrix-shown';
  select.parentNode.appendChild(shown);
  function wanted(row, filter) {
    var status = row.getAttribute('data-status');
    var notComparable = row.getAttribute('data-not-comparable') === '1';
    if (filter === 'fail') return status === 'fail';
    if (filter === 'attention') return status === 'fail' || notComparable;
    if (filter === 'skip') return status === 'skip';
    return true;
  }
  function apply() {
    var count = 0;
    rows.forEach(function (row) {
      var show = wanted(row, select.value);
      row.style.display = show ? '' : 'none';
      if (show) count++;
    });
    shown.textContent = 'showing ' + count + ' of ' + rows.length + ' tests';
  }
  select.addEventListener('change', apply);
  apply();
})();
)js";

using Out = std::back_insert_iterator<std::string>;

std::string E(std::string_view text) { return EscapeMarkup(text); }

std::string_view StatusLabel(TestStatus status) {
  switch (status) {
    case TestStatus::kPass: return "pass";
    case TestStatus::kFail: return "FAIL";
    case TestStatus::kSkip: return "skip";
    case TestStatus::kNotComparable: return "n/c";
  }
  return "?";
}

// A small line chart of `values`, scaled to their own range.
std::string Sparkline(const std::vector<double>& values) {
  constexpr double kWidth = 160, kHeight = 28, kPad = 3;
  if (values.empty()) return "";
  const auto bounds = std::minmax_element(values.begin(), values.end());
  const double lo = *bounds.first, range = *bounds.second - lo;
  auto x = [&](size_t i) { return values.size() == 1 ? kWidth / 2 : kPad + static_cast<double>(i) * (kWidth - 2 * kPad) / static_cast<double>(values.size() - 1); };
  auto y = [&](double v) { return range == 0 ? kHeight / 2 : kHeight - kPad - (v - lo) * (kHeight - 2 * kPad) / range; };
  std::string points;
  for (size_t i = 0; i < values.size(); ++i) points += fmt::format("{:.1f},{:.1f} ", x(i), y(values[i]));
  return fmt::format(
      "<svg class=\"spark\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" xmlns=\"http://www.w3.org/2000/svg\">"
      "<polyline fill=\"none\" stroke=\"#3465a4\" stroke-width=\"1.5\" points=\"{2}\"/>"
      "<circle cx=\"{3:.1f}\" cy=\"{4:.1f}\" r=\"2.5\" fill=\"#cc0000\"/></svg>",
      kWidth, kHeight, points, x(values.size() - 1), y(values.back()));
}

void Summary(Out out, const ReportModel& model) {
  const ConformanceSummary& c = model.conformance;
  fmt::format_to(out, "<h2>bpfdiff's model, the reference</h2>\n<p>Conformance: {} tests, {} passed, {} failed, {} skipped.</p>\n",
                 c.results.size(), c.passed, c.failed, c.skipped);
  fmt::format_to(out, "<table id=\"engine-counts\"><thead><tr><th>engine</th><th>passed</th><th>failed</th>"
                      "<th>skipped</th><th>not comparable</th></tr></thead><tbody>\n");
  for (const auto& e : c.PerEngine()) {
    fmt::format_to(out,
                   "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num{}\">{}</td><td class=\"num\">{}</td>"
                   "<td class=\"num\">{}</td></tr>\n",
                   E(e.engine), e.passed, e.failed ? " s-fail" : "", e.failed, e.skipped, e.not_comparable);
  }
  fmt::format_to(out, "</tbody></table>\n");
  const std::vector<SuiteCount> suites = model.Suites();
  fmt::format_to(out, "<p id=\"suites\">Suites:");
  for (size_t i = 0; i < suites.size(); ++i) {
    fmt::format_to(out, "{} <code>{}</code> ({} tests{})", i == 0 ? "" : ",", E(suites[i].suite), suites[i].tests,
                   suites[i].upstream ? ", upstream bpf_conformance" : "");
  }
  fmt::format_to(out, ".</p>\n");
  if (!model.upstream_suite) {
    fmt::format_to(out, "<p id=\"no-upstream-suite\" class=\"verdict bad\">Note: {}; {} directory.</p>\n",
                   E(kNoUpstreamSuite), E(kHowToRunUpstreamSuite));
  }
  for (const auto& note : model.notes) fmt::format_to(out, "<p class=\"muted\">Note: {}</p>\n", E(note));
}

std::string Percent(std::optional<double> p) { return p ? fmt::format("{:.1f}%", *p) : "&mdash;"; }

void CoverageCells(Out out, const CoverageCounts& c) {
  fmt::format_to(out,
                 "<td class=\"num\">{}/{}</td><td class=\"num\">{}</td><td class=\"num\">{}/{}</td>"
                 "<td class=\"num\">{}</td><td class=\"num\">{}/{}</td>",
                 c.lines_covered, c.lines, Percent(c.LinePercent()), c.branches_covered, c.branches,
                 Percent(c.BranchPercent()), c.functions_covered, c.functions);
}

// `text` linked to `href`, or as it is when there is nowhere to link.
std::string Linked(std::string_view href, std::string_view text) {
  return href.empty() ? std::string(text) : fmt::format("<a href=\"{}\">{}</a>", E(href), text);
}

// lib/test_bpf.c on every engine: a table per suite, test_bpf's own
// counts beside bpfdiff's comparison, then the failures and what was left
// out with why.
// The kernel trees, first: one row per tree and engine (conformance, then
// test_bpf's eBPF cases), each tree's failures and the known findings it
// did not run.
void KernelTreesSection(Out out, const std::vector<KernelTreeRun>& trees, const std::vector<FuzzTarget>& fuzz) {
  fmt::format_to(out, "<h2>The kernel's code, per tree</h2>\n");
  if (trees.empty()) {
    fmt::format_to(out, "<p class=\"muted\">No Linux tree ran tonight (a build without one, or no results "
                        "given).</p>\n");
    return;
  }
  fmt::format_to(out, "<table id=\"kernel-trees\"><thead><tr><th>tree</th><th>engine</th><th>conformance passed</th>"
                      "<th>failed</th><th>skipped</th><th>not comparable</th><th>test_bpf passed</th>"
                      "<th>failed</th><th>diverge</th></tr></thead><tbody>\n");
  for (const KernelTreeRun& tree : trees) {
    const auto engines = tree.conformance.PerEngine();
    bool first = true;
    for (const auto& e : engines) {
      const TestBpfTally* t = nullptr;
      if (tree.test_bpf) {
        for (const TestBpfTally& tally : tree.test_bpf->cases) {
          if (tally.engine == e.engine) t = &tally;
        }
      }
      fmt::format_to(out, "<tr>");
      if (first) {
        fmt::format_to(out, "<td rowspan=\"{}\" class=\"{}\">{}</td>", engines.size(),
                       tree.Passed() ? "s-pass" : "s-fail", E(tree.tree));
      }
      first = false;
      fmt::format_to(out,
                     "<td>{}</td><td class=\"num\">{}</td><td class=\"num{}\">{}</td><td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td>",
                     E(e.engine), e.passed, e.failed ? " s-fail" : "", e.failed, e.skipped, e.not_comparable);
      if (t != nullptr) {
        fmt::format_to(out, "<td class=\"num\">{}</td><td class=\"num{}\">{}</td><td class=\"num{}\">{}</td>",
                       t->passed, t->failed ? " s-fail" : "", t->failed, t->diverged ? " s-fail" : "", t->diverged);
      } else {
        fmt::format_to(out, "<td class=\"muted\" colspan=\"3\">not run</td>");
      }
      fmt::format_to(out, "</tr>\n");
    }
  }
  fmt::format_to(out, "</tbody></table>\n");
  for (size_t t = 0; t < trees.size(); ++t) {
    const KernelTreeRun& tree = trees[t];
    const TreeFuzzing fuzzing = FuzzingOfTree(TreeVersion(tree.tree), t == 0, fuzz);
    if (!fuzzing.empty()) {
      fmt::format_to(out, "<p class=\"{}\">{}: fuzzing compared {} programs on its engines; known findings met: ",
                     fuzzing.findings.empty() ? "" : "s-fail", E(tree.tree), fuzzing.compared);
      if (fuzzing.known.empty()) fmt::format_to(out, "none");
      for (size_t i = 0; i < fuzzing.known.size(); ++i) {
        fmt::format_to(out, "{}<code>{}</code> {}", i == 0 ? "" : ", ", E(fuzzing.known[i].first),
                       fuzzing.known[i].second);
      }
      fmt::format_to(out, "; new findings: ");
      if (fuzzing.findings.empty()) fmt::format_to(out, "none");
      for (size_t i = 0; i < fuzzing.findings.size(); ++i) {
        fmt::format_to(out, "{}{}", i == 0 ? "" : "; ", E(fuzzing.findings[i]));
      }
      fmt::format_to(out, ".</p>\n");
    }
    for (const auto& test : tree.conformance.results) {
      if (test.status == TestStatus::kFail) {
        fmt::format_to(out, "<p class=\"s-fail\">{}: FAIL {}: {}</p>\n", E(tree.tree), E(test.name), E(test.reason));
      }
    }
    if (!tree.known_findings.empty()) {
      fmt::format_to(out, "<p class=\"muted\">{}: known findings, left out of the conformance above "
                          "(kernelsrc/SHIMS.md says where upstream stands on each): ",
                     E(tree.tree));
      for (size_t i = 0; i < tree.known_findings.size(); ++i) {
        fmt::format_to(out, "{}<code>{}</code>", i == 0 ? "" : ", ", E(tree.known_findings[i]));
      }
      fmt::format_to(out, ".</p>\n");
    }
    if (!tree.known_docs.empty()) {
      fmt::format_to(out, "<ul class=\"muted\">\n");
      for (const KnownFindingDoc& doc : tree.known_docs) {
        const std::string status = tree.KnownStatus(doc.name);
        fmt::format_to(out, "<li><code>{}</code>: {}; reproducer <code>{}</code>{}; commits cited: {}</li>\n",
                       E(doc.name), E(doc.title), E(doc.reproducer), status.empty() ? "" : " " + E(status),
                       doc.commits.empty() ? std::string("none") : E(fmt::format("{}", fmt::join(doc.commits, ", "))));
      }
      fmt::format_to(out, "</ul>\n");
    }
  }
}

void TestBpfSection(Out out, const std::optional<TestBpfSummary>& summary) {
  fmt::format_to(out, "<h2>test_bpf</h2>\n");
  if (!summary) {
    fmt::format_to(out, "<p class=\"muted\">Not run (no Linux tree in this build, or no results given).</p>\n");
    return;
  }
  fmt::format_to(out,
                 "<p class=\"muted\">lib/test_bpf.c of {} (test_bpf.ko, the JIT maintainers' suite), its eBPF "
                 "cases and tail-call tests judged as the module judges them, then every outcome compared with "
                 "the interpreter's.</p>\n",
                 summary->tree.empty() ? std::string("the tree") : E(summary->tree));
  for (const auto& [suite, tallies] : {std::pair{"test_bpf", &summary->cases},
                                        std::pair{"test_tail_calls", &summary->tail_calls}}) {
    if (tallies->empty()) continue;
    fmt::format_to(out, "<h3>{}</h3>\n<table id=\"test-bpf-{}\"><thead><tr><th>engine</th><th>passed</th>"
                        "<th>failed</th><th>JIT'ed</th><th>agree</th><th>diverge</th><th>not comparable</th>"
                        "</tr></thead><tbody>\n",
                   suite, suite);
    for (const TestBpfTally& t : *tallies) {
      fmt::format_to(out,
                     "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num{}\">{}</td><td class=\"num\">{}/{}"
                     "</td><td class=\"num\">{}</td><td class=\"num{}\">{}</td><td class=\"num\">{}</td></tr>\n",
                     E(t.engine), t.passed, t.failed ? " bad" : "", t.failed, t.jited, t.run, t.agreed,
                     t.diverged ? " bad" : "", t.diverged, t.not_comparable);
    }
    fmt::format_to(out, "</tbody></table>\n");
  }
  if (!summary->failures.empty()) {
    fmt::format_to(out, "<h3>Failures</h3>\n<ul id=\"test-bpf-failures\">\n");
    for (const auto& f : summary->failures) {
      fmt::format_to(out, "<li>{} #{} <code>{}</code> on {}: {}{}</li>\n", E(f.suite), f.index, E(f.name),
                     E(f.engine), f.kernel_verdict ? "" : "(bpfdiff only) ", E(f.reason));
    }
    fmt::format_to(out, "</ul>\n");
  }
  if (!summary->left_out.empty()) {
    fmt::format_to(out, "<h3>Left out</h3>\n<ul id=\"test-bpf-left-out\">\n");
    for (const auto& [reason, cases] : summary->left_out) {
      fmt::format_to(out, "<li>{} cases: {}</li>\n", cases, E(reason));
    }
    fmt::format_to(out, "</ul>\n");
  }
}

// The Linux tree's files the kernel engines compile (what the nights
// test), least covered first, and the functions never run with why.
void KernelCoverageSection(Out out, const std::optional<KernelCoverage>& coverage) {
  fmt::format_to(out, "<h2>Kernel tree coverage</h2>\n");
  if (!coverage) {
    fmt::format_to(out, "<p class=\"muted\">Not measured (no coverage build with a kernel tree ran).</p>\n");
    return;
  }
  fmt::format_to(out,
                 "<p class=\"muted\">The tree's own files as the kernel engines compile them, from <code>{}</code>; "
                 "from the seeds and tonight's fuzzing, measured with the coverage build.{}</p>\n",
                 E(coverage->tree.string()),
                 coverage->html.empty() ? ""
                                        : fmt::format(" <a href=\"{}\">Line-by-line view (llvm-cov)</a>.",
                                                      E(coverage->html)));
  fmt::format_to(out, "<table id=\"kernel-coverage-files\"><thead><tr><th>file (least covered first)</th>"
                      "<th>lines</th><th>%</th><th>branches</th><th>%</th><th>functions</th><th>never run</th>"
                      "</tr></thead><tbody>\n");
  size_t never_run = 0;
  for (const auto& file : coverage->files) {
    const std::string link = LineViewLink(coverage->html, coverage->tree, file.path);
    fmt::format_to(out, "<tr><td><code>{}</code></td>", Linked(link, E(file.path)));
    CoverageCells(out, file.counts);
    fmt::format_to(out, "<td class=\"num\">{}</td></tr>\n", file.never_run.size());
    never_run += file.never_run.size();
  }
  fmt::format_to(out, "</tbody></table>\n<h3>Functions never run</h3>\n");
  if (never_run == 0) {
    fmt::format_to(out, "<p class=\"muted\" id=\"kernel-never-run\">none: every function ran</p>\n");
  } else {
    fmt::format_to(out, "<table id=\"kernel-never-run\"><thead><tr><th>file</th><th>function</th><th>line</th>"
                        "<th>why it is not run</th></tr></thead><tbody>\n");
    for (const auto& file : coverage->files) {
      for (const auto& f : file.never_run) {
        const std::string link = LineViewLink(coverage->html, coverage->tree, file.path, f.line);
        fmt::format_to(out, "<tr><td><code>{}</code></td><td><code>{}</code></td><td class=\"num\">{}</td>",
                       E(file.path), Linked(link, E(f.name)), f.line);
        fmt::format_to(out, "{}</tr>\n",
                       f.reason.empty() ? std::string("<td class=\"muted\">no reason recorded</td>")
                                        : fmt::format("<td class=\"reason\">{}</td>", E(f.reason)));
      }
    }
    fmt::format_to(out, "</tbody></table>\n");
  }
  fmt::format_to(out, "<h3>Lines never run in functions that run</h3>\n");
  size_t stretches = 0;
  for (const auto& file : coverage->files) {
    stretches += file.uncovered.size();
    if (!file.source_error.empty()) fmt::format_to(out, "<p class=\"muted\">{}</p>\n", E(file.source_error));
  }
  if (stretches == 0) {
    fmt::format_to(out, "<p class=\"muted\" id=\"kernel-uncovered-lines\">none</p>\n");
  } else {
    fmt::format_to(out, "<table id=\"kernel-uncovered-lines\"><thead><tr><th>file</th><th>function</th>"
                        "<th>lines</th><th>first line's code</th><th>why it is not run</th></tr></thead><tbody>\n");
    for (const auto& file : coverage->files) {
      for (const auto& stretch : file.uncovered) {
        const std::string link = LineViewLink(coverage->html, coverage->tree, file.path, stretch.first_line);
        const std::string lines = stretch.first_line == stretch.last_line
                                      ? fmt::format("{}", stretch.first_line)
                                      : fmt::format("{}-{}", stretch.first_line, stretch.last_line);
        fmt::format_to(out, "<tr><td><code>{}</code></td><td><code>{}</code></td><td class=\"num\">{}</td>"
                            "<td><code>{}</code></td>",
                       E(file.path), E(stretch.function), Linked(link, lines), E(stretch.text));
        fmt::format_to(out, "{}</tr>\n",
                       stretch.reason.empty() ? std::string("<td class=\"muted\">no reason recorded</td>")
                                              : fmt::format("<td class=\"reason\">{}</td>", E(stretch.reason)));
      }
    }
    fmt::format_to(out, "</tbody></table>\n");
  }
  if (!coverage->reasons_not_needed.empty()) {
    std::string names;
    for (const auto& name : coverage->reasons_not_needed) names += fmt::format(" <code>{}</code>", E(name));
    fmt::format_to(out, "<p class=\"muted\" id=\"kernel-reasons-not-needed\">Reasons recorded for functions that ran "
                        "or that the tree does not have, or for code no line never run holds (their lines can go):{}</p>\n",
                   names);
  }
}

// Line and branch coverage of the code under test, per area and per file,
// least covered first.
void SourceCoverageSection(Out out, const std::optional<SourceCoverage>& coverage) {
  fmt::format_to(out, "<h2>Source coverage</h2>\n");
  if (!coverage) {
    fmt::format_to(out, "<p class=\"muted\">Not measured.</p>\n");
    return;
  }
  fmt::format_to(out, "<p class=\"muted\">From the seeds and tonight's fuzzing, measured with the coverage build.{}</p>\n",
                 coverage->html.empty() ? ""
                                        : fmt::format(" <a href=\"{}\">Line-by-line view (llvm-cov)</a>.",
                                                      E(coverage->html)));
  constexpr std::string_view kHead =
      "<th>lines</th><th>%</th><th>branches</th><th>%</th><th>functions</th></tr></thead><tbody>\n";
  fmt::format_to(out, "<table id=\"source-coverage-areas\"><thead><tr><th>area</th><th>folders</th>{}", kHead);
  for (const auto& area : coverage->areas) {
    std::string rooms;
    for (const auto& room : area.rooms) rooms += fmt::format("<code>{}</code> ", E(room));
    fmt::format_to(out, "<tr><td>{}</td><td>{}</td>", E(area.area), rooms);
    CoverageCells(out, area.counts);
    fmt::format_to(out, "</tr>\n");
  }
  fmt::format_to(out, "<tr><td><b>total</b></td><td></td>");
  CoverageCells(out, coverage->total);
  fmt::format_to(out, "</tr>\n</tbody></table>\n");
  fmt::format_to(out, "<table id=\"source-coverage-files\"><thead><tr><th>file (least covered first)</th><th>area</th>{}",
                 kHead);
  for (const auto& file : coverage->files) {
    fmt::format_to(out, "<tr><td><code>{}</code></td><td>{}</td>", E(file.path), E(file.area));
    CoverageCells(out, file.counts);
    fmt::format_to(out, "</tr>\n");
  }
  fmt::format_to(out, "</tbody></table>\n");
}

void Reasons(Out out, const ReportModel& model, ReasonKind kind, std::string_view id, std::string_view title) {
  const TopReasons reasons = MostFrequentReasons(model, kind, kTopReasons);
  fmt::format_to(out, "<h3>{}</h3>\n", title);
  if (reasons.top.empty()) {
    fmt::format_to(out, "<p class=\"muted\" id=\"{}\">none</p>\n", id);
    return;
  }
  fmt::format_to(out, "<p class=\"muted\">{} cases, {} distinct reasons; the {} most frequent:</p>\n", reasons.total,
                 reasons.distinct, reasons.top.size());
  fmt::format_to(out, "<table id=\"{}\"><thead><tr><th>cases</th><th>where</th><th>reason</th></tr></thead><tbody>\n", id);
  for (const auto& r : reasons.top) {
    fmt::format_to(out, "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"reason\">{}</td></tr>\n", r.count,
                   E(r.source), E(OneLine(r.reason, kCellReasonWidth)));
  }
  fmt::format_to(out, "</tbody></table>\n");
}

void Gate(Out out, const std::optional<PlantedGate>& gate) {
  fmt::format_to(out, "<h2>Planted-bug gate</h2>\n");
  if (!gate) {
    fmt::format_to(out, "<p class=\"muted\">Not run.</p>\n");
    return;
  }
  fmt::format_to(out, "<p>{} of {} planted bugs caught by replaying their fixed reproducers with the bug switched on, "
                      "each replayed cleanly without it: <span class=\"verdict {}\">{}</span></p>\n",
                 gate->CaughtCount(), gate->checks.size(), gate->Passed() ? "ok" : "bad",
                 gate->Passed() ? "passed" : "FAILED");
  if (!gate->planted_in_environment.empty()) {
    fmt::format_to(out, "<p>BPFDIFF_PLANTED_BUG=<code>{}</code> was set for the whole night.</p>\n",
                   E(gate->planted_in_environment));
  }
  for (const auto& problem : gate->problems) fmt::format_to(out, "<p class=\"s-fail\">{}</p>\n", E(problem));
  fmt::format_to(out, "<table id=\"planted-gate\"><thead><tr><th>bug</th><th>fuzzer</th><th>with the bug</th>"
                      "<th>without</th><th>problem</th></tr></thead><tbody>\n");
  const auto replay = [](const std::optional<GateReplay>& r) {
    return r ? fmt::format("{} (exit {}, {:.1f} s)", E(r->result), r->exit_code, r->seconds) : std::string("&mdash;");
  };
  for (const auto& c : gate->checks) {
    fmt::format_to(out,
                   "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td>"
                   "<td class=\"reason\">{}</td></tr>\n",
                   E(c.bug), E(c.target), c.passed() ? "s-pass" : "s-fail", replay(c.with_bug), replay(c.without_bug),
                   E(OneLine(c.problem, kCellReasonWidth)));
  }
  fmt::format_to(out, "</tbody></table>\n");
}

// The benchmark: a measurement, with the misses' standing and the
// regressions against the history (planted_trend.h).
void Planted(Out out, const ReportModel& model) {
  const std::vector<PlantedCheck>& planted = model.planted;
  fmt::format_to(out, "<h2>Bug-finding benchmark</h2>\n");
  if (planted.empty()) {
    fmt::format_to(out, "<p class=\"muted\">Not run.</p>\n");
    return;
  }
  const PlantedSummary s = Summarize(planted);
  fmt::format_to(out, "<p>{} of {} planted bugs detected from the seeds", s.detected_from_seeds, s.bugs);
  if (s.measured_from_empty > 0) {
    fmt::format_to(out, "; from an empty corpus, {} of {} within the limit (median {}, worst {})",
                   s.detected_from_empty, s.measured_from_empty,
                   s.median_from_empty ? fmt::format("{:.1f} s", *s.median_from_empty) : "&mdash;",
                   s.worst_from_empty ? fmt::format("{:.1f} s", *s.worst_from_empty) : "&mdash;");
  }
  fmt::format_to(out, ".</p>\n");
  const std::vector<PlantedRegression> regressions = PlantedRegressions(model);
  fmt::format_to(out, "<p id=\"planted-regressions\" class=\"{}\">Against the history: {}.</p>\n",
                 regressions.empty() ? "muted" : "verdict bad",
                 regressions.empty() ? std::string("no regression") : fmt::format("{} regression{}", regressions.size(),
                                                                                  regressions.size() == 1 ? "" : "s"));
  for (const auto& r : regressions) fmt::format_to(out, "<p class=\"s-fail\">Regression: {}</p>\n", E(r.what));
  fmt::format_to(out, "<p class=\"muted\">A measurement: {}.</p>\n", E(PlantedTolerance()));
  fmt::format_to(out, "<table id=\"planted\"><thead><tr><th>bug</th><th>area</th><th>fixed upstream by</th>"
                      "<th>fuzzer</th><th>from the seeds</th><th>from empty (median)</th>"
                      "<th>what it found</th></tr></thead><tbody>\n");
  for (const auto& p : planted) {
    const bool seeds_ok = p.from_seeds && p.from_seeds->detected;
    const bool regressed = std::any_of(regressions.begin(), regressions.end(),
                                       [&](const PlantedRegression& r) { return r.bug == p.bug; });
    std::string seeds = "&mdash;", seeds_class, seeds_title;
    if (p.from_seeds) {
      seeds = seeds_ok ? fmt::format("{:.1f} s", p.from_seeds->seconds) : regressed ? "NO" : "no";
      seeds_class = seeds_ok ? "s-pass" : regressed ? "s-fail" : "s-skip";
      if (!seeds_ok) seeds_title = SeedsMissNote(p, model.history);
    }
    const auto median = p.EmptyMedianSeconds();
    const std::string empty = p.from_empty.empty() ? "&mdash;" : median ? fmt::format("{:.1f} s", *median) : "no";
    fmt::format_to(out,
                   "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num {}\" title=\"{}\">{}</td>"
                   "<td class=\"num\">{}</td><td class=\"reason\">{}</td></tr>\n",
                   E(p.bug), p.value_dependent ? " <span class=\"muted\">(v)</span>" : "", E(p.area), E(p.fixed_by),
                   E(p.target), seeds_class, E(seeds_title), seeds, empty, E(OneLine(p.first_line, kCellReasonWidth)));
  }
  fmt::format_to(out, "</tbody></table>\n");
}

void Fuzz(Out out, const std::vector<FuzzTarget>& fuzz) {
  fmt::format_to(out, "<h2>Fuzzing</h2>\n");
  if (fuzz.empty()) {
    fmt::format_to(out, "<p class=\"muted\">Not run.</p>\n");
    return;
  }
  fmt::format_to(out, "<table id=\"fuzz\"><thead><tr><th>target</th><th>result</th><th>seconds</th><th>inputs</th>"
                      "<th>counters</th><th>not comparable</th></tr></thead><tbody>\n");
  for (const auto& t : fuzz) {
    std::string result = t.run ? E(t.run->result) : "&mdash;";
    if (t.failed()) {
      if (!t.run->finding_kind.empty()) result += fmt::format(": {}", E(t.run->finding_kind));
      result += fmt::format(" (exit {})<br><span class=\"muted\">{}</span>", t.run->exit_code, E(t.run->artifacts));
    }
    if (!t.stats) {
      fmt::format_to(out, "<tr><td>{}</td><td class=\"{}\">{}</td><td colspan=\"4\" class=\"muted\">no stats "
                          "(the target wrote none)</td></tr>\n",
                     E(t.target), t.failed() ? "s-fail" : "s-pass", result);
      continue;
    }
    std::string counters;
    for (const auto& [name, count] : t.stats->counters) {
      counters += fmt::format("{}{} {}", counters.empty() ? "" : ", ", E(name), count);
    }
    if (const std::string states = StatesSummary(*t.stats); !states.empty()) {
      counters += fmt::format("<br><span class=\"states\">{}</span>", E(states));
    }
    // Every target's runs that could not be compared, with why.
    uint64_t not_comparable = 0;
    std::string reasons;
    for (const auto& [reason, count] : t.stats->not_comparable) {
      not_comparable += count;
      reasons += fmt::format("<br>{} &times; {}", count, E(OneLine(reason, kCellReasonWidth)));
    }
    const std::string not_comparable_cell =
        not_comparable == 0 ? "0"
                            : fmt::format("<details><summary>{}</summary><span class=\"reason\">{}</span></details>",
                                          not_comparable, reasons.substr(4));
    fmt::format_to(out, "<tr><td>{}</td><td class=\"{}\">{}</td><td class=\"num\">{:.1f}</td><td class=\"num\">{}</td>"
                        "<td>{}</td><td class=\"num\">{}</td></tr>\n",
                   E(t.target), t.failed() ? "s-fail" : "s-pass", result, t.stats->seconds, t.stats->inputs, counters,
                   not_comparable_cell);
  }
  fmt::format_to(out, "</tbody></table>\n");
}

void Coverage(Out out, const std::vector<FuzzTarget>& fuzz) {
  fmt::format_to(out, "<h2>Opcode-form coverage</h2>\n");
  fmt::format_to(out, "<table id=\"coverage\"><thead><tr><th>target</th><th>forms</th><th>generated</th>"
                      "<th>completed</th><th>not completed</th></tr></thead><tbody>\n");
  bool any = false;
  for (const auto& t : fuzz) {
    if (!t.stats || !t.stats->forms) continue;
    any = true;
    const FormCoverage& f = *t.stats->forms;
    std::string missing;
    for (const auto& form : f.not_completed) missing += fmt::format("<code>{}</code> ", E(form));
    fmt::format_to(out, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                        "<td>{}</td></tr>\n",
                   E(t.target), f.total, f.generated, f.completed,
                   f.not_completed.empty() ? std::string("none")
                                           : fmt::format("<details><summary>{} forms</summary>{}</details>",
                                                         f.not_completed.size(), missing));
  }
  if (!any) fmt::format_to(out, "<tr><td colspan=\"5\" class=\"muted\">no coverage reported</td></tr>\n");
  fmt::format_to(out, "</tbody></table>\n");
}

void Trend(Out out, const ReportModel& model) {
  std::vector<HistoryEntry> nights = model.history;
  nights.push_back(model.Headline());
  fmt::format_to(out, "<h2>Trend</h2>\n<p class=\"muted\">{} night{}, oldest first; tonight is the red dot.</p>\n",
                 nights.size(), nights.size() == 1 ? "" : "s");
  struct Series {
    std::string_view name;
    double (*value)(const HistoryEntry&);
  };
  const Series series[] = {
      {"conformance passed", [](const HistoryEntry& n) { return double(n.passed); }},
      {"conformance failed", [](const HistoryEntry& n) { return double(n.failed); }},
      {"not comparable runs", [](const HistoryEntry& n) { return double(n.not_comparable); }},
      {"fuzz inputs", [](const HistoryEntry& n) { return double(n.fuzz_inputs); }},
      {"forms completed", [](const HistoryEntry& n) { return double(n.forms_completed.value_or(0)); }},
      {"planted bugs detected", [](const HistoryEntry& n) { return double(n.planted_detected); }},
      {"planted bugs detected from empty",
       [](const HistoryEntry& n) { return double(n.planted_detected_from_empty.value_or(0)); }},
  };
  fmt::format_to(out, "<table id=\"trend\"><thead><tr><th>metric</th><th>trend</th><th>first</th><th>tonight</th>"
                      "</tr></thead><tbody>\n");
  for (const auto& s : series) {
    std::vector<double> values;
    for (const auto& n : nights) values.push_back(s.value(n));
    fmt::format_to(out, "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n", s.name,
                   Sparkline(values), values.front(), values.back());
  }
  fmt::format_to(out, "</tbody></table>\n");
  fmt::format_to(out, "<details><summary>nights</summary><table id=\"nights\"><thead><tr><th>night (UTC)</th>"
                      "<th>tests</th><th>failed</th><th>not comparable</th><th>fuzz inputs</th><th>fuzz failures</th>"
                      "<th>planted detected</th></tr></thead><tbody>\n");
  for (const auto& n : nights) {
    fmt::format_to(out, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}/{}</td></tr>\n",
                   E(n.timestamp), n.tests, n.failed, n.not_comparable, n.fuzz_inputs, n.fuzz_failures,
                   n.planted_detected, n.planted_total);
  }
  fmt::format_to(out, "</tbody></table></details>\n");
}

void Matrix(Out out, const ConformanceSummary& c) {
  fmt::format_to(out, "<h2>Conformance: engines &times; tests</h2>\n<div id=\"matrix-controls\"><label>show "
                      "<select id=\"matrix-filter\">");
  const bool any_failed = c.failed > 0;
  fmt::format_to(out, "<option value=\"all\"{}>all tests</option>", any_failed ? "" : " selected");
  fmt::format_to(out, "<option value=\"fail\"{}>failures</option>", any_failed ? " selected" : "");
  fmt::format_to(out, "<option value=\"attention\">failures and not comparable</option>"
                      "<option value=\"skip\">skipped</option></select></label></div>\n");
  fmt::format_to(out, "<table id=\"matrix\"><thead><tr><th>test</th>");
  for (const auto& engine : c.engines) fmt::format_to(out, "<th>{}</th>", E(engine));
  fmt::format_to(out, "<th>reason</th></tr></thead><tbody>\n");
  for (const auto& test : c.results) {
    const bool not_comparable = std::any_of(test.engines.begin(), test.engines.end(),
                                      [](const EngineResult& e) { return e.status == TestStatus::kNotComparable; });
    fmt::format_to(out, "<tr data-status=\"{}\" data-not-comparable=\"{}\"><td title=\"{}\">{}</td>", TestStatusName(test.status),
                   not_comparable ? 1 : 0, E(test.suite), E(test.name));
    std::string reasons;
    for (const auto& e : test.engines) {
      fmt::format_to(out, "<td class=\"cell s-{}\" title=\"{}\">{}</td>", TestStatusName(e.status),
                     E(OneLine(e.reason, kCellReasonWidth)), StatusLabel(e.status));
      if (e.status == TestStatus::kFail || e.status == TestStatus::kNotComparable) {
        reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "<br>", E(e.engine), E(OneLine(e.reason, kCellReasonWidth)));
      }
    }
    if (reasons.empty() && test.status == TestStatus::kSkip) reasons = E(OneLine(test.reason, kCellReasonWidth));
    fmt::format_to(out, "<td class=\"reason\">{}</td></tr>\n", reasons);
  }
  fmt::format_to(out, "</tbody></table>\n");
}

}  // namespace

std::string HtmlReport(const ReportModel& model) {
  std::string html;
  Out out(html);
  const bool passed = model.Passed();
  fmt::format_to(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<title>bpfdiff nightly report {0}</title>\n<style>{1}</style>\n</head>\n<body>\n"
                      "<h1>bpfdiff nightly report</h1>\n<p>{0} UTC &nbsp; <span id=\"verdict\" class=\"verdict {2}\">{3}"
                      "</span></p>\n",
                 E(model.timestamp), kStyle, passed ? "ok" : "bad", passed ? "all parts passed" : "FAILED");
  KernelTreesSection(out, model.kernel_trees, model.fuzz);
  Summary(out, model);
  Reasons(out, model, ReasonKind::kNotComparable, "not-comparable-reasons", "Top reasons not comparable");
  Reasons(out, model, ReasonKind::kRejected, "rejected-reasons", "Top rejected reasons");
  Gate(out, model.planted_gate);
  Planted(out, model);
  Fuzz(out, model.fuzz);
  Coverage(out, model.fuzz);
  TestBpfSection(out, model.test_bpf);
  KernelCoverageSection(out, model.kernel_coverage);
  SourceCoverageSection(out, model.source_coverage);
  Trend(out, model);
  Matrix(out, model.conformance);
  fmt::format_to(out, "<script>{}</script>\n</body>\n</html>\n", kScript);
  return html;
}

}  // namespace bpfdiff::report
