// Comparing the policies on the same schedules: the claims, checked per
// schedule (the report of `bpfdiff recursion --compare` is compare_report.h).
//
// Claims checked (docs/recursion.md says why each should hold):
//  - On interrupt-only, policy-independent schedules, landed and atomic make
//    the same decision for every invocation, in the same order.
//  - On those schedules percontext differs from atomic exactly when a program
//    is fired in a higher context while an invocation of it is active (entered,
//    not yet exited) in a lower context on the same CPU and none is active in
//    its own context: the first difference is such an invocation, and when
//    there is no difference no invocation was in that situation.
//  - The atomic LSE and LL/SC lowerings decide alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/recursion/runner.h"

namespace bpfdiff::recursion {

// Invocation ids and decisions in the order the model decided them.
struct DecisionSequence {
  std::vector<std::string> ids;
  std::vector<Decision> decisions;
};
DecisionSequence Decisions(const RunResult& run);

struct DecisionDiff {
  bool identical = true;
  size_t index = 0;  // of the first difference
  std::string id_a, id_b;
  Decision a = Decision::kUndecided, b = Decision::kUndecided;
  std::string Describe(std::string_view name_a, std::string_view name_b) const;
};
DecisionDiff CompareDecisions(const RunResult& a, const RunResult& b);

// In `run`, when invocation `id` entered: was its program active on its CPU
// in a lower context, and not in its own?
bool NestedInHigherContext(const RunResult& run, std::string_view id);

// The claims above for one schedule, from its runs under the three policies
// (atomic in both lowerings). Empty when they hold or do not apply (the
// schedule preempts tasks, counts instructions, or a run has findings).
std::vector<std::string> CheckEquivalence(const Schedule& schedule, const RunResult& atomic_lse,
                                          const RunResult& atomic_llsc, const RunResult& percontext,
                                          const RunResult& landed);

// Atomic instructions per trigger, counted in Unicorn.
struct AtomicsRow {
  Policy policy;
  jit::AtomicLowering lowering;
  uint64_t run_path = 0;
  uint64_t miss_path = 0;
};
Result<std::vector<AtomicsRow>> CountAtomicsPerTrigger(const jit::TrampolineBugs& bugs = {});
std::string FormatAtomicsTable(const std::vector<AtomicsRow>& rows);

}  // namespace bpfdiff::recursion
