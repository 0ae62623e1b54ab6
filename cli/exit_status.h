// The exit statuses of every bpfdiff command, in order of severity. A
// command given several files (replay, pack replay, conformance with several
// suites, report with several inputs) handles every one, reports each, and
// exits with the worst status any of them had.
#pragma once

#include <algorithm>
#include <string_view>

namespace bpfdiff::cli {

inline constexpr int kExitOk = 0;        // success, or every engine agreed
inline constexpr int kExitFailed = 1;    // a test failed, engines diverged, an invariant broke
inline constexpr int kExitBadInput = 2;  // could not run: bad usage or input, a file that
                                         // does not load or cannot be written, Unicorn failed

inline int WorstStatus(int a, int b) { return std::max(a, b); }

// For --help.
inline constexpr std::string_view kExitStatusHelp =
    "Exit status, from the best to the worst: 0 success (every engine agreed, every test\n"
    "passed); 1 a finding (a test failed, engines diverged, an invariant broke); 2 could\n"
    "not run (bad usage or input, a file that does not load or cannot be written, the\n"
    "Unicorn engine failed). A command given several files handles every one, reports\n"
    "each, and exits with the worst status among them.\n"
    "\n"
    "Environment: BPFDIFF_PLANTED_BUG=NAME switches a planted bug on (bpfdiff planted\n"
    "list); BPFDIFF_UNICORN_FAULT=CALL[:SKIP] makes a Unicorn call (open, map or start)\n"
    "fail on purpose after SKIP such calls succeeded, to show how a failure is reported.";

}  // namespace bpfdiff::cli
