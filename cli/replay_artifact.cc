#include "cli/replay_artifact.h"

#include <fmt/format.h>

#include "cli/listing/jit_listing.h"
#include "fuzz/diff/triage.h"
#include "fuzz/findings/divergence_kind.h"
#include "fuzz/findings/known_kernel_findings.h"
#include "fuzz/findings/three_way.h"
#include "harness/diff/engines.h"
#include "harness/diff/jit_engine.h"
#include "isa/disassembler.h"

namespace bpfdiff::cli {
namespace {

// The arm64 code of the diverging engine around the culprit (else the
// faulting slot; the whole program when no instruction is known), compiled
// again as the run compiled it.
std::string CodeAround(fuzz::DiffHarness& harness, const A64Disassembler& disassembler, const CaseRun& run,
                       const EngineRun& diverged, const Localization& localization) {
  auto again = PreparedAgain::For(harness.runner(), run, diverged);
  if (!again) return fmt::format("  (not shown: {})\n", again.message());
  ListingOptions listing;
  size_t program = 0;
  const Outcome& reference = *run.runs.front().outcome;
  const Outcome& candidate = *diverged.outcome;
  const std::optional<FaultInfo> fault = reference.fault ? reference.fault : candidate.fault;
  std::optional<std::pair<size_t, uint32_t>> at;  // program, slot
  if (localization.culprit) {
    at = {localization.culprit->program, localization.culprit->slot};
  } else if (fault) {
    at = {fault->program, fault->insn};
  }
  if (at) {
    program = at->first;
    listing.first_slot = at->second >= 3 ? at->second - 3 : 0;
    listing.last_slot = at->second + 3;
    listing.mark_slot = at->second;
  }
  const auto& compiled = *(*again)->jit().compiled_programs();
  if (program >= compiled.size()) return "";
  return JitListing(disassembler, run.loaded->programs[program].program, compiled[program],
                    harness.sandbox().env().memory(), listing);
}

ReplayReport CouldNotRun(std::string why) {
  ReplayReport report;
  report.end = ReplayEnd::kCouldNotRun;
  report.status = kExitBadInput;
  report.err = fmt::format("bpfdiff replay: {}\n", why);
  return report;
}

}  // namespace

ReplayReport ReplayArtifact(fuzz::DiffHarness& harness, const A64Disassembler& disassembler,
                            const std::string& path) {
  auto source = fuzz::LoadArtifact(path);
  if (!source) {
    // Every loader's message names the file, but for one that did not.
    const std::string& message = source.message();
    return CouldNotRun(message.starts_with(path) ? message : fmt::format("{}: {}", path, message));
  }
  harness.ToEngineForms(*source);
  const CaseRun run = harness.RunCase(*source);
  // Outcomes of a run whose machine failed are not the program's: say what
  // failed, and print nothing that reads as a verdict.
  if (auto failure = harness.sandbox().UnicornFailure()) {
    ReplayReport report = CouldNotRun(fmt::format("{}: could not run: {}", path, *failure));
    report.unicorn_failed = true;
    return report;
  }

  ReplayReport report;
  std::string& out = report.out;
  out += fmt::format("== {}\n", path);
  for (size_t p = 0; p < source->programs.size(); ++p) {
    out += fmt::format("program {} ({} slots):\n{}", p, source->programs[p].size(),
                       isa::DisassembleForDisplay(source->programs[p]));
  }
  if (run.load_error) {
    report.end = ReplayEnd::kRejectedAtLoad;
    out += fmt::format("rejected at load: {}\n", *run.load_error);
    return report;
  }
  for (const auto& engine_run : run.runs) {
    if (engine_run.outcome) {
      out += fmt::format("{}: {}", engine_run.engine, engine_run.outcome->Describe());
    } else {
      out += fmt::format("{}: {}\n", engine_run.engine, engine_run.WhyNotRun());
    }
  }
  for (const auto& reason : run.NotComparableReasons()) out += fmt::format("not comparable: {}\n", reason);
  if (const EngineRun* diverged = run.FirstDivergence()) {
    report.end = ReplayEnd::kDivergence;
    report.status = kExitFailed;
    out += fmt::format("DIVERGENCE {}: {}\n", diverged->engine, diverged->verdict.Describe());
    const Localization localization = harness.Localize(run);
    out += DescribeLocalization(localization, *run.loaded);
    if (auto kind = fuzz::KindOfFirstDivergence(*source, run, &localization)) {
      out += fmt::format("finding kind: {}\n", fuzz::DescribeKind(*kind));
    }
    if (auto three_way = fuzz::ThreeWayVerdict(run, *diverged)) out += fmt::format("against both interpreters: {}\n", *three_way);
    if (auto trees = fuzz::TreeVerdict(run, *diverged)) out += fmt::format("across trees: {}\n", *trees);
    if (auto known = fuzz::KnownKernelFinding(run, *diverged, &localization)) {
      out += fmt::format("known finding of the kernel's JIT: {} (kernelsrc/SHIMS.md)\n", *known);
    }
    out += fmt::format("arm64 code ({}):\n{}", diverged->engine,
                       CodeAround(harness, disassembler, run, *diverged, localization));
    // Compiling again patches text, which asks Unicorn to drop translations.
    if (auto failure = harness.sandbox().UnicornFailure()) {
      report.err = fmt::format("bpfdiff replay: {}: after the run: {}\n", path, *failure);
      report.unicorn_failed = true;
      report.status = kExitBadInput;
    }
  } else {
    out += fmt::format("{}\n", run.NotComparableReasons().empty() ? "all engines agree"
                                                                   : "no divergence among the runs that can be compared");
  }
  return report;
}

}  // namespace bpfdiff::cli
