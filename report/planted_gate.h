// The planted-bug gate's results (ci/planted_gate.py writes them; the
// nightly and ctest run it): per planted bug, whether its fuzz target
// reported a finding replaying the bug's fixed reproducer with the bug
// switched on, and replayed it cleanly without. Deterministic, unlike the
// timed benchmark (planted_results.h): this is what the night's verdict
// on planted bugs rests on.
//
//   {"format": "bpfdiff-planted-gate-1", "passed": true,
//    "planted_in_environment": null, "problems": ["<file>: names no planted bug", ...],
//    "bugs": [{"bug": "...", "target": "diff_fuzzer", "reproducer": "tests/planted/reproducers/...",
//              "passed": true, "problem": "",
//              "with_bug": {"result": "finding", "exit_code": 77, "seconds": 0.3},
//              "without_bug": {"result": "clean", "exit_code": 0, "seconds": 0.2}}, ...]}
//
// A replay's result is "finding", "clean" or "error" (no finding banner
// where one was due, a harness failure, a hang); a bug with no reproducer
// has no replays.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/json_fields.h"
#include "support/result.h"

namespace bpfdiff::report {

struct GateReplay {
  std::string result;
  int64_t exit_code = 0;
  double seconds = 0;
};

struct GateCheck {
  std::string bug, target, reproducer;
  std::string problem;  // why it failed; empty when it passed
  std::optional<GateReplay> with_bug, without_bug;
  bool passed() const { return problem.empty(); }
};

struct PlantedGate {
  std::vector<GateCheck> checks;
  std::vector<std::string> problems;  // of no one bug (a reproducer that names none)
  std::string planted_in_environment;  // the night's BPFDIFF_PLANTED_BUG, if any
  // Every bug caught and clean, and nothing else wrong. The file's own
  // "passed" is not trusted: it is recomputed from the checks.
  bool Passed() const;
  int CaughtCount() const;  // checks passed
};

Result<PlantedGate> PlantedGateFromJson(const Json& json, std::string_view where);
Result<PlantedGate> LoadPlantedGate(const std::filesystem::path& path);

}  // namespace bpfdiff::report
