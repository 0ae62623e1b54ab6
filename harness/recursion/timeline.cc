#include "harness/recursion/timeline.h"

#include <fmt/format.h>

namespace bpfdiff::recursion {

std::string FormatActive(Policy policy, uint32_t active) {
  if (policy == Policy::kAtomic) return fmt::format("{}", static_cast<int32_t>(active));
  return fmt::format("{:02x} {:02x} {:02x} {:02x}", active & 0xff, (active >> 8) & 0xff,
                     (active >> 16) & 0xff, active >> 24);
}

std::string FormatTimeline(const RunResult& result) {
  const Policy policy = result.config.policy;
  std::string out = fmt::format("{:>5}  {:>3}  {:<7}  {:<46}  {:<12}  {:>4}  {:<6}  {:<11}  {:>6}  {}\n",
                                "event", "cpu", "context", "what", "invocation", "prog", "result",
                                policy == Policy::kAtomic ? "active" : "active[4]", "misses", "preempt_count");
  for (const TimelineRow& row : result.timeline) {
    const InvocationRecord* inv =
        row.invocation >= 0 ? &result.invocations[static_cast<size_t>(row.invocation)] : nullptr;
    out += fmt::format("{:>5}  {:>3}  {:<7}  {:<46}  {:<12}  {:>4}  {:<6}  {:<11}  {:>6}  0x{:x}\n",
                       row.event == 0 ? std::string("end") : fmt::format("{}", row.event), row.cpu,
                       LevelName(row.level), row.what, inv ? inv->id : "", inv ? fmt::format("{}", inv->program) : "",
                       row.result, inv ? FormatActive(policy, row.active) : "",
                       inv ? fmt::format("{}", row.misses) : "", row.preempt_count);
  }
  return out;
}

std::string FormatSummary(const RunResult& result) {
  std::string out;
  size_t runs = 0, misses = 0, unfinished = 0;
  for (const auto& inv : result.invocations) (!inv.finished ? unfinished : inv.ran ? runs : misses) += 1;
  out += fmt::format("{}: {} invocations, {} ran, {} missed{}; {} arm64 instructions\n", ConfigName(result.config),
                     result.invocations.size(), runs, misses,
                     unfinished ? fmt::format(", {} unfinished", unfinished) : "", result.steps);
  for (const auto& note : result.notes) out += fmt::format("  note: {}\n", note);
  if (result.findings.empty()) {
    out += "  code and model agree on every step; every invariant holds; every run matches the interpreter\n";
  }
  for (const auto& finding : result.findings) out += fmt::format("  FINDING {}\n", finding.Describe());
  return out;
}

}  // namespace bpfdiff::recursion
