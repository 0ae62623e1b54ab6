#include "harness/recursion/equivalence.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/recursion/schedule_builders.h"

namespace bpfdiff::recursion {

using jit::AtomicLowering;

DecisionSequence Decisions(const RunResult& run) {
  std::vector<std::tuple<uint64_t, std::string, Decision>> all;
  for (const auto& r : run.invocations) {
    const Invocation& inv = run.model->invocation(r.model);
    if (inv.decided != kNever) all.emplace_back(inv.decided, r.id, inv.decision);
  }
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return std::get<0>(x) < std::get<0>(y); });
  DecisionSequence seq;
  for (auto& [time, id, decision] : all) {
    seq.ids.push_back(id);
    seq.decisions.push_back(decision);
  }
  return seq;
}

DecisionDiff CompareDecisions(const RunResult& a, const RunResult& b) {
  const DecisionSequence x = Decisions(a);
  const DecisionSequence y = Decisions(b);
  DecisionDiff diff;
  const size_t n = std::min(x.ids.size(), y.ids.size());
  for (size_t i = 0; i < n; ++i) {
    if (x.ids[i] != y.ids[i] || x.decisions[i] != y.decisions[i]) {
      diff = {false, i, x.ids[i], y.ids[i], x.decisions[i], y.decisions[i]};
      return diff;
    }
  }
  if (x.ids.size() != y.ids.size()) {
    diff.identical = false;
    diff.index = n;
    if (n < x.ids.size()) diff.id_a = x.ids[n], diff.a = x.decisions[n];
    if (n < y.ids.size()) diff.id_b = y.ids[n], diff.b = y.decisions[n];
  }
  return diff;
}

std::string DecisionDiff::Describe(std::string_view name_a, std::string_view name_b) const {
  if (identical) return "identical";
  return fmt::format("decision #{}: {} {} {}, {} {} {}", index + 1, name_a, id_a.empty() ? "(none)" : id_a,
                     DecisionName(a), name_b, id_b.empty() ? "(none)" : id_b, DecisionName(b));
}

bool NestedInHigherContext(const RunResult& run, std::string_view id) {
  const InvocationRecord* record = run.Find(id);
  if (record == nullptr) return false;
  const auto& invs = run.model->invocations();
  const Invocation& me = invs[static_cast<size_t>(record->model)];
  const uint64_t t = me.active_from != kNever ? me.active_from : me.decided;
  bool lower = false, same = false;
  for (size_t j = 0; j < invs.size(); ++j) {
    if (static_cast<int>(j) == record->model) continue;
    const Invocation& other = invs[j];
    if (other.cpu != me.cpu || other.program != me.program) continue;
    const bool active = other.active_from < t && (other.active_to == kNever || other.active_to > t);
    if (!active) continue;
    if (other.level < me.level) lower = true;
    if (other.level == me.level) same = true;
  }
  return lower && !same;
}

std::vector<std::string> CheckEquivalence(const Schedule& schedule, const RunResult& atomic_lse,
                                          const RunResult& atomic_llsc, const RunResult& percontext,
                                          const RunResult& landed) {
  std::vector<std::string> problems;
  if (!InterruptOnly(schedule) || !PolicyIndependent(schedule)) return problems;
  if (!atomic_lse.ok() || !atomic_llsc.ok() || !percontext.ok() || !landed.ok()) return problems;
  if (auto d = CompareDecisions(atomic_lse, atomic_llsc); !d.identical) {
    problems.push_back("atomic/lse and atomic/llsc differ: " + d.Describe("lse", "llsc"));
  }
  if (auto d = CompareDecisions(atomic_lse, landed); !d.identical) {
    problems.push_back("landed differs from atomic on an interrupt-only schedule: " + d.Describe("atomic", "landed"));
  }
  const DecisionSequence seq = Decisions(atomic_lse);
  std::optional<size_t> first_nested;
  for (size_t i = 0; i < seq.ids.size() && !first_nested; ++i) {
    if (NestedInHigherContext(atomic_lse, seq.ids[i])) first_nested = i;
  }
  const DecisionDiff d = CompareDecisions(atomic_lse, percontext);
  if (d.identical) {
    if (first_nested) {
      problems.push_back(fmt::format("{} entered while its program was active in a lower context, "
                                     "yet percontext decided as atomic",
                                     seq.ids[*first_nested]));
    }
  } else if (d.id_a != d.id_b || d.a != Decision::kMiss || d.b != Decision::kRun) {
    problems.push_back("percontext differs from atomic other than by running a nested invocation: " +
                       d.Describe("atomic", "percontext"));
  } else if (!first_nested || *first_nested != d.index) {
    problems.push_back(fmt::format("percontext's first difference ({}) is not the first invocation nested in a "
                                   "higher context ({})",
                                   d.id_a, first_nested ? seq.ids[*first_nested] : "none"));
  }
  return problems;
}

Result<std::vector<AtomicsRow>> CountAtomicsPerTrigger(const jit::TrampolineBugs& bugs) {
  // A.1 runs its program, which triggers itself: A.1/t1 misses.
  Schedule s;
  s.cpus = 1;
  s.programs = {ProgramSpec{1, {{0, 0}}}};
  s.events = {Task("A")};
  s.events[0].cpu = 0;
  auto sandbox = Sandbox::Create({.cpus = 1, .fast_machine = false});
  if (!sandbox) return sandbox.error();
  auto attachment = Attachment::Create(**sandbox, s.programs);
  if (!attachment) return attachment.error();
  std::vector<AtomicsRow> rows;
  for (Policy policy : kPolicies) {
    for (AtomicLowering lowering : {AtomicLowering::kLse, AtomicLowering::kLlSc}) {
      RunConfig config = Config(policy, lowering, bugs);
      config.count_atomics = true;
      auto run = RunSchedule(**sandbox, **attachment, s, config);
      if (!run) return run.error();
      const InvocationRecord* ran = run->Find("A.1");
      const InvocationRecord* missed = run->Find("A.1/t1");
      if (!run->ok() || ran == nullptr || missed == nullptr || !ran->ran || missed->ran) {
        return Fail("{}: the atomics schedule did not run as expected", ConfigName(config));
      }
      rows.push_back({policy, lowering, ran->atomics, missed->atomics});
    }
  }
  return rows;
}

std::string FormatAtomicsTable(const std::vector<AtomicsRow>& rows) {
  std::string out = fmt::format("    {:<11} {:<9} {:>9} {:>10}\n", "policy", "lowering", "run path", "miss path");
  for (const auto& row : rows) {
    out += fmt::format("    {:<11} {:<9} {:>9} {:>10}\n", PolicyName(row.policy),
                       row.lowering == AtomicLowering::kLse ? "LSE" : "LL/SC", row.run_path, row.miss_path);
  }
  return out;
}

}  // namespace bpfdiff::recursion
