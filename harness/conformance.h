// The conformance runner: every `.data` file of a directory on the chosen
// engines, with upstream bpf_conformance's selection rule (a test needs the
// highest CPU version and every group of its instructions).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/differential.h"
#include "harness/planted_bug.h"
#include "isa/opcode_table.h"

namespace bpfdiff {

struct ConformanceOptions {
  std::vector<std::filesystem::path> suites;
  std::string engine = "interp";  // interp, jit, jit-llsc, all
  isa::CpuVersion cpu = isa::CpuVersion::kV4;
  uint32_t groups = isa::kGroupsDefault;
  std::optional<std::string> include;  // regex over file names
  std::optional<std::string> exclude;
  PlantedBugs bugs;  // negative controls only (see planted_bug.h)
};

enum class TestStatus : uint8_t { kPass, kFail, kSkip };

struct TestResult {
  std::string name;
  TestStatus status;
  std::string reason;
};

struct ConformanceSummary {
  int passed = 0, failed = 0, skipped = 0;
  std::vector<TestResult> results;
};

// Runs the suites and prints one line per test and the closing summary
// line to `out`. Errors only for bad options (a missing directory, a bad
// regex); a test that fails is a result, not an error.
Result<ConformanceSummary> RunConformance(const ConformanceOptions& options, std::ostream& out);

}  // namespace bpfdiff
