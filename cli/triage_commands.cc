// bpfdiff replay / minimize / export: from a finding to a regression test.
//
//   replay ARTIFACT...    the program, every engine's outcome, the first
//                         divergence and the arm64 code around it;
//                         exit 0 when all agree, 1 on divergence, 2 on bad input
//   minimize ARTIFACT -o OUT.data   shrinks while the same divergence persists
//   export ARTIFACT -o OUT.data     a .data test whose expectations are the
//                                   interpreter's
//
// A planted bug (BPFDIFF_PLANTED_BUG) applies as in the fuzz targets, so a
// planted bug's findings replay.
#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/listing/jit_listing.h"
#include "fuzz/diff/triage.h"
#include "harness/conformance/export.h"
#include "harness/diff/jit_engine.h"
#include "harness/diff/engines.h"
#include "isa/disassembler.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

using namespace bpfdiff::fuzz;

// The arm64 code of the diverging engine around `slot` (the whole program
// when no instruction is known), compiled again in the same sandbox.
std::string CodeAround(DiffHarness& harness, const PlantedBugs& bugs, const CaseRun& run,
                       const EngineRun& diverged) {
  auto disassembler = A64Disassembler::Create();
  if (!disassembler || !run.loaded) return "";
  jit::JitOptions options;
  const EngineSpec* spec = FindEngine(diverged.engine);
  if (spec == nullptr || spec->kind != EngineKind::kJit) return "";
  options.atomics = spec->atomics;
  options.bugs = bugs.jit;
  JitEngine engine(harness.sandbox(), options, diverged.engine);
  harness.sandbox().env().Install(*run.loaded);
  if (!engine.Prepare(*run.loaded)) return "";
  ListingOptions listing;
  size_t program = 0;
  const Outcome& reference = *run.runs.front().outcome;
  const Outcome& candidate = *diverged.outcome;
  const std::optional<FaultInfo> fault = reference.fault ? reference.fault : candidate.fault;
  if (fault) {
    program = fault->program;
    listing.first_slot = fault->insn >= 3 ? fault->insn - 3 : 0;
    listing.last_slot = fault->insn + 3;
    listing.mark_slot = fault->insn;
  }
  if (program >= engine.compiled().size()) return "";
  return JitListing(*disassembler, run.loaded->programs[program].program, engine.compiled()[program],
                    harness.sandbox().env().memory(), listing);
}

int Replay(const std::vector<std::string>& artifacts, const PlantedBugs& bugs) {
  auto harness = DiffHarness::Create(bugs);
  if (!harness) {
    fmt::print(stderr, "bpfdiff replay: {}\n", harness.message());
    return kExitBadInput;
  }
  int status = kExitOk;
  for (const auto& path : artifacts) {
    auto source = LoadArtifact(path);
    if (!source) {
      fmt::print(stderr, "bpfdiff replay: {}\n", source.message());
      return kExitBadInput;
    }
    fmt::print("== {}\n", path);
    for (size_t p = 0; p < source->programs.size(); ++p) {
      fmt::print("program {} ({} slots):\n{}", p, source->programs[p].size(),
                 isa::DisassembleForDisplay(source->programs[p]));
    }
    const CaseRun run = (*harness)->RunCase(*source);
    if (run.load_error) {
      fmt::print(stderr, "bpfdiff replay: {}: rejected at load: {}\n", path, *run.load_error);
      return kExitBadInput;
    }
    for (const auto& engine_run : run.runs) {
      if (engine_run.outcome) {
        fmt::print("{}: {}", engine_run.engine, engine_run.outcome->Describe());
      } else {
        fmt::print("{}: {}\n", engine_run.engine, engine_run.WhyNotRun());
      }
    }
    for (const auto& reason : run.NotComparableReasons()) fmt::print("not comparable: {}\n", reason);
    if (const EngineRun* diverged = run.FirstDivergence()) {
      fmt::print("DIVERGENCE {}: {}\n", diverged->engine, diverged->verdict.Describe());
      fmt::print("arm64 code ({}):\n{}", diverged->engine, CodeAround(**harness, bugs, run, *diverged));
      status = kExitFailed;
    } else {
      fmt::print("{}\n", run.NotComparableReasons().empty() ? "all engines agree" : "no divergence among the runs that can be compared");
    }
  }
  return status;
}

int Minimize(const std::string& artifact, const std::string& output, const PlantedBugs& bugs) {
  auto harness = DiffHarness::Create(bugs);
  auto source = harness ? LoadArtifact(artifact) : Result<CaseSource>(harness.error());
  if (!source) {
    fmt::print(stderr, "bpfdiff minimize: {}\n", source.message());
    return kExitBadInput;
  }
  auto result = Minimize(**harness, *source);
  if (!result) {
    fmt::print(stderr, "bpfdiff minimize: {}: {}\n", artifact, result.message());
    return kExitFailed;
  }
  const CaseRun run = (*harness)->RunCase(result->source);
  const EngineRun* diverged = run.FirstDivergence();
  const std::string comment = fmt::format(
      "Minimized by bpfdiff from {} ({} -> {} slots).\n{}: {}", artifact, result->slots_before,
      result->slots_after, diverged ? diverged->engine : "?", diverged ? diverged->verdict.Describe() : "");
  if (auto status = WriteFile(output, ExportCase(result->source, *run.runs.front().outcome, comment)); !status) {
    fmt::print(stderr, "bpfdiff minimize: {}\n", status.message());
    return kExitBadInput;
  }
  fmt::print("{} slots before, {} after ({} runs); written to {}\n", result->slots_before, result->slots_after,
             result->runs, output);
  fmt::print("{}", isa::DisassembleForDisplay(result->source.programs.front()));
  return kExitOk;
}

int Export(const std::string& artifact, const std::string& output, const PlantedBugs& bugs) {
  auto harness = DiffHarness::Create(bugs);
  auto source = harness ? LoadArtifact(artifact) : Result<CaseSource>(harness.error());
  if (!source) {
    fmt::print(stderr, "bpfdiff export: {}\n", source.message());
    return kExitBadInput;
  }
  const CaseRun run = (*harness)->RunCase(*source);
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

}  // namespace

void AddTriageCommands(CLI::App& app, const Settings& settings, int& exit_code) {
  auto artifacts = std::make_shared<std::vector<std::string>>();
  CLI::App* replay = app.add_subcommand("replay", "Run fuzz artifacts (or .data/assembly files) on every engine");
  replay->add_option("artifacts", *artifacts, "Crash files, corpus files, .data or assembly files")->required();
  replay->callback([artifacts, &settings, &exit_code] { exit_code = Replay(*artifacts, settings.bugs); });

  auto min_in = std::make_shared<std::string>(), min_out = std::make_shared<std::string>();
  CLI::App* minimize = app.add_subcommand("minimize", "Shrink an artifact while the same divergence persists");
  minimize->add_option("artifact", *min_in)->required();
  minimize->add_option("-o,--output", *min_out, "The minimized case as a .data file")->required();
  minimize->callback([min_in, min_out, &settings, &exit_code] { exit_code = Minimize(*min_in, *min_out, settings.bugs); });

  auto exp_in = std::make_shared<std::string>(), exp_out = std::make_shared<std::string>();
  CLI::App* exporter = app.add_subcommand("export", "Write an artifact as a .data regression test");
  exporter->add_option("artifact", *exp_in)->required();
  exporter->add_option("-o,--output", *exp_out, "The .data file")->required();
  exporter->callback([exp_in, exp_out, &settings, &exit_code] { exit_code = Export(*exp_in, *exp_out, settings.bugs); });
}

}  // namespace bpfdiff::cli
