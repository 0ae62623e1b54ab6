#include "fuzz/findings/recursion_frames.h"

#include <fmt/format.h>

namespace bpfdiff::fuzz {
namespace {

using BreakFrame = void (*)(FindingEnd end);
using PolicyFrame = void (*)(RecursionBreak what, FindingEnd end);

// The innermost frames: what broke.
[[gnu::noinline]] void RecursionAttachedProgramsDoNotLoad(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void RecursionScheduleDoesNotRun(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void RecursionCodeDisagreesWithModel(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void RecursionPolicyInvariantBroken(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void RecursionRunDiffersFromInterpreter(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void RecursionRunCannotGoOn(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void RecursionPoliciesNotEquivalent(FindingEnd end) { NoteFindingFrame(__func__); end(); }

BreakFrame BreakFrameOf(RecursionBreak what) {
  switch (what) {
    case RecursionBreak::kAttachedProgramsDoNotLoad: return RecursionAttachedProgramsDoNotLoad;
    case RecursionBreak::kScheduleDoesNotRun: return RecursionScheduleDoesNotRun;
    case RecursionBreak::kCodeDisagreesWithModel: return RecursionCodeDisagreesWithModel;
    case RecursionBreak::kPolicyInvariantBroken: return RecursionPolicyInvariantBroken;
    case RecursionBreak::kRunDiffersFromInterpreter: return RecursionRunDiffersFromInterpreter;
    case RecursionBreak::kRunCannotGoOn: return RecursionRunCannotGoOn;
    case RecursionBreak::kPoliciesNotEquivalent: return RecursionPoliciesNotEquivalent;
  }
  return RecursionRunCannotGoOn;
}

// The middle frames: the policy whose run broke.
[[gnu::noinline]] void UnderAtomicPolicy(RecursionBreak what, FindingEnd end) {
  NoteFindingFrame(__func__);
  BreakFrameOf(what)(end);
}
[[gnu::noinline]] void UnderPerContextPolicy(RecursionBreak what, FindingEnd end) {
  NoteFindingFrame(__func__);
  BreakFrameOf(what)(end);
}
[[gnu::noinline]] void UnderLandedPolicy(RecursionBreak what, FindingEnd end) {
  NoteFindingFrame(__func__);
  BreakFrameOf(what)(end);
}

PolicyFrame PolicyFrameOf(recursion::Policy policy) {
  switch (policy) {
    case recursion::Policy::kAtomic: return UnderAtomicPolicy;
    case recursion::Policy::kPerContext: return UnderPerContextPolicy;
    case recursion::Policy::kLanded: return UnderLandedPolicy;
  }
  return UnderAtomicPolicy;
}

std::string_view BreakName(RecursionBreak what) {
  switch (what) {
    case RecursionBreak::kAttachedProgramsDoNotLoad: return "attached programs do not load";
    case RecursionBreak::kScheduleDoesNotRun: return "schedule does not run";
    case RecursionBreak::kCodeDisagreesWithModel: return "code/model";
    case RecursionBreak::kPolicyInvariantBroken: return "invariant";
    case RecursionBreak::kRunDiffersFromInterpreter: return "interpreter";
    case RecursionBreak::kRunCannotGoOn: return "run cannot go on";
    case RecursionBreak::kPoliciesNotEquivalent: return "policies not equivalent";
  }
  return "?";
}

}  // namespace

RecursionFindingKind KindOfRunFindings(const recursion::RunResult& run) {
  RecursionFindingKind kind;
  kind.policy = run.config.policy;
  if (run.findings.empty()) return kind;
  switch (run.findings.front().kind) {
    case recursion::Finding::Kind::kModel: kind.what = RecursionBreak::kCodeDisagreesWithModel; break;
    case recursion::Finding::Kind::kInvariant: kind.what = RecursionBreak::kPolicyInvariantBroken; break;
    case recursion::Finding::Kind::kInterpreter: kind.what = RecursionBreak::kRunDiffersFromInterpreter; break;
    case recursion::Finding::Kind::kHarness: kind.what = RecursionBreak::kRunCannotGoOn; break;
  }
  return kind;
}

std::string DescribeKind(const RecursionFindingKind& kind) {
  if (!kind.policy) return std::string(BreakName(kind.what));
  return fmt::format("{} under {}", BreakName(kind.what), recursion::PolicyName(*kind.policy));
}

void EndInRecursionFrames(const RecursionFindingKind& kind, FindingEnd end) {
  StartFindingFrameTrail();
  NoteFindingFrame(__func__);
  if (kind.policy) return PolicyFrameOf(*kind.policy)(kind.what, end);
  BreakFrameOf(kind.what)(end);
}

}  // namespace bpfdiff::fuzz
