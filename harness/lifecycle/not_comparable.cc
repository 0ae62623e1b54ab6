#include "harness/lifecycle/not_comparable.h"

namespace bpfdiff::lifecycle {

std::string_view NotComparableReason(const Outcome& expected, const Outcome& actual, const Verdict& verdict) {
  if (verdict.kind != Verdict::Kind::kNotComparable) return kOtherVerdict;
  // In the order Compare() checks them.
  if (expected.end == EndKind::kHarnessError) return kInterpreterError;
  if (actual.end == EndKind::kHarnessError) return kJitHarnessError;
  if (expected.end == EndKind::kBudget) return kInterpreterBudget;
  if (expected.end == EndKind::kFault && expected.fault && expected.fault->partial &&
      expected.fault->kind == AccessKind::kWrite) {
    return kPartialStoreFault;
  }
  return kOtherVerdict;
}

}  // namespace bpfdiff::lifecycle
