#include "harness/recursion/equivalence.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include <fmt/format.h>

#include "harness/recursion/schedule_generator.h"
#include "harness/recursion/timeline.h"

namespace bpfdiff::recursion {
namespace {

using jit::AtomicLowering;

RunConfig Config(Policy policy, AtomicLowering lowering, const jit::TrampolineBugs& bugs) {
  RunConfig config;
  config.policy = policy;
  config.lowering = lowering;
  config.bugs = bugs;
  return config;
}

std::string Indent(std::string_view text, std::string_view prefix = "    ") {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string_view line = text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
    out += fmt::format("{}{}\n", prefix, line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string DecisionList(const RunResult& run) {
  const DecisionSequence seq = Decisions(run);
  std::string out;
  for (size_t i = 0; i < seq.ids.size(); ++i) {
    out += fmt::format("{}{} {}", i == 0 ? "" : ", ", seq.ids[i], DecisionName(seq.decisions[i]));
  }
  return out.empty() ? "(no invocation)" : out;
}

// Two invocations of one program running at once at the same level on one
// CPU (the percontext race), as "X and Y".
std::optional<std::string> TwoRunsAtOnce(const RunResult& run) {
  const auto& invs = run.model->invocations();
  for (size_t i = 0; i < invs.size(); ++i) {
    for (size_t j = i + 1; j < invs.size(); ++j) {
      const Invocation& a = invs[i];
      const Invocation& b = invs[j];
      if (a.cpu != b.cpu || a.program != b.program || a.level != b.level) continue;
      if (ProgramsOverlap(a, b)) {
        std::string x, y;
        for (const auto& r : run.invocations) {
          if (r.model == static_cast<int>(i)) x = r.id;
          if (r.model == static_cast<int>(j)) y = r.id;
        }
        return fmt::format("{} and {}", x, y);
      }
    }
  }
  return std::nullopt;
}

bool AnyActiveLeft(const RunResult& run) {
  for (int cpu = 0; cpu < run.model->cpus(); ++cpu) {
    for (uint32_t active : run.model->cpu(cpu).active) {
      if (active != 0) return true;
    }
  }
  return false;
}

// Every schedule over `alphabet` of 1..max_len events, shortest first, in
// alphabet order; the first that `accept` takes.
struct SearchResult {
  std::optional<Schedule> found;
  size_t candidates = 0;
};
SearchResult BreadthFirst(const Schedule& base, const std::vector<Event>& alphabet, size_t max_len,
                          const std::function<bool(const Schedule&)>& accept) {
  SearchResult result;
  for (size_t len = 1; len <= max_len; ++len) {
    std::vector<size_t> digits(len, 0);
    for (;;) {
      Schedule s = base;
      for (size_t d : digits) s.events.push_back(alphabet[d]);
      if (ValidateSchedule(s)) {
        ++result.candidates;
        if (accept(s)) {
          result.found = std::move(s);
          return result;
        }
      }
      size_t i = len;
      while (i > 0 && ++digits[i - 1] == alphabet.size()) digits[--i] = 0;
      if (i == 0) break;
    }
  }
  return result;
}

Event Task(std::string name) {
  Event e;
  e.kind = Event::Kind::kTask;
  e.task = std::move(name);
  e.programs = {0};
  return e;
}
Event Until(Anchor anchor) {
  Event e;
  e.kind = Event::Kind::kUntil;
  e.anchor = anchor;
  return e;
}
Event Irq(InterruptKind kind) {
  Event e;
  e.kind = Event::Kind::kInterrupt;
  e.interrupt = kind;
  e.programs = {0};
  return e;
}
Event Switch(std::string name) {
  Event e;
  e.kind = Event::Kind::kSwitch;
  e.task = std::move(name);
  return e;
}

Schedule BaseSchedule() {
  Schedule s;
  s.cpus = 1;
  s.programs = {ProgramSpec{2, {}}};
  return s;
}

}  // namespace

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

Schedule NestedRunSchedule() {
  Schedule s = BaseSchedule();
  s.events = {Task("A"), Until(Anchor::kProgram), Irq(InterruptKind::kSoftirq)};
  return s;
}

Schedule LostUpdateSchedule() {
  Schedule s = BaseSchedule();
  s.events = {Task("A"), Until(Anchor::kLoaded), Task("B"), Until(Anchor::kProgram), Switch("A")};
  return s;
}

Result<CompareReportResult> CompareReport(const CompareOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  CompareReportResult report;
  std::string& out = report.text;
  auto problem = [&](std::string text) {
    report.ok = false;
    out += fmt::format("  PROBLEM: {}\n", text);
  };
  auto sandbox = Sandbox::Create({.cpus = 2, .fast_machine = false});
  if (!sandbox) return sandbox.error();
  Sandbox& sb = **sandbox;
  const jit::TrampolineBugs& bugs = options.bugs;

  out += "bpfdiff recursion --compare: the three recursion policies on the same schedules\n";
  out += "  atomic      int active; this_cpu_inc_return(active) != 1 is a miss (LSE and LL/SC)\n";
  out += "  percontext  u8 active[4]; ++active[rctx] != 1 is a miss (plain load/add/store)\n";
  out += "  landed      preempt_disable(); ++active[rctx]; miss unless u32 == 1 << (rctx * 8); preempt_enable()\n";
  out += "Every run executes the emitted trampolines in Unicorn; the model follows every step, and each\n"
         "program run is compared with the interpreter.\n\n";

  // 1. Random interrupt-only schedules.
  GeneratorOptions gen;
  gen.preemption = false;
  gen.raw_steps = false;
  size_t invocations = 0, llsc_same = 0, landed_same = 0, per_same = 0, per_diff = 0, checked_runs = 0;
  size_t findings = 0, clean = 0, unexplained = 0;
  const RunConfig configs[] = {Config(Policy::kAtomic, AtomicLowering::kLse, bugs),
                               Config(Policy::kAtomic, AtomicLowering::kLlSc, bugs),
                               Config(Policy::kPerContext, AtomicLowering::kLse, bugs),
                               Config(Policy::kLanded, AtomicLowering::kLse, bugs)};
  std::optional<std::string> first_finding;
  for (size_t i = 0; i < options.schedules; ++i) {
    SeededSource source(options.seed * 1'000'003 + i);
    const Schedule s = GenerateSchedule(source, gen);
    auto attachment = Attachment::Create(sb, s.programs);
    if (!attachment) return Fail("schedule {}: {}", i, attachment.message());
    std::vector<RunResult> runs;
    for (const RunConfig& config : configs) {
      auto run = RunSchedule(sb, **attachment, s, config);
      if (!run) return Fail("schedule {}: {}", i, run.message());
      ++checked_runs;
      invocations += run->invocations.size();
      if (!run->ok()) {
        findings += run->findings.size();
        if (!first_finding) {
          first_finding = fmt::format("{} on\n{}{}", ConfigName(config), Indent(FormatSchedule(s)),
                                      Indent(FormatSummary(*run)));
        }
      }
      runs.push_back(std::move(run).value());
    }
    if (!runs[0].ok() || !runs[1].ok() || !runs[2].ok() || !runs[3].ok()) continue;
    ++clean;
    llsc_same += CompareDecisions(runs[0], runs[1]).identical;
    landed_same += CompareDecisions(runs[0], runs[3]).identical;
    (CompareDecisions(runs[0], runs[2]).identical ? per_same : per_diff) += 1;
    const auto problems = CheckEquivalence(s, runs[0], runs[1], runs[2], runs[3]);
    unexplained += problems.empty() ? 0 : 1;
    for (const auto& p : problems) problem(fmt::format("{}\n{}", p, Indent(FormatSchedule(s))));
  }
  out += fmt::format("1. {} random interrupt-only schedules (seed {}): 1-2 CPUs, 1-3 programs with same-context\n"
                     "   triggers, softirq/hardirq/NMI taken at named positions (policy-independent)\n",
                     options.schedules, options.seed);
  out += fmt::format("   runs: {} ({} configurations each), invocations: {}\n", checked_runs, std::size(configs),
                     invocations);
  out += fmt::format("   code vs model, invariants, interpreter: {} finding(s)\n", findings);
  if (first_finding) problem("first finding: " + *first_finding);
  out += fmt::format("   atomic LSE vs atomic LL/SC : identical decisions in {}/{} schedules\n", llsc_same, clean);
  out += fmt::format("   landed vs atomic           : identical decisions in {}/{} schedules{}\n", landed_same, clean,
                     clean > 0 && landed_same == clean ? "  => landed == atomic" : "");
  if (clean < options.schedules) {
    problem(fmt::format("{} of {} schedules had findings and were not compared", options.schedules - clean,
                        options.schedules));
  }
  out += fmt::format("   percontext vs atomic       : identical in {}, different in {}; each first difference is a\n"
                     "                                program fired in a higher context while active in a lower one\n"
                     "                                on the same CPU ({} checked, {} unexplained)\n\n",
                     per_same, per_diff, per_same + per_diff, unexplained);

  // 2. The minimal schedule where percontext runs a nested invocation.
  {
    Schedule base = BaseSchedule();
    const std::vector<Event> alphabet = {Task("A"),
                                         Until(Anchor::kLoaded),
                                         Until(Anchor::kEntered),
                                         Until(Anchor::kProgram),
                                         Until(Anchor::kExit),
                                         Irq(InterruptKind::kSoftirq),
                                         Irq(InterruptKind::kHardirq),
                                         Irq(InterruptKind::kNmi)};
    auto attachment = Attachment::Create(sb, base.programs);
    if (!attachment) return attachment.error();
    const SearchResult found = BreadthFirst(base, alphabet, 4, [&](const Schedule& s) {
      auto a = RunSchedule(sb, **attachment, s, Config(Policy::kAtomic, AtomicLowering::kLse, bugs));
      auto p = RunSchedule(sb, **attachment, s, Config(Policy::kPerContext, AtomicLowering::kLse, bugs));
      return a && p && a->ok() && p->ok() && !CompareDecisions(*a, *p).identical;
    });
    out += fmt::format("2. Minimal schedule where percontext runs a program nested in a higher context\n"
                       "   (breadth-first over {} candidate schedules of 1-4 events; the first with a difference)\n",
                       found.candidates);
    if (!found.found) {
      problem("no schedule of up to 4 events makes percontext differ from atomic");
    } else {
      out += Indent(FormatSchedule(*found.found));
      for (Policy policy : kPolicies) {
        auto run = RunSchedule(sb, **attachment, *found.found, Config(policy, AtomicLowering::kLse, bugs));
        if (!run) return run.error();
        out += fmt::format("   {:<11} {}\n", PolicyName(policy), DecisionList(*run));
        if (!run->ok()) problem(FormatSummary(*run));
        if (policy == Policy::kPerContext) {
          const DecisionSequence seq = Decisions(*run);
          auto atomic = RunSchedule(sb, **attachment, *found.found, Config(Policy::kAtomic, AtomicLowering::kLse, bugs));
          for (const auto& id : seq.ids) {
            if (atomic && NestedInHigherContext(*atomic, id)) {
              const InvocationRecord* r = run->Find(id);
              out += fmt::format("   {} runs in {} context while an invocation of program {} holds the task-level\n"
                                 "   byte: percontext checks only its own byte; atomic and landed see the whole state.\n",
                                 id, LevelName(r->level), r->program);
              break;
            }
          }
          out += "   percontext timeline:\n" + Indent(FormatTimeline(*run), "     ");
        }
      }
    }
    out += "\n";
  }

  // 3. Task preemption inside the non-atomic increment.
  {
    Schedule base = BaseSchedule();
    const std::vector<Event> alphabet = {Task("A"), Task("B"), Until(Anchor::kLoaded), Until(Anchor::kProgram),
                                         Switch("A"), Switch("B")};
    auto attachment = Attachment::Create(sb, base.programs);
    if (!attachment) return attachment.error();
    const SearchResult found = BreadthFirst(base, alphabet, 5, [&](const Schedule& s) {
      auto p = RunSchedule(sb, **attachment, s, Config(Policy::kPerContext, AtomicLowering::kLse, bugs));
      return p && p->ok() && p->split_by_preemption && (TwoRunsAtOnce(*p) || AnyActiveLeft(*p));
    });
    out += fmt::format("3. Task preemption between the load and the store of the non-atomic increment (PREEMPT_RCU:\n"
                       "   the trampoline runs under rcu_read_lock + migrate_disable, so the task can be preempted)\n"
                       "   minimal schedule (breadth-first over {} candidates of 1-5 events), then one more task to\n"
                       "   show what follows:\n",
                       found.candidates);
    if (!found.found) {
      problem("no schedule of up to 5 events loses an update under percontext");
    } else {
      Schedule s = *found.found;
      Event finish;
      finish.kind = Event::Kind::kFinish;
      s.events.push_back(finish);
      s.events.push_back(Task("C"));
      out += Indent(FormatSchedule(s));
      for (Policy policy : kPolicies) {
        auto run = RunSchedule(sb, **attachment, s, Config(policy, AtomicLowering::kLse, bugs));
        if (!run) return run.error();
        out += fmt::format("   {:<11} {}\n", PolicyName(policy), DecisionList(*run));
        for (const auto& note : run->notes) out += fmt::format("               {}\n", note);
        for (const auto& f : run->findings) problem(f.Describe());
        const auto both = TwoRunsAtOnce(*run);
        const InvocationRecord* later = run->Find("C.1");
        switch (policy) {
          case Policy::kAtomic:
            if (both || (later && !later->ran)) problem("atomic lost an update");
            out += "               this_cpu_inc_return is one atomic instruction (or an LL/SC loop that retries):\n"
                   "               a task switch cannot split it; the later increment sees the earlier one.\n";
            break;
          case Policy::kPerContext:
            if (!both || !later || later->ran) problem("percontext: the expected lost update did not show");
            out += fmt::format(
                "               LOST UPDATE: A loaded active[task] = 0 and was preempted before its store; B\n"
                "               incremented it to 1 and ran; A then stored its stale 0 + 1 = 1 and ran as well:\n"
                "               {} ran program 0 at task level on CPU 0 at the same time. The two exits\n"
                "               then took the byte to 0 and to 0xff: every later task-level trigger on that CPU\n"
                "               computes 0xff + 1 = 0 != 1 and misses (C.1 {}), and its exit puts 0xff back,\n"
                "               so the program stays disabled at task level on that CPU for good.\n",
                both.value_or("?"), later && !later->ran ? "missed" : "?");
            break;
          case Policy::kLanded:
            if (both || (later && !later->ran)) problem("landed lost an update");
            out += "               The increment and the check sit inside preempt_disable(): at the load,\n"
                   "               preempt_count is 1 and the scheduler cannot switch tasks, so the window does\n"
                   "               not exist (the preemption is refused). Interrupts can still land there; they\n"
                   "               nest and restore the byte before the store, so nothing is lost either.\n";
            break;
        }
        if (policy == Policy::kPerContext) out += "   percontext timeline:\n" + Indent(FormatTimeline(*run), "     ");
      }
    }
    out += "\n";
  }

  // 4. Cost.
  auto rows = CountAtomicsPerTrigger(bugs);
  out += "4. Atomic instructions executed per trigger, counted in Unicorn by instruction class (LSE atomics,\n"
         "   load/store exclusive); the run path is a trigger that runs its program, the miss path one that\n"
         "   misses (the misses counter is an atomic add, as local64_inc is on arm64)\n";
  if (rows) {
    out += FormatAtomicsTable(*rows);
  } else {
    problem(rows.message());
  }
  const auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out += fmt::format("\n{} ({:.1f} s)\n", report.ok ? "All claims hold." : "SOME CLAIMS DO NOT HOLD (see PROBLEM lines).",
                     elapsed);
  return report;
}

}  // namespace bpfdiff::recursion
