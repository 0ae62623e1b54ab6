// bpfdiff report --conformance C.json [--fuzz-stats F.json...] [--fuzz-runs R.json]
//                [--planted P.json] [--planted-gate G.json] [--coverage J.json ...]
//                [--kernel-coverage K.json --kernel-tree DIR [--uncovered-reasons FILE]]
//                [--tree-results DIR...] [--known-findings-doc SHIMS.md]
//                [--history DIR] --out DIR
// The nightly report from the files the nightly's parts wrote: prints the
// short summary and the paths of the JUnit, JSON and HTML files, and adds
// tonight's headline numbers to the history for the next night's trend.
#include <iostream>
#include <regex>

#include <fmt/format.h>

#include "cli/commands.h"
#include "report/history.h"
#include "report/report_files.h"
#include "report/report_inputs.h"
#include "report/report_writers.h"

namespace bpfdiff::cli {
namespace {

// Nights shown in the trend, including tonight.
constexpr size_t kNightsInTrend = 60;

struct ReportArgs {
  std::string conformance;
  std::vector<std::string> fuzz_stats;
  std::string fuzz_runs, planted, planted_gate, history, out, timestamp;
  std::string test_bpf;
  std::string upstream_suite;  // empty: the night ran only the project's own vectors
  std::string coverage, coverage_root = ".", coverage_html;
  std::string kernel_coverage, kernel_tree, uncovered_reasons;
  std::vector<std::string> tree_results;
  std::string known_findings_doc;
};

int Run(const ReportArgs& args) {
  report::ReportInputs inputs;
  inputs.conformance = args.conformance;
  for (const auto& path : args.fuzz_stats) inputs.fuzz_stats.emplace_back(path);
  if (!args.fuzz_runs.empty()) inputs.fuzz_runs = args.fuzz_runs;
  if (!args.planted.empty()) inputs.planted = args.planted;
  if (!args.planted_gate.empty()) inputs.planted_gate = args.planted_gate;
  if (!args.test_bpf.empty()) inputs.test_bpf = args.test_bpf;
  if (!args.upstream_suite.empty()) inputs.upstream_suite = args.upstream_suite;
  if (!args.coverage.empty()) inputs.coverage = args.coverage;
  inputs.checkout = args.coverage_root;
  inputs.coverage_html = args.coverage_html;
  if (!args.kernel_coverage.empty()) inputs.kernel_coverage = args.kernel_coverage;
  inputs.kernel_tree = args.kernel_tree;
  if (!args.uncovered_reasons.empty()) inputs.uncovered_reasons = args.uncovered_reasons;
  for (const auto& directory : args.tree_results) inputs.kernel_trees.emplace_back(directory);
  if (!args.known_findings_doc.empty()) inputs.known_findings_doc = args.known_findings_doc;
  // Without the conformance results there is nothing to report (exit 2,
  // nothing written); an optional part that does not load is left out.
  auto model = report::LoadReportInputs(inputs);
  if (!model) {
    fmt::print(stderr, "bpfdiff report: {}\n", model.message());
    return kExitBadInput;
  }
  int status = kExitOk;
  for (const auto& problem : model->inputs_left_out) {
    fmt::print(stderr, "bpfdiff report: {}; left out of the report\n", problem);
    model->notes.push_back(fmt::format("input left out: {}", problem));
    status = kExitBadInput;
  }
  if (args.timestamp.empty()) {
    model->timestamp = report::UtcTimestampNow();
  } else if (std::regex_match(args.timestamp, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) {
    model->timestamp = args.timestamp;
  } else {
    fmt::print(stderr, "bpfdiff report: --timestamp '{}': expected UTC as 2024-05-01T03:15:00Z\n", args.timestamp);
    return kExitBadInput;
  }

  const std::filesystem::path history_dir =
      args.history.empty() ? std::filesystem::path(args.out) / "history" : std::filesystem::path(args.history);
  // A night that does not read is skipped, and named once: in the notes,
  // which the printed summary and every file of the report show. A history
  // that cannot be read at all (not a directory) leaves the report without
  // a trend, and tonight's entry then fails to be written (exit 2).
  auto history = report::ReadHistory(history_dir, kNightsInTrend);
  if (!history) {
    model->notes.push_back(fmt::format("no trend: {}", history.message()));
  } else {
    for (auto& entry : history->entries) {
      // A report made again for the same night replaces that night's entry.
      if (entry.timestamp != model->timestamp) model->history.push_back(std::move(entry));
    }
    for (const auto& unreadable : history->unreadable) {
      model->notes.push_back(fmt::format("history entry skipped: {}", unreadable));
    }
  }

  auto files = report::WriteReportFiles(*model, args.out);
  if (!files) {
    fmt::print(stderr, "bpfdiff report: {}\n", files.message());
    return kExitBadInput;
  }
  fmt::print("{}\nreport: {}\njunit:  {}\njson:   {}\n", report::TextReport(*model), files->html.string(),
             files->junit.string(), files->json.string());
  std::fflush(stdout);
  auto entry = report::WriteHistoryEntry(history_dir, model->Headline());
  if (!entry) {
    fmt::print(stderr, "bpfdiff report: {}\n", entry.message());
    return kExitBadInput;
  }
  fmt::print("history: {}\n", entry->string());
  return WorstStatus(status, model->Passed() ? kExitOk : kExitFailed);
}

}  // namespace

void AddReportCommand(CLI::App& app, const Settings& /*settings*/, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "The nightly report (summary.txt, junit.xml, report.json, report.html) from the parts' JSON files");
  cmd->add_option("--conformance", args->conformance, "Results of `bpfdiff conformance --json`")->required();
  cmd->add_option("--fuzz-stats", args->fuzz_stats, "A fuzz target's BPFDIFF_FUZZ_STATS_JSON file; repeatable");
  cmd->add_option("--fuzz-runs", args->fuzz_runs,
                  "How each fuzz target's run ended (ci/nightly.sh); a run without stats shows as 'no stats'");
  cmd->add_option("--planted", args->planted,
                  "The bug-finding benchmark (ci/planted_benchmark.sh): a measurement, judged against the history");
  cmd->add_option("--planted-gate", args->planted_gate,
                  "The planted-bug gate (ci/planted_gate.py --json): every planted bug caught by its reproducer");
  cmd->add_option("--test-bpf", args->test_bpf,
                  "Results of `bpfdiff test-bpf --json`: lib/test_bpf.c on every engine");
  cmd->add_option("--upstream-suite", args->upstream_suite,
                  "The bpf_conformance tests/ directory the night's conformance run was given "
                  "(without it the report says only the project's own vectors ran)");
  cmd->add_option("--coverage", args->coverage,
                  "Source coverage of the fuzz targets: `llvm-cov-14 export -summary-only` JSON (ci/coverage.sh)");
  cmd->add_option("--coverage-root", args->coverage_root,
                  "The checkout the coverage JSON's paths are under (default .)");
  cmd->add_option("--coverage-html", args->coverage_html,
                  "llvm-cov's HTML view, linked from the report (a path relative to OUT, or a URL)");
  cmd->add_option("--kernel-coverage", args->kernel_coverage,
                  "Coverage of the Linux tree's files the kernel engines compile: `llvm-cov-14 export` JSON with "
                  "its functions (ci/coverage.sh's kernel-coverage.json)");
  cmd->add_option("--kernel-tree", args->kernel_tree,
                  "The Linux tree the kernel coverage JSON's paths are under (the coverage build's)");
  cmd->add_option("--uncovered-reasons", args->uncovered_reasons,
                  "Why functions of the tree are never run, 'function: reason' a line (kernelsrc/uncovered.txt)");
  cmd->add_option("--tree-results", args->tree_results,
                  "A directory of one Linux tree's results (tree.txt, conformance.json, and test-bpf.json and "
                  "known.txt if run: report/kernel_trees.h), shown first; repeatable, one per tree");
  cmd->add_option("--known-findings-doc", args->known_findings_doc,
                  "kernelsrc/SHIMS.md: what it says of each tree's known findings (their reproducers and the "
                  "upstream commits cited) is shown with them");
  cmd->add_option("--history", args->history, "Directory of previous nights' entries (default OUT/history)");
  cmd->add_option("--timestamp", args->timestamp, "This night, UTC (default now), e.g. 2024-05-01T03:15:00Z");
  cmd->add_option("--out", args->out, "Directory for the report's files")->required();
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace bpfdiff::cli
