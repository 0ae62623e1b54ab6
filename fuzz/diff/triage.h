// Triage of findings: loading an artifact (a fuzz input, or a `.data` or
// assembly file), running it on every engine, and shrinking it while the
// same divergence persists.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "fuzz/diff/diff_harness.h"
#include "oracle/load.h"
#include "support/result.h"

namespace bpfdiff::fuzz {

// A case from a file: `.data` and assembly files as `bpfdiff run` reads
// them, anything else as fuzz input bytes of the current format.
Result<CaseSource> LoadArtifact(const std::filesystem::path& path);

// What identifies a divergence for minimization: the engine and the kind of
// the finding (fuzz/findings/divergence_kind.h): the culprit's form when the
// lockstep runs locate one ("culprit jset32 (jit)"), else the field that
// differs. Keeping the culprit's form fixed keeps one bug from shrinking
// into another that happens to reach the same field.
struct DivergenceSignature {
  std::string engine;
  std::string kind;
  friend bool operator==(const DivergenceSignature&, const DivergenceSignature&) = default;
};
// Localizes the run's first divergence on `harness` (so only for runs
// that diverge).
std::optional<DivergenceSignature> SignatureOf(DiffHarness& harness, const CaseSource& source, const CaseRun& run);

struct MinimizeResult {
  CaseSource source;
  size_t slots_before = 0;
  size_t slots_after = 0;
  int runs = 0;
};

// Removes instructions (in shrinking chunks, retargeting jumps and calls
// across them), later programs and maps, and simplifies immediates, keeping
// each change only while the case still loads and diverges with the same
// signature (the same culprit form, on the same engine). Error when the
// case does not diverge to begin with.
Result<MinimizeResult> Minimize(DiffHarness& harness, const CaseSource& source);

// The number of instruction slots of every program.
size_t CountSlots(const CaseSource& source);

}  // namespace bpfdiff::fuzz
