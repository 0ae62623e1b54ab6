// What broke in a recursion_fuzzer finding, and the frames the target ends
// in for it (see finding_frames.h), innermost first:
//
//   Recursion<WhatBroke>      RecursionCodeDisagreesWithModel, ...
//   Under<Policy>Policy       the policy whose run broke, when one did
//   EndInRecursionFrames
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fuzz/findings/finding_frames.h"
#include "harness/recursion/runner.h"
#include "kernel/recursion.h"

namespace bpfdiff::fuzz {

enum class RecursionBreak : uint8_t {
  kAttachedProgramsDoNotLoad,   // the schedule's programs would not compile
  kScheduleDoesNotRun,          // RunSchedule refused the schedule
  kCodeDisagreesWithModel,      // recursion::Finding::Kind::kModel
  kPolicyInvariantBroken,       // ... kInvariant
  kRunDiffersFromInterpreter,   // ... kInterpreter
  kRunCannotGoOn,               // ... kHarness (a fault, a budget, nesting)
  kPoliciesNotEquivalent,       // CheckEquivalence found a claim broken
};

struct RecursionFindingKind {
  RecursionBreak what = RecursionBreak::kCodeDisagreesWithModel;
  std::optional<recursion::Policy> policy;  // the run's, for what broke in one run

  friend bool operator==(const RecursionFindingKind&, const RecursionFindingKind&) = default;
};

// The kind of a run with findings: its first finding's, under its policy.
RecursionFindingKind KindOfRunFindings(const recursion::RunResult& run);

// "code/model under percontext", "policies not equivalent", ...
std::string DescribeKind(const RecursionFindingKind& kind);

// Goes through the frames of `kind` and calls `end` in the innermost.
void EndInRecursionFrames(const RecursionFindingKind& kind, FindingEnd end);

}  // namespace bpfdiff::fuzz
