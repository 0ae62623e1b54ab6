// bpfdiff conformance --suite DIR...: the bpf_conformance suite (or any
// directory of .data files) on the chosen engines; --json and --junit keep
// the results per engine for `bpfdiff report` and CI dashboards.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/executor_option.h"
#include "harness/conformance/runner.h"
#include "harness/planted/planted_bugs.h"
#include "report/conformance_json.h"
#include "report/history.h"
#include "report/report_writers.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

struct ConformanceArgs {
  std::vector<std::string> suites;
  std::string engine{EngineSpecs().front().name};  // the interpreter
  std::string cpu = "v4";
  std::vector<std::string> include_groups;
  std::string include, exclude;
  std::string json, junit;
  std::string executor = "unicorn";
  bool quiet = false;
};

// The results as files; an error names the file that could not be written.
Status WriteResultFiles(const ConformanceArgs& args, const ConformanceSummary& summary) {
  if (!args.json.empty()) {
    if (auto written = WriteFile(args.json, DumpJson(report::ConformanceToJson(summary))); !written) {
      return written;
    }
  }
  if (!args.junit.empty()) {
    report::ReportModel model;  // conformance alone: the JUnit has its suites only
    model.timestamp = report::UtcTimestampNow();
    model.conformance = summary;
    if (auto written = WriteFile(args.junit, report::JunitReport(model)); !written) return written;
  }
  return {};
}

// The suites that hold tests. One that does not (a typo, a directory not
// checked out) is reported, and the others still run: the command then
// exits 2 whatever they found.
std::vector<std::filesystem::path> SuitesWithTests(const std::vector<std::string>& suites, int& status) {
  std::vector<std::filesystem::path> usable;
  for (const auto& suite : suites) {
    auto files = ListFiles(suite, ".data");
    if (!files) {
      fmt::print(stderr, "bpfdiff conformance: {}\n", files.message());
    } else if (files->empty()) {
      fmt::print(stderr, "bpfdiff conformance: {}: no .data files\n", suite);
    } else {
      usable.emplace_back(suite);
      continue;
    }
    status = kExitBadInput;
  }
  return usable;
}

int Run(const ConformanceArgs& args, const Settings& settings) {
  const PlantedBugs& bugs = settings.bugs;
  ConformanceOptions options;
  int status = kExitOk;
  options.suites = SuitesWithTests(args.suites, status);
  if (options.suites.empty()) return kExitBadInput;
  options.engine = args.engine;
  auto cpu = isa::ParseCpuVersion(args.cpu);
  if (!cpu) {
    fmt::print(stderr, "bpfdiff conformance: unknown cpu version '{}' (v1, v2, v3 or v4)\n", args.cpu);
    return kExitBadInput;
  }
  options.cpu = *cpu;
  for (const auto& name : args.include_groups) {
    auto group = isa::ParseGroup(name);
    if (!group) {
      fmt::print(stderr, "bpfdiff conformance: unknown group '{}' (one of {})\n", name,
                 isa::GroupNames(isa::kGroupsAll));
      return kExitBadInput;
    }
    options.groups |= *group;
  }
  options.bugs = bugs;
  options.unicorn_fault = settings.unicorn_fault;
  auto factory = MachineFactoryNamed(args.executor);
  if (!factory) {
    fmt::print(stderr, "bpfdiff conformance: {}\n", factory.message());
    return kExitBadInput;
  }
  options.machine_factory = *factory;
  if (!args.include.empty()) options.include = args.include;
  if (!args.exclude.empty()) options.exclude = args.exclude;
  options.listing = args.quiet ? ConformanceListing::kFailuresOnly : ConformanceListing::kEveryTest;
  auto summary = RunConformance(options, std::cout);
  if (!summary) {
    fmt::print(stderr, "bpfdiff conformance: {}\n", summary.message());
    return kExitBadInput;
  }
  if (auto written = WriteResultFiles(args, *summary); !written) {
    fmt::print(stderr, "bpfdiff conformance: {}\n", written.message());
    return kExitBadInput;
  }
  return WorstStatus(status, summary->failed == 0 ? kExitOk : kExitFailed);
}

}  // namespace

void AddConformanceCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "conformance", "Run directories of bpf_conformance .data files; prints PASS/FAIL/SKIP per test");
  cmd->add_option("--suite", args->suites,
                  "Directory (or file) of .data tests; repeatable (one that holds none is reported, the "
                  "others still run, and the exit status is 2)")
      ->required();
  cmd->add_option("--engine", args->engine, EngineChoices() + " (all compares outcomes too)")
      ->capture_default_str();
  cmd->add_option("--cpu", args->cpu, "Highest CPU version to test: v1, v2, v3, v4")->capture_default_str();
  cmd->add_option("--include-groups", args->include_groups,
                  "Groups beyond upstream's defaults: callx, packet");
  cmd->add_option("--include", args->include, "Only tests whose file name matches this regex");
  cmd->add_option("--exclude", args->exclude, "Skip tests whose file name matches this regex");
  cmd->add_option("--json", args->json, "Also write the results, per engine, as JSON (for `bpfdiff report`)");
  cmd->add_option("--junit", args->junit, "Also write the results as JUnit XML, a testsuite per engine");
  cmd->add_flag("--quiet", args->quiet, "Print only failures and the counts per engine");
  AddExecutorOption(cmd, &args->executor);
  cmd->callback([args, &settings, &exit_code] { exit_code = Run(*args, settings); });
}

}  // namespace bpfdiff::cli
