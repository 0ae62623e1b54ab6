// Planted bugs: known defects the JIT, the pack or the recursion harness can
// be told to have, so that bpfdiff can be shown to catch what it claims to
// catch (negative controls).
//
// A planted bug is never on by accident: the only way to switch one on from
// a command or a fuzz target is the environment variable
//
//   BPFDIFF_PLANTED_BUG=<name>
//
// and every process that reads it prints a banner saying so. Code and tests
// set the bug structs (jit::JitBugs, jit::PackBugs, ...) explicitly.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "jit/jit.h"
#include "jit/prog_pack.h"
#include "support/result.h"

namespace bpfdiff {

struct PlantedBugs {
  std::string name;  // empty: none
  jit::JitBugs jit;
  jit::PackBugs pack;
  bool free_without_grace_period = false;  // the pack lifecycle's deferred free is skipped
  // For the recursion harness, which has bugs of its own (by name).
  std::string recursion;
};

struct PlantedBugInfo {
  std::string_view name;
  std::string_view what;
};
std::span<const PlantedBugInfo> KnownPlantedBugs();

// The bug named by BPFDIFF_PLANTED_BUG (none when unset or empty); an
// unknown name is an error listing the known ones. Prints the banner.
Result<PlantedBugs> PlantedBugsFromEnvironment();

// The bugs for `name` ("" for none).
Result<PlantedBugs> PlantedBugsNamed(std::string_view name);

}  // namespace bpfdiff
