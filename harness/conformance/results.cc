#include "harness/conformance/results.h"

#include <algorithm>
#include <iterator>

namespace bpfdiff {
namespace {

constexpr std::string_view kStatusNames[] = {"pass", "fail", "skip", "not_comparable"};

}  // namespace

std::string_view TestStatusName(TestStatus status) { return kStatusNames[static_cast<size_t>(status)]; }

std::optional<TestStatus> ParseTestStatus(std::string_view name) {
  for (size_t i = 0; i < std::size(kStatusNames); ++i) {
    if (kStatusNames[i] == name) return static_cast<TestStatus>(i);
  }
  if (name == "poisoned") return TestStatus::kNotComparable;
  return std::nullopt;
}

std::vector<EngineCounts> ConformanceSummary::PerEngine() const {
  std::vector<EngineCounts> counts;
  for (const auto& engine : engines) counts.push_back(EngineCounts{.engine = engine});
  for (const auto& result : results) {
    for (const auto& engine_result : result.engines) {
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const EngineCounts& c) { return c.engine == engine_result.engine; });
      if (it == counts.end()) it = counts.insert(counts.end(), EngineCounts{.engine = engine_result.engine});
      switch (engine_result.status) {
        case TestStatus::kPass: ++it->passed; break;
        case TestStatus::kFail: ++it->failed; break;
        case TestStatus::kSkip: ++it->skipped; break;
        case TestStatus::kNotComparable: ++it->not_comparable; break;
      }
    }
  }
  return counts;
}

}  // namespace bpfdiff
