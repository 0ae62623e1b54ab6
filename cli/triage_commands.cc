// bpfdiff replay / minimize / export: from a finding to a regression test.
//
//   replay ARTIFACT...    the program, every engine's outcome, the first
//                         divergence and the arm64 code around it, for
//                         every artifact (cli/replay_artifact.h); exit 0
//                         when all agree, 1 on a divergence, 2 when one
//                         could not run: the worst over the artifacts
//   minimize ARTIFACT -o OUT.data   shrinks while the same divergence persists
//   export ARTIFACT -o OUT.data     a .data test whose expectations are the
//                                   interpreter's
//   export --format test-bpf ARTIFACT -o OUT.c
//                                   entries of lib/test_bpf.c's tests[] or
//                                   tail_call_tests[] (harness/test_bpf/export.h)
//
// A planted bug (BPFDIFF_PLANTED_BUG) applies as in the fuzz targets, so a
// planted bug's findings replay. A Unicorn failure (BPFDIFF_UNICORN_FAULT
// injects one) is an error naming the call, exit 2, and no verdict.
#include "cli/commands.h"
#include "cli/executor_option.h"
#include "harness/diff/engines.h"

#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/replay_artifact.h"
#include "fuzz/diff/triage.h"
#include "fuzz/findings/divergence_kind.h"
#include "harness/conformance/export.h"
#include "harness/diff/differential.h"
#include "harness/test_bpf/export.h"
#include "isa/disassembler.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

using namespace bpfdiff::fuzz;

struct ReplayTally {
  size_t agree = 0, rejected = 0, diverged = 0, could_not_run = 0;
  void Add(ReplayEnd end) {
    switch (end) {
      case ReplayEnd::kAgree: ++agree; break;
      case ReplayEnd::kRejectedAtLoad: ++rejected; break;
      case ReplayEnd::kDivergence: ++diverged; break;
      case ReplayEnd::kCouldNotRun: ++could_not_run; break;
    }
  }
};

// Every artifact, each on its own: one that does not load, or whose run
// Unicorn failed, is reported and the next one still runs (on a new
// harness after a Unicorn failure: the old one can run nothing more).
int Replay(const std::vector<std::string>& artifacts, const std::string& engines, const std::string& executor,
           const Settings& settings) {
  auto disassembler = A64Disassembler::Create();
  if (!disassembler) {
    fmt::print(stderr, "bpfdiff replay: {}\n", disassembler.message());
    return kExitBadInput;
  }
  auto factory = MachineFactoryNamed(executor);
  if (!factory) {
    fmt::print(stderr, "bpfdiff replay: {}\n", factory.message());
    return kExitBadInput;
  }
  if (*factory != nullptr) fmt::print("executor: {}\n", executor);
  std::unique_ptr<DiffHarness> harness;
  std::optional<std::string> cannot_create;  // the harness cannot be made: nothing can run
  ReplayTally tally;
  int status = kExitOk;
  for (const auto& path : artifacts) {
    if (!harness && !cannot_create) {
      auto created = DiffHarness::Create(settings.bugs, settings.unicorn_fault, engines, *factory);
      if (created) harness = std::move(created).value();
      else cannot_create = created.message();
    }
    ReplayReport report;
    if (cannot_create) {
      report.end = ReplayEnd::kCouldNotRun;
      report.status = kExitBadInput;
      report.err = fmt::format("bpfdiff replay: {}: not replayed: {}\n", path, *cannot_create);
    } else {
      report = ReplayArtifact(*harness, *disassembler, path);
      if (report.unicorn_failed) harness.reset();
    }
    fmt::print("{}", report.out);
    std::fflush(stdout);  // keep each artifact's stdout and stderr lines in order
    fmt::print(stderr, "{}", report.err);
    tally.Add(report.end);
    status = WorstStatus(status, report.status);
  }
  if (artifacts.size() > 1) {
    fmt::print("replayed {} files: {} agree, {} rejected at load, {} diverge, {} could not run\n",
               artifacts.size(), tally.agree, tally.rejected, tally.diverged, tally.could_not_run);
  }
  return status;
}

// What ran on a harness whose machine failed is not the program's outcome.
bool ReportUnicornFailure(DiffHarness& harness, std::string_view command, std::string_view artifact) {
  const auto failure = harness.sandbox().UnicornFailure();
  if (failure) fmt::print(stderr, "bpfdiff {}: {}: could not run: {}\n", command, artifact, *failure);
  return failure.has_value();
}

int Minimize(const std::string& artifact, const std::string& output, const std::string& engines,
             const Settings& settings) {
  auto harness = DiffHarness::Create(settings.bugs, settings.unicorn_fault, engines);
  auto source = harness ? LoadArtifact(artifact) : Result<CaseSource>(harness.error());
  if (!source) {
    fmt::print(stderr, "bpfdiff minimize: {}\n", source.message());
    return kExitBadInput;
  }
  (*harness)->ToEngineForms(*source);
  auto result = Minimize(**harness, *source);
  if (ReportUnicornFailure(**harness, "minimize", artifact)) return kExitBadInput;
  if (!result) {
    fmt::print(stderr, "bpfdiff minimize: {}: {}\n", artifact, result.message());
    return kExitFailed;
  }
  const CaseRun run = (*harness)->RunCase(result->source);
  if (ReportUnicornFailure(**harness, "minimize", artifact)) return kExitBadInput;
  const EngineRun* diverged = run.FirstDivergence();
  const Localization localization = (*harness)->Localize(run);
  const auto kind = KindOfFirstDivergence(result->source, run, &localization);
  const std::string comment = fmt::format(
      "Minimized by bpfdiff from {} ({} -> {} slots).\n{}: {}\nfinding kind: {}", artifact, result->slots_before,
      result->slots_after, diverged ? diverged->engine : "?", diverged ? diverged->verdict.Describe() : "",
      kind ? DescribeKind(*kind) : "?");
  if (auto status = WriteFile(output, ExportCase(result->source, *run.runs.front().outcome, comment)); !status) {
    fmt::print(stderr, "bpfdiff minimize: {}\n", status.message());
    return kExitBadInput;
  }
  fmt::print("{} slots before, {} after ({} runs); written to {}\n", result->slots_before, result->slots_after,
             result->runs, output);
  fmt::print("{}", isa::DisassembleForDisplay(result->source.programs.front()));
  if (run.loaded) fmt::print("{}", DescribeLocalization(localization, *run.loaded));
  return kExitOk;
}

int Export(const std::string& artifact, const std::string& output, const Settings& settings) {
  auto harness = DiffHarness::Create(settings.bugs, settings.unicorn_fault);
  auto source = harness ? LoadArtifact(artifact) : Result<CaseSource>(harness.error());
  if (!source) {
    fmt::print(stderr, "bpfdiff export: {}\n", source.message());
    return kExitBadInput;
  }
  const CaseRun run = (*harness)->RunCase(*source);
  if (ReportUnicornFailure(**harness, "export", artifact)) return kExitBadInput;
  if (run.load_error || run.runs.empty() || !run.runs.front().outcome) {
    fmt::print(stderr, "bpfdiff export: {}: {}\n", artifact, run.load_error.value_or("the interpreter did not run"));
    return kExitBadInput;
  }
  const std::string comment = fmt::format("Exported by bpfdiff from {}; expectations are the interpreter's.", artifact);
  if (auto status = WriteFile(output, ExportCase(*source, *run.runs.front().outcome, comment)); !status) {
    fmt::print(stderr, "bpfdiff export: {}\n", status.message());
    return kExitBadInput;
  }
  fmt::print("written {} ({} slots; interpreter: {})\n", output, CountSlots(*source),
             run.runs.front().outcome->Summary());
  return kExitOk;
}

// The artifact as entries of lib/test_bpf.c: results computed by the
// interpreter on what each entry runs.
int ExportTestBpf(const std::string& artifact, const std::string& output, const std::string& name) {
  auto file = kernelsrc::TestBpfFile::Open();
  auto source = file ? LoadArtifact(artifact) : Result<CaseSource>(file.error());
  if (!source) {
    fmt::print(stderr, "bpfdiff export: {}\n", source.message());
    return kExitBadInput;
  }
  auto sandbox = Sandbox::Create();
  auto engines = sandbox ? MakeEngines(**sandbox, "interp") : Result<std::vector<std::unique_ptr<Engine>>>(sandbox.error());
  if (!engines) {
    fmt::print(stderr, "bpfdiff export: {}\n", engines.message());
    return kExitBadInput;
  }
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  const InterpretCase interpret = [&runner](const CaseSource& c) -> Result<Outcome> {
    const CaseRun run = runner.Run(c);
    if (run.load_error) return Fail("it does not load: {}", *run.load_error);
    if (!run.runs.front().outcome) return Fail("{}", run.runs.front().WhyNotRun());
    return *run.runs.front().outcome;
  };
  const std::string entry_name = name.empty() ? std::filesystem::path(artifact).stem().string() : name;
  const std::string comment = fmt::format("{}: exported by bpfdiff from {}; results are bpfdiff's interpreter's.",
                                          entry_name, std::filesystem::path(artifact).filename().string());
  auto exported = ExportAsTestBpf(*source, interpret, file->Markers(), {entry_name, comment});
  if (!exported) {
    fmt::print(stderr, "bpfdiff export: {}: cannot be an entry of lib/test_bpf.c: {}\n", artifact, exported.message());
    return kExitBadInput;
  }
  if (auto status = WriteFile(output, exported->text); !status) {
    fmt::print(stderr, "bpfdiff export: {}\n", status.message());
    return kExitBadInput;
  }
  fmt::print("written {}: {} {} of {}\n", output, exported->names.size(),
             exported->names.size() == 1 ? "entry" : "entries",
             exported->suite == kernelsrc::TestBpfSuite::kCases ? "tests[]" : "tail_call_tests[]");
  for (size_t k = 0; k < exported->names.size(); ++k) {
    fmt::print("  \"{}\": result {:#x}\n", exported->names[k], static_cast<uint32_t>(exported->results[k]));
  }
  return kExitOk;
}

}  // namespace

void AddTriageCommands(CLI::App& app, const Settings& settings, int& exit_code) {
  auto artifacts = std::make_shared<std::vector<std::string>>();
  CLI::App* replay = app.add_subcommand(
      "replay",
      "Run fuzz artifacts (or .data/assembly files) on every engine; each file is replayed and reported, "
      "and the exit status is the worst of them");
  replay->add_option("artifacts", *artifacts, "Crash files, corpus files, .data or assembly files")->required();
  // The engines a fuzz target compares (BPFDIFF_ENGINES for diff_fuzzer).
  auto engines = std::make_shared<std::string>(kAllEngines);
  const std::string engines_help = fmt::format(
      "{}: the interpreter and bpfdiff's JIT; {}: the interpreter and the kernel's own JIT", kAllEngines,
      kKernelEngines);
  replay->add_option("--engines", *engines, engines_help)->check(CLI::IsMember({std::string(kAllEngines), std::string(kKernelEngines)}));
  auto executor = std::make_shared<std::string>("unicorn");
  AddExecutorOption(replay, executor.get());
  replay->callback([artifacts, engines, executor, &settings, &exit_code] {
    exit_code = Replay(*artifacts, *engines, *executor, settings);
  });

  auto min_in = std::make_shared<std::string>(), min_out = std::make_shared<std::string>();
  CLI::App* minimize = app.add_subcommand("minimize", "Shrink an artifact while the same divergence persists");
  minimize->add_option("artifact", *min_in)->required();
  minimize->add_option("-o,--output", *min_out, "The minimized case as a .data file")->required();
  minimize->add_option("--engines", *engines, engines_help)->check(CLI::IsMember({std::string(kAllEngines), std::string(kKernelEngines)}));
  minimize->callback([min_in, min_out, engines, &settings, &exit_code] {
    exit_code = Minimize(*min_in, *min_out, *engines, settings);
  });

  auto exp_in = std::make_shared<std::string>(), exp_out = std::make_shared<std::string>();
  auto exp_format = std::make_shared<std::string>("data"), exp_name = std::make_shared<std::string>();
  CLI::App* exporter = app.add_subcommand(
      "export", "Write an artifact as a .data regression test, or as entries of lib/test_bpf.c (--format test-bpf)");
  exporter->add_option("artifact", *exp_in)->required();
  exporter->add_option("-o,--output", *exp_out, "The .data file, or the C of the entries")->required();
  exporter->add_option("--format", *exp_format,
                       "data: a .data file; test-bpf: entries for lib/test_bpf.c's tests[] (or tail_call_tests[] "
                       "for a case with tail calls), in its own macros")
      ->check(CLI::IsMember({"data", "test-bpf"}));
  exporter->add_option("--name", *exp_name, "test-bpf: the entries' name, after \"bpfdiff: \" (default: the "
                                            "artifact's file name)");
  exporter->callback([exp_in, exp_out, exp_format, exp_name, &settings, &exit_code] {
    if (*exp_format == "test-bpf") {
      if (!settings.bugs.name.empty()) {
        fmt::print(stderr, "bpfdiff export: a planted bug does not apply to --format test-bpf (the interpreter "
                           "gives the results)\n");
        exit_code = kExitBadInput;
        return;
      }
      exit_code = ExportTestBpf(*exp_in, *exp_out, *exp_name);
    } else {
      exit_code = Export(*exp_in, *exp_out, settings);
    }
  });
}

}  // namespace bpfdiff::cli
