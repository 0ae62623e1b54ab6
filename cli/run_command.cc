// bpfdiff run FILE [--engine E]: runs a case and prints each engine's
// outcome and, with several engines, whether they agree.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/executor_option.h"
#include "harness/conformance/case_file.h"
#include "harness/diff/differential.h"
#include "harness/diff/engines.h"
#include "harness/planted/planted_bugs.h"
#include "isa/disassembler.h"

namespace bpfdiff::cli {
namespace {

struct RunArgs {
  std::string file;
  std::string engine{EngineSpecs().front().name};  // the interpreter
  std::string executor = "unicorn";
  bool quiet = false;
};

int Run(const RunArgs& args, const Settings& settings) {
  const PlantedBugs& bugs = settings.bugs;
  auto file = ReadCaseFile(args.file);
  if (!file) {
    fmt::print(stderr, "bpfdiff run: {}\n", file.message());
    return kExitBadInput;
  }
  for (const auto& warning : file->warnings) fmt::print(stderr, "warning: {}\n", warning);
  auto factory = MachineFactoryNamed(args.executor);
  if (!factory) {
    fmt::print(stderr, "bpfdiff run: {}\n", factory.message());
    return kExitBadInput;
  }
  SandboxOptions sandbox_options;
  sandbox_options.pack_bugs = bugs.pack;
  sandbox_options.unicorn_fault = settings.unicorn_fault;
  sandbox_options.keep_unchanged_translations = true;  // a slot is freed and reloaded per case
  sandbox_options.machine_factory = *factory;
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) {
    fmt::print(stderr, "bpfdiff run: {}\n", sandbox.message());
    return kExitBadInput;
  }
  auto engines = MakeEngines(**sandbox, args.engine, bugs.jit);
  if (!engines) {
    fmt::print(stderr, "bpfdiff run: {}\n", engines.message());
    return kExitBadInput;
  }
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  const CaseRun run = runner.Run(file->source);
  // Outcomes of a machine that failed are not the program's: say what
  // failed, and print nothing that reads as a verdict.
  if (auto failure = (*sandbox)->UnicornFailure()) {
    fmt::print(stderr, "bpfdiff run: {}: could not run: {}\n", args.file, *failure);
    return kExitBadInput;
  }
  if (run.load_error) {
    fmt::print(stderr, "bpfdiff run: {}: {}\n", args.file, *run.load_error);
    return kExitBadInput;
  }
  int status = kExitOk;
  for (const EngineRun& engine_run : run.runs) {
    if (!engine_run.outcome) {
      fmt::print("{}: {}\n", engine_run.engine, engine_run.WhyNotRun());
      status = kExitFailed;
      continue;
    }
    fmt::print("{}: {}", engine_run.engine, engine_run.outcome->Describe());
  }
  if (run.runs.size() > 1) {
    if (const EngineRun* diverged = run.FirstDivergence()) {
      fmt::print("DIVERGENCE {}: {}\n", diverged->engine, diverged->verdict.Describe());
      status = kExitFailed;
    } else {
      for (const auto& reason : run.NotComparableReasons()) fmt::print("not comparable: {}\n", reason);
      if (run.NotComparableReasons().empty()) fmt::print("all engines agree\n");
    }
  }
  if (run.runs.size() == 1 && run.runs.front().outcome) {
    const EngineRun& only = run.runs.front();
    const Expectations expected =
        ExpectationsForEngine(file->expected, only.ran_jit_only_rewrites, run.loaded->options);
    if (auto problem = CheckExpectations(expected, *only.outcome)) {
      if (file->expected.result || file->expected.error || file->expected.trace) {
        fmt::print("expectation not met: {}\n", *problem);
        status = kExitFailed;
      }
    }
  }
  return status;
}

}  // namespace

void AddRunCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a .data or assembly file and print the outcome");
  cmd->add_option("file", args->file, "A .data file or BPF assembly")->required();
  cmd->add_option("--engine", args->engine, EngineChoices())->capture_default_str();
  AddExecutorOption(cmd, &args->executor);
  cmd->callback([args, &settings, &exit_code] { exit_code = Run(*args, settings); });
}

}  // namespace bpfdiff::cli
