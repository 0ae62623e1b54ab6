// One case run twice, on machines of two executors (Unicorn and VIXL's
// simulator, harness/machine/machine.h): each engine's outcome on the one
// against its outcome on the other, input memory by input memory. The
// JITs' code is the same bytes on both, so any difference is the
// emulators': an "emulator disagreement", never a finding about a JIT.
#pragma once

#include <string>
#include <vector>

#include "harness/diff/differential.h"

namespace bpfdiff {

struct EmulatorDisagreement {
  std::string engine;
  size_t memory = 0;  // 0: the case's own input memory; v: input variant v
  std::string detail;  // the first field that differs, with both values
  // The engine's two runs (in the CaseRuns compared), null where the
  // disagreement is the case's (what loaded, how many engines or variants).
  const EngineRun* a_run = nullptr;
  const EngineRun* b_run = nullptr;
};

// `a` and `b`: the same case, on the same engines, with the same input
// variants, run on the executors named `a_name` and `b_name`. The outcomes
// of a run whose reference read bytes the engines hold differently by
// design are not compared (what it read depends on the sandbox's history);
// whether each engine ran still is.
std::vector<EmulatorDisagreement> CompareExecutors(const CaseRun& a, const CaseRun& b, std::string_view a_name,
                                                   std::string_view b_name);

}  // namespace bpfdiff
