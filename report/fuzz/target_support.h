// What report/fuzz's targets share: a scratch directory of the process's
// own, the way a finding ends, and the round trip of a history entry (both
// targets read history entries: history_fuzzer through the directory
// loader, report_json_fuzzer one file at a time).
#pragma once

#include <filesystem>
#include <string_view>

#include "report/history.h"

namespace bpfdiff::report::fuzzing {

// Makes a fresh directory under TMPDIR (std::filesystem::temp_directory_path,
// called from LLVMFuzzerInitialize: the target's main) named after
// `target`, removed at exit and before a finding aborts. Exits with status
// 2 when it cannot be made.
const std::filesystem::path& MakeScratchDirectory(std::string_view target);

// The finding's banner ("==== TARGET finding ====" and what broke), then abort.
[[noreturn]] void Found(std::string_view what);
// The harness cannot go on (a file it cannot write): status 2, no finding.
[[noreturn]] void Fatal(std::string_view what);

// Written and read back, `entry` must read and write the same JSON again.
void CheckHistoryRoundTrip(const HistoryEntry& entry);

}  // namespace bpfdiff::report::fuzzing
