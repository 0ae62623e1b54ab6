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

#include "harness/conformance/results.h"
#include "harness/diff/differential.h"
#include "harness/diff/engines.h"
#include "harness/planted/planted_bugs.h"
#include "isa/opcode_table.h"

namespace bpfdiff {

// What RunConformance prints: one line per test (the classic form), or only
// the failures and the counts (for logs that people read every morning).
enum class ConformanceListing : uint8_t { kEveryTest, kFailuresOnly };

struct ConformanceOptions {
  std::vector<std::filesystem::path> suites;
  std::string engine{EngineSpecs().front().name};  // a name of harness/diff/engines.h, or all
  isa::CpuVersion cpu = isa::CpuVersion::kV4;
  uint32_t groups = isa::kGroupsDefault;
  std::optional<std::string> include;  // regex over file names
  std::optional<std::string> exclude;
  PlantedBugs bugs;  // negative controls only (see harness/planted/planted_bugs.h)
  UnicornFault unicorn_fault;  // a Unicorn call made to fail on purpose (BPFDIFF_UNICORN_FAULT)
  // The machines' executor (SandboxOptions::machine_factory; nullptr:
  // Unicorn). Any other is named before the counts.
  MachineFactory machine_factory = nullptr;
  ConformanceListing listing = ConformanceListing::kEveryTest;
};

// Runs the suites and prints to `out` as options.listing says, then a line
// of counts per engine (when there are several) and the closing summary
// line. Errors for bad options (a missing directory, a bad regex) and for
// a Unicorn failure, which names the test it stopped at (nothing after it
// could run, and no counts are printed); a test that fails is a result,
// not an error.
Result<ConformanceSummary> RunConformance(const ConformanceOptions& options, std::ostream& out);

}  // namespace bpfdiff
