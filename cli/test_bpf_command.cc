// bpfdiff test-bpf: lib/test_bpf.c of the tree (test_bpf.ko, the suite the
// JIT maintainers load) on bpfdiff's engines, with the module's own
// selection parameters and summary lines, then bpfdiff's comparison with
// the interpreter.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/executor_option.h"
#include "harness/test_bpf/runner.h"
#include "report/test_bpf_json.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

struct TestBpfArgs {
  std::string engine{kAllEngines};
  std::string suite;  // test_suite: "", test_bpf, test_tail_calls
  std::string name;   // test_name
  int id = -1;        // test_id
  std::vector<int> range;  // test_range
  std::string filter;
  std::string json;
  // test_bpf runs each program once, and most are large (its fill
  // helpers'): fresh code, which Unicorn translates before it runs (about
  // 1 us per instruction) and VIXL's simulator just runs. The whole suite
  // on one JIT takes about 2 s on VIXL and 20 s on Unicorn (release build).
  std::string executor = "vixl";
  bool every_case = false;
};

int Run(const TestBpfArgs& args, const Settings& settings) {
  TestBpfOptions options;
  options.bugs = settings.bugs;
  options.engine = args.engine;
  if (args.suite == "test_bpf") {
    options.suite = kernelsrc::TestBpfSuite::kCases;
  } else if (args.suite == "test_tail_calls") {
    options.suite = kernelsrc::TestBpfSuite::kTailCalls;
  } else if (!args.suite.empty()) {
    // The module's own refusal (test_bpf_init); test_skb_segment tests no JIT.
    fmt::print(stderr, "bpfdiff test-bpf: invalid test_suite '{}' specified (test_bpf or test_tail_calls)\n",
               args.suite);
    return kExitBadInput;
  }
  options.selection.name = args.name;
  options.selection.id = args.id;
  if (!args.range.empty()) {
    if (args.range.size() != 2) {
      fmt::print(stderr, "bpfdiff test-bpf: --test-range takes two numbers, FIRST LAST\n");
      return kExitBadInput;
    }
    options.selection.first = args.range[0];
    options.selection.last = args.range[1];
  }
  // As test_bpf_init(): a selection without a suite selects in test_bpf.
  if (!options.suite && (args.id != -1 || !args.name.empty() || !args.range.empty())) {
    options.suite = kernelsrc::TestBpfSuite::kCases;
  }
  if (!args.filter.empty()) options.filter = args.filter;
  auto factory = MachineFactoryNamed(args.executor);
  if (!factory) {
    fmt::print(stderr, "bpfdiff test-bpf: {}\n", factory.message());
    return kExitBadInput;
  }
  options.machine_factory = *factory;
  options.every_case = args.every_case;
  auto summary = RunTestBpf(options, std::cout);
  if (!summary) {
    fmt::print(stderr, "bpfdiff test-bpf: {}\n", summary.message());
    return kExitBadInput;
  }
  if (!args.json.empty()) {
    if (auto written = WriteFile(args.json, DumpJson(report::TestBpfToJson(*summary))); !written) {
      fmt::print(stderr, "bpfdiff test-bpf: {}\n", written.message());
      return kExitBadInput;
    }
  }
  return summary->AllPassed() ? kExitOk : kExitFailed;
}

}  // namespace

void AddTestBpfCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto args = std::make_shared<TestBpfArgs>();
  CLI::App* cmd = app.add_subcommand(
      "test-bpf",
      "Run lib/test_bpf.c of the tree (test_bpf.ko) on the engines; prints its summary lines per engine. "
      "Its code runs on VIXL unless --executor unicorn: each program runs once, and VIXL runs fresh code "
      "about ten times faster than Unicorn translates it");
  cmd->add_option("--engine", args->engine, EngineChoices() + " (must include interp, the reference)")
      ->capture_default_str();
  cmd->add_option("--test-suite", args->suite, "test_suite: test_bpf or test_tail_calls (default: both)");
  cmd->add_option("--test-name", args->name, "test_name: only the case with this description");
  cmd->add_option("--test-id", args->id, "test_id: only the case at this index");
  cmd->add_option("--test-range", args->range, "test_range: FIRST LAST, indices of the cases to run")
      ->expected(2);
  cmd->add_option("--filter", args->filter, "Only cases whose description matches this regex");
  cmd->add_option("--json", args->json, "Also write the results as JSON (for `bpfdiff report --test-bpf`)");
  cmd->add_flag("--every-case", args->every_case, "A line per case and engine, as test_bpf prints them");
  AddExecutorOption(cmd, &args->executor);
  cmd->callback([args, &settings, &exit_code] { exit_code = Run(*args, settings); });
}

}  // namespace bpfdiff::cli
