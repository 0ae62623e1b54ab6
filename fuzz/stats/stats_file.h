// The stats file: the counters a fuzz target leaves for the nightly report,
// written at exit and before the abort of a finding, and read back by
// `bpfdiff report --fuzz-stats`. This header is the file's one schema; both
// sides use it.
//
//   {"target": "diff_fuzzer", "seconds": 60.2, "inputs": 1234,
//    "counters": {"compared": 100, ...},
//    "reasons": {"not_comparable": {"<reason>": 12, ...}, "rejected": {...}},
//    "forms": {"total": 174, "generated": 172, "completed": 168, "not_completed": ["ldabs b", ...]},
//    "states": {"reached": {"loads_filling_a_bitmap_word": 3, ...}, "largest": {"largest_image_bytes": 65536, ...}}}
//
// "states" (optional; pack_fuzzer's) is state coverage: how many times
// each state was reached, 0 for a state never reached, and the largest
// values seen. Workers' "reached" add up; their "largest" do not (the
// larger one is kept).
//
// Reasons are written most frequent first, every one of them. A reader
// also takes "poisoned" for "not_comparable" (files written before the
// rename), ignores unknown keys, and names the file and field in every
// error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/json_fields.h"
#include "support/result.h"

namespace bpfdiff::fuzz {

using NamedCounts = std::vector<std::pair<std::string, uint64_t>>;  // in the writer's order

// Coverage of the opcode table by a target that generates BPF programs.
struct FormCoverage {
  uint64_t total = 0, generated = 0, completed = 0;
  std::vector<std::string> not_completed;  // forms generated or not, that never ran to completion
};

// The counter of the cases a Linux tree's kernel engines compared, by the
// tree's version: "compared by linux 6.1.192".
inline constexpr std::string_view kComparedByTree = "compared by linux ";
// The counter of a known finding of the kernel's JIT: "known finding
// atomic-fetch-src-is-dst", and "known finding atomic-fetch-src-is-dst@6.1.192"
// when a tree linked beside the build's own met it.
inline constexpr std::string_view kKnownFindingCounter = "known finding ";

struct FuzzStatsFile {
  std::string target;
  double seconds = 0;
  uint64_t inputs = 0;
  NamedCounts counters;        // shown in this order
  NamedCounts not_comparable;  // reason -> cases, most frequent first
  NamedCounts rejected;
  std::optional<FormCoverage> forms;
  NamedCounts states_reached;  // state -> times reached (0: never)
  NamedCounts states_largest;  // value -> largest seen
};

// Reasons counted by category, most frequent first (ties by name), so that
// a file and a summary line list them in the order a reader wants.
NamedCounts MostFrequentFirst(NamedCounts counts);

// The file's JSON, and its text.
Json FuzzStatsToJson(const FuzzStatsFile& stats);
std::string FuzzStatsJson(const FuzzStatsFile& stats);
// The file from its JSON; `where` names it in messages.
Result<FuzzStatsFile> FuzzStatsFromJson(const Json& json, std::string_view where);

// Writes the file at `path` (a target's main reads it from
// BPFDIFF_FUZZ_STATS_JSON); nothing for an empty path. An error names the
// path: the caller says so and goes on, since the run's own outcome
// matters more than its statistics.
Status WriteFuzzStatsFile(const std::string& path, const FuzzStatsFile& stats);
Result<FuzzStatsFile> ReadFuzzStatsFile(const std::filesystem::path& path);

}  // namespace bpfdiff::fuzz
