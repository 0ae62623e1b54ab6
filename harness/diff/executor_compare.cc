#include "harness/diff/executor_compare.h"

#include <fmt/format.h>

#include "harness/diff/compare.h"

namespace bpfdiff {
namespace {

// Whether the reference (the interpreter, runs[0]) read bytes the engines
// hold differently by design (JIT code, program objects, the stack outside
// the BPF frames): what it read there, and all that follows from it,
// depends on the sandbox's history (where earlier cases put their code),
// which the two executors' sandboxes do not share.
bool ReadEnginePrivate(const std::vector<EngineRun>& runs) {
  return !runs.empty() && runs.front().outcome && runs.front().outcome->read_engine_private;
}

void CompareLists(const std::vector<EngineRun>& a, const std::vector<EngineRun>& b, size_t memory,
                  std::string_view a_name, std::string_view b_name, std::vector<EmulatorDisagreement>& out) {
  if (a.size() != b.size()) {
    out.push_back({"", memory, fmt::format("{} engines ran on {}, {} on {}", a.size(), a_name, b.size(), b_name)});
    return;
  }
  const bool comparable = !ReadEnginePrivate(a) && !ReadEnginePrivate(b);
  for (size_t i = 0; i < a.size(); ++i) {
    const EngineRun& x = a[i];
    const EngineRun& y = b[i];
    if (!x.outcome || !y.outcome) {
      if (x.outcome.has_value() != y.outcome.has_value() || x.WhyNotRun() != y.WhyNotRun()) {
        out.push_back({x.engine, memory,
                       fmt::format("{}: {}; {}: {}", a_name, x.outcome ? x.outcome->Summary() : x.WhyNotRun(),
                                   b_name, y.outcome ? y.outcome->Summary() : y.WhyNotRun()),
                       &x, &y});
      }
      continue;
    }
    if (!comparable) continue;  // as the differential runner takes it: not comparable
    const Verdict verdict = Compare(*x.outcome, *y.outcome, a_name, b_name);
    if (verdict.kind == Verdict::Kind::kDivergence) out.push_back({x.engine, memory, verdict.Describe(), &x, &y});
  }
}

}  // namespace

std::vector<EmulatorDisagreement> CompareExecutors(const CaseRun& a, const CaseRun& b, std::string_view a_name,
                                                   std::string_view b_name) {
  std::vector<EmulatorDisagreement> out;
  if (a.load_error.has_value() != b.load_error.has_value()) {
    out.push_back({"", 0, fmt::format("{}: {}; {}: {}", a_name, a.load_error.value_or("loaded"), b_name,
                                      b.load_error.value_or("loaded"))});
    return out;
  }
  CompareLists(a.runs, b.runs, 0, a_name, b_name, out);
  if (a.variants.size() != b.variants.size()) {
    out.push_back({"", 0, fmt::format("{} input variants on {}, {} on {}", a.variants.size(), a_name,
                                      b.variants.size(), b_name)});
    return out;
  }
  for (size_t v = 0; v < a.variants.size(); ++v) CompareLists(a.variants[v], b.variants[v], v + 1, a_name, b_name, out);
  return out;
}

}  // namespace bpfdiff
