// Planted-bug controls for the recursion checks (negative controls: each one
// must be caught). A bug is never on by default: code switches one on by
// passing a jit::TrampolineBugs with a field set, and the CLI and the fuzz
// target do that only when the environment says
//
//   BPFDIFF_PLANTED_BUG=<name>
//
// naming one of the bugs below (read through harness/planted/planted_bugs.h, the
// project-wide switch, which prints the banner).
#pragma once

#include <span>
#include <string_view>

#include "jit/trampoline.h"
#include "support/result.h"

namespace bpfdiff::recursion {

struct PlantedBugInfo {
  std::string_view name;
  std::string_view description;
  bool jit::TrampolineBugs::*field;
};

// recursion-exit-wrong-context, recursion-check-then-increment,
// recursion-rctx-wrong-bits.
std::span<const PlantedBugInfo> PlantedBugList();

// The bugs named by `name`; an error listing the names for any other.
Result<jit::TrampolineBugs> PlantedBugByName(std::string_view name);

// BPFDIFF_PLANTED_BUG: no bug when unset or empty; an error for a name that
// is not a recursion bug (a JIT or pack bug is not planted here). Prints the
// banner when one is switched on.
Result<jit::TrampolineBugs> PlantedBugFromEnvironment();

bool AnyBug(const jit::TrampolineBugs& bugs);

}  // namespace bpfdiff::recursion
