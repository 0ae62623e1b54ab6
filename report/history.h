// The trend over nights: a directory with one small JSON file per night
// (<UTC timestamp>.json holding a HistoryEntry). Each report reads the
// previous nights from it and adds its own.
//
//   {"timestamp": "2024-05-01T03:15:00Z", "tests": 300, "passed": 290, "failed": 0,
//    "skipped": 10, "not_comparable": 4, "fuzz_inputs": 123456, "fuzz_failures": 0,
//    "forms_completed": 168, "forms_total": 174, "planted_detected": 10, "planted_total": 10,
//    "planted_detected_from_empty": 9, "planted_limit_seconds": 30, "planted_empty_runs": 3,
//    "planted_from_seeds": {"alu32-add-no-zext": 0.4, "sub-imm-intmin": null, ...}}
//
// The planted_* keys after planted_total are written when the night ran the
// benchmark; planted_from_seeds holds each bug's seconds to detection from
// the seeds, null when it was not detected (planted_trend.h judges a night
// against them).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "support/json_fields.h"
#include "report/report_model.h"

namespace bpfdiff::report {

Json HistoryEntryToJson(const HistoryEntry& entry);
Result<HistoryEntry> HistoryEntryFromJson(const Json& json, std::string_view where);

struct History {
  std::vector<HistoryEntry> entries;  // oldest first
  std::vector<std::string> unreadable;  // files skipped, with the reason
};

// The last `keep_last` nights of `dir`, by file name (timestamps sort). A
// directory that does not exist yet is an empty history (the first night);
// a file that does not read as an entry is skipped and named, so one bad
// night does not hide every later trend.
Result<History> ReadHistory(const std::filesystem::path& dir, size_t keep_last);

// Writes `entry` as dir/<timestamp>.json (creating dir) and returns the path.
Result<std::filesystem::path> WriteHistoryEntry(const std::filesystem::path& dir, const HistoryEntry& entry);

// Now, UTC, as "2024-05-01T03:15:00Z".
std::string UtcTimestampNow();

}  // namespace bpfdiff::report
