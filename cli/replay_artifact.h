// One artifact replayed on every engine, as `bpfdiff replay` shows it: the
// programs, every engine's outcome, the first divergence and the arm64 code
// around it. The text is a function of the artifact (and the planted bug)
// alone: the same in every run, in every process, whatever was replayed
// before it (tests/fuzz/determinism_test.cc holds it to that).
#pragma once

#include <cstdint>
#include <string>

#include "cli/exit_status.h"
#include "fuzz/diff/diff_harness.h"
#include "harness/planted/planted_bugs.h"
#include "jit/a64/disasm/a64_disassembler.h"

namespace bpfdiff::cli {

// How the replay of one artifact ended, for the tally of several.
enum class ReplayEnd : uint8_t {
  kAgree,           // every comparable run agreed
  kRejectedAtLoad,  // the load step rejects it, as the kernel's verifier would
  kDivergence,
  kCouldNotRun,     // the file does not load as a case, or Unicorn failed
};

struct ReplayReport {
  ReplayEnd end = ReplayEnd::kAgree;
  int status = kExitOk;  // kExitFailed for a divergence, kExitBadInput when it could not run
  std::string out;       // for stdout: empty when it could not run (nothing that looks like a verdict)
  std::string err;       // for stderr: why it could not run
  // Unicorn failed: the harness runs nothing more; the next artifact needs
  // a new one.
  bool unicorn_failed = false;
};

// A case the load step rejects is reported as such and is not a failure:
// the fuzz targets count such inputs (the corpus keeps a few on purpose),
// they are not findings. A divergence is localized (its culprit named) and
// shown with the diverging JIT's code around the culprit.
ReplayReport ReplayArtifact(fuzz::DiffHarness& harness, const A64Disassembler& disassembler,
                            const std::string& path);

}  // namespace bpfdiff::cli
