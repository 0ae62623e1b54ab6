// What a fuzz target's main reads from its environment, once, in
// LLVMFuzzerInitialize (library code reads none):
//
//   BPFDIFF_PLANTED_BUG=<name>        a planted bug to switch on (a negative
//                                     control; the banner says so on stderr)
//   BPFDIFF_FUZZ_STATS_JSON=<path>    where to write the target's counters
//                                     for the nightly report
//
// An unknown bug name ends the process with status 2 and the list of known
// names: a control that silently ran without its bug would prove nothing.
#pragma once

#include <string>
#include <string_view>

#include "fuzz/stats/stats_file.h"
#include "harness/planted/planted_bugs.h"

namespace bpfdiff::fuzz {

struct TargetSettings {
  PlantedBugs bugs;
  std::string stats_path;  // empty: no stats file
};

TargetSettings ReadTargetSettings(std::string_view target);

// Writes the stats file the settings name (if any); says on stderr why when
// it cannot, and goes on.
void WriteStats(const TargetSettings& settings, const FuzzStatsFile& stats);

}  // namespace bpfdiff::fuzz
