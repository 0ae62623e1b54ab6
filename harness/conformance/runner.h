// The conformance runner: every `.data` file of a directory on the chosen
// engines, with upstream bpf_conformance's selection rule (a test needs the
// highest CPU version and every group of its instructions).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/diff/differential.h"
#include "harness/planted/planted_bugs.h"
#include "isa/opcode_table.h"

namespace bpfdiff {

// What RunConformance prints: one line per test (the classic form), or only
// the failures and the counts (for logs that people read every morning).
enum class ConformanceListing : uint8_t { kEveryTest, kFailuresOnly };

struct ConformanceOptions {
  std::vector<std::filesystem::path> suites;
  std::string engine = "interp";  // interp, jit, jit-llsc, all
  isa::CpuVersion cpu = isa::CpuVersion::kV4;
  uint32_t groups = isa::kGroupsDefault;
  std::optional<std::string> include;  // regex over file names
  std::optional<std::string> exclude;
  PlantedBugs bugs;  // negative controls only (see harness/planted/planted_bugs.h)
  ConformanceListing listing = ConformanceListing::kEveryTest;
};

// kPoisoned: the engine met the file's expectations, but its outcome could
// not be compared with the interpreter's (the verdict's reason says why). It
// does not fail the test, and it is counted apart so that it stays visible.
enum class TestStatus : uint8_t { kPass, kFail, kSkip, kPoisoned };

std::string_view TestStatusName(TestStatus status);  // "pass", "fail", "skip", "poisoned"
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
  // every engine skipped it; otherwise it passed (poisoned runs included).
  TestStatus status = TestStatus::kPass;
  std::string reason;
  std::vector<EngineResult> engines;  // in the order of ConformanceSummary::engines
};

struct EngineCounts {
  std::string engine;
  int passed = 0, failed = 0, skipped = 0, poisoned = 0;
};

struct ConformanceSummary {
  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::string> engines;  // the reference (interp) first
  std::vector<TestResult> results;

  std::vector<EngineCounts> PerEngine() const;
};

// Runs the suites and prints to `out` as options.listing says, then a line
// of counts per engine (when there are several) and the closing summary
// line. Errors only for bad options (a missing directory, a bad regex); a
// test that fails is a result, not an error.
Result<ConformanceSummary> RunConformance(const ConformanceOptions& options, std::ostream& out);

}  // namespace bpfdiff
