// The counters a fuzz target leaves for the nightly report: a JSON file at
// the path BPFDIFF_FUZZ_STATS_JSON names, written at exit and before the
// abort of a finding, in the format `bpfdiff report --fuzz-stats` reads
// (report/report_inputs.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/result.h"

namespace bpfdiff::fuzz {

struct FuzzStatsFile {
  std::string target;
  double seconds = 0;
  uint64_t inputs = 0;
  std::vector<std::pair<std::string, uint64_t>> counters;  // shown in this order
  std::map<std::string, uint64_t> poisoned;                 // reason -> cases
  std::map<std::string, uint64_t> rejected;
  struct Forms {
    uint64_t total = 0, generated = 0, completed = 0;
    std::vector<std::string> not_completed;
  };
  std::optional<Forms> forms;  // for targets that generate BPF programs
};

// The file's text.
std::string FuzzStatsJson(const FuzzStatsFile& stats);

// Writes the file at `path` (the target's main reads it from
// BPFDIFF_FUZZ_STATS_JSON); nothing for an empty path. An error names the
// path: the caller says so and goes on, since the run's own outcome
// matters more than its statistics.
Status WriteFuzzStatsFile(const std::string& path, const FuzzStatsFile& stats);

}  // namespace bpfdiff::fuzz
