// What a conformance run found: one status per test and engine, the counts,
// and the names the JSON results use. Plain data with no dependency beyond
// the standard library, so that the report reads the results without
// linking anything that runs code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bpfdiff {

// kNotComparable: the engine met the file's expectations, but its outcome
// could not be compared with the interpreter's (the reason says why). It
// does not fail the test, and it is counted apart so that it stays visible.
enum class TestStatus : uint8_t { kPass, kFail, kSkip, kNotComparable };

// "pass", "fail", "skip", "not_comparable".
std::string_view TestStatusName(TestStatus status);
// The names above; also "poisoned", what version 1 of the JSON results
// called not comparable.
std::optional<TestStatus> ParseTestStatus(std::string_view name);

// One engine's result for one test.
struct EngineResult {
  std::string engine;
  TestStatus status = TestStatus::kPass;
  std::string reason;
};

struct TestResult {
  std::string name;
  std::string suite;  // the --suite it came from, as given
  // The test's status: a failure on any engine fails it; it is skipped when
  // every engine skipped it; otherwise it passed (runs not comparable
  // included).
  TestStatus status = TestStatus::kPass;
  std::string reason;
  std::vector<EngineResult> engines;  // in the order of ConformanceSummary::engines
};

struct EngineCounts {
  std::string engine;
  int passed = 0, failed = 0, skipped = 0, not_comparable = 0;
};

struct ConformanceSummary {
  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::string> engines;  // the reference (interp) first
  std::vector<TestResult> results;

  std::vector<EngineCounts> PerEngine() const;
};

}  // namespace bpfdiff
