// `bpfdiff recursion --compare`: the three recursion policies on the same
// schedules, the minimal schedule for each difference, and the atomics each
// trigger costs.
//
// ComparePolicies() runs everything and returns what it found as data;
// FormatPolicyComparison() is the one formatter that writes the report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/recursion/equivalence.h"

namespace bpfdiff::recursion {

struct CompareOptions {
  size_t schedules = 1000;
  uint64_t seed = 1;
  jit::TrampolineBugs bugs;
};

// 1. Random interrupt-only schedules under every configuration.
struct RandomSchedules {
  size_t schedules = 0;
  uint64_t seed = 0;
  size_t configurations = 0, runs = 0, invocations = 0, findings = 0;
  std::optional<std::string> first_finding;  // the configuration, the schedule and the summary
  size_t clean = 0;  // schedules whose every run was free of findings (the ones compared)
  size_t llsc_same = 0, landed_same = 0, percontext_same = 0, percontext_different = 0;
  size_t unexplained = 0;             // schedules where a claim did not hold
  std::vector<std::string> problems;  // each claim that did not hold, with its schedule
};

// One policy's run of an example schedule.
struct ExampleRun {
  Policy policy = Policy::kAtomic;
  std::string decisions;              // "A.1 run, softirq3.1 miss"
  std::vector<std::string> notes;     // the runner's notes
  std::optional<std::string> timeline;  // percontext's, which the report shows
  std::vector<std::string> problems;  // what this run should have shown and did not
};

// 2. The minimal schedule where percontext runs an invocation that atomic
// misses: a program fired in a higher context while active in a lower one.
struct NestedRunExample {
  size_t candidates = 0;
  std::optional<Schedule> schedule;
  std::vector<ExampleRun> runs;
  struct Nested {
    std::string id;
    int level = 0;
    int program = 0;
  };
  std::optional<Nested> nested;  // the invocation percontext ran
};

// 3. The minimal schedule where a task switch splits percontext's
// non-atomic increment, and one more task after it.
struct LostUpdateExample {
  size_t candidates = 0;
  std::optional<Schedule> schedule;  // with the finish and the later task
  std::vector<ExampleRun> runs;
  std::optional<std::string> percontext_both;  // "A.1 and B.1": ran at once under percontext
  bool percontext_later_missed = false;        // C.1 missed under percontext
};

struct PolicyComparison {
  RandomSchedules random;
  NestedRunExample nested;
  LostUpdateExample lost_update;
  std::vector<AtomicsRow> atomics;   // 4. per policy and lowering
  std::optional<std::string> atomics_error;
  double seconds = 0;

  // Every claim held and no run had a finding.
  bool ok() const;
};

Result<PolicyComparison> ComparePolicies(const CompareOptions& options);
std::string FormatPolicyComparison(const PolicyComparison& comparison);

// The lost-update schedule of the report (task preemption between the load
// and the store of percontext's increment), without the search.
Schedule LostUpdateSchedule();
// The percontext nested-run schedule of the report, without the search.
Schedule NestedRunSchedule();

}  // namespace bpfdiff::recursion
