#include "harness/test_bpf/results.h"

#include <algorithm>

namespace bpfdiff {

bool TestBpfSummary::AllPassed() const {
  auto clean = [](const std::vector<TestBpfTally>& tallies) {
    return std::all_of(tallies.begin(), tallies.end(),
                       [](const TestBpfTally& t) { return t.failed == 0 && t.diverged == 0; });
  };
  return clean(cases) && clean(tail_calls);
}

}  // namespace bpfdiff
