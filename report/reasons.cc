#include "report/reasons.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace bpfdiff::report {

TopReasons MostFrequentReasons(const ReportModel& model, ReasonKind kind, size_t keep) {
  std::map<std::pair<std::string, std::string>, int64_t> counts;  // (source, reason) -> cases
  if (kind == ReasonKind::kNotComparable) {
    for (const auto& test : model.conformance.results) {
      for (const auto& engine : test.engines) {
        if (engine.status == TestStatus::kNotComparable) {
          ++counts[{fmt::format("conformance {}", engine.engine), engine.reason}];
        }
      }
    }
  }
  for (const auto& target : model.fuzz) {
    if (!target.stats) continue;
    const NamedCounts& reasons = kind == ReasonKind::kNotComparable ? target.stats->not_comparable : target.stats->rejected;
    for (const auto& [reason, count] : reasons) counts[{target.target, reason}] += count;
  }
  TopReasons result;
  for (const auto& [key, count] : counts) {
    result.top.push_back({key.first, key.second, count});
    result.total += count;
  }
  result.distinct = result.top.size();
  std::stable_sort(result.top.begin(), result.top.end(),
                   [](const ReasonCount& a, const ReasonCount& b) { return a.count > b.count; });
  if (result.top.size() > keep) result.top.resize(keep);
  return result;
}

}  // namespace bpfdiff::report
