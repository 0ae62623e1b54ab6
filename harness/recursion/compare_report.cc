#include "harness/recursion/compare_report.h"

#include <chrono>
#include <functional>
#include <iterator>

#include <fmt/format.h>

#include "harness/recursion/schedule_builders.h"
#include "harness/recursion/schedule_generator.h"
#include "harness/recursion/timeline.h"

namespace bpfdiff::recursion {
namespace {

using jit::AtomicLowering;

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

// ---- the data ---------------------------------------------------------------

Result<RandomSchedules> RunRandomSchedules(Sandbox& sandbox, const CompareOptions& options) {
  RandomSchedules result;
  result.schedules = options.schedules;
  result.seed = options.seed;
  GeneratorOptions gen;
  gen.preemption = false;
  gen.raw_steps = false;
  const RunConfig configs[] = {Config(Policy::kAtomic, AtomicLowering::kLse, options.bugs),
                               Config(Policy::kAtomic, AtomicLowering::kLlSc, options.bugs),
                               Config(Policy::kPerContext, AtomicLowering::kLse, options.bugs),
                               Config(Policy::kLanded, AtomicLowering::kLse, options.bugs)};
  result.configurations = std::size(configs);
  for (size_t i = 0; i < options.schedules; ++i) {
    SeededSource source(options.seed * 1'000'003 + i);
    const Schedule s = GenerateSchedule(source, gen);
    auto attachment = Attachment::Create(sandbox, s.programs);
    if (!attachment) return Fail("schedule {}: {}", i, attachment.message());
    std::vector<RunResult> runs;
    for (const RunConfig& config : configs) {
      auto run = RunSchedule(sandbox, **attachment, s, config);
      if (!run) return Fail("schedule {}: {}", i, run.message());
      ++result.runs;
      result.invocations += run->invocations.size();
      if (!run->ok()) {
        result.findings += run->findings.size();
        if (!result.first_finding) {
          result.first_finding = fmt::format("{} on\n{}{}", ConfigName(config), Indent(FormatSchedule(s)),
                                             Indent(FormatSummary(*run)));
        }
      }
      runs.push_back(std::move(run).value());
    }
    if (!runs[0].ok() || !runs[1].ok() || !runs[2].ok() || !runs[3].ok()) continue;
    ++result.clean;
    result.llsc_same += CompareDecisions(runs[0], runs[1]).identical;
    result.landed_same += CompareDecisions(runs[0], runs[3]).identical;
    (CompareDecisions(runs[0], runs[2]).identical ? result.percontext_same : result.percontext_different) += 1;
    const auto problems = CheckEquivalence(s, runs[0], runs[1], runs[2], runs[3]);
    result.unexplained += problems.empty() ? 0 : 1;
    for (const auto& p : problems) result.problems.push_back(fmt::format("{}\n{}", p, Indent(FormatSchedule(s))));
  }
  return result;
}

Result<NestedRunExample> FindNestedRun(Sandbox& sandbox, const jit::TrampolineBugs& bugs) {
  NestedRunExample example;
  const Schedule base = BaseSchedule();
  const std::vector<Event> alphabet = {Task("A"),
                                       Until(Anchor::kLoaded),
                                       Until(Anchor::kEntered),
                                       Until(Anchor::kProgram),
                                       Until(Anchor::kExit),
                                       Irq(InterruptKind::kSoftirq),
                                       Irq(InterruptKind::kHardirq),
                                       Irq(InterruptKind::kNmi)};
  auto attachment = Attachment::Create(sandbox, base.programs);
  if (!attachment) return attachment.error();
  const auto run = [&](const Schedule& s, Policy policy) {
    return RunSchedule(sandbox, **attachment, s, Config(policy, AtomicLowering::kLse, bugs));
  };
  const SearchResult found = BreadthFirst(base, alphabet, 4, [&](const Schedule& s) {
    auto a = run(s, Policy::kAtomic);
    auto p = run(s, Policy::kPerContext);
    return a && p && a->ok() && p->ok() && !CompareDecisions(*a, *p).identical;
  });
  example.candidates = found.candidates;
  if (!found.found) return example;
  example.schedule = found.found;
  for (Policy policy : kPolicies) {
    auto result = run(*example.schedule, policy);
    if (!result) return result.error();
    ExampleRun& row = example.runs.emplace_back(ExampleRun{.policy = policy, .decisions = DecisionList(*result)});
    if (!result->ok()) row.problems.push_back(FormatSummary(*result));
    if (policy != Policy::kPerContext) continue;
    auto atomic = run(*example.schedule, Policy::kAtomic);
    for (const auto& id : Decisions(*result).ids) {
      if (atomic && NestedInHigherContext(*atomic, id)) {
        const InvocationRecord* r = result->Find(id);
        example.nested = NestedRunExample::Nested{id, r->level, r->program};
        break;
      }
    }
    row.timeline = FormatTimeline(*result);
  }
  return example;
}

// What each policy must show on the lost-update schedule, as problems.
std::vector<std::string> LostUpdateProblems(Policy policy, const RunResult& run) {
  std::vector<std::string> problems;
  for (const auto& f : run.findings) problems.push_back(f.Describe());
  const bool both = TwoRunsAtOnce(run).has_value();
  const InvocationRecord* later = run.Find("C.1");
  const bool later_missed = later != nullptr && !later->ran;
  switch (policy) {
    case Policy::kAtomic:
      if (both || later_missed) problems.push_back("atomic lost an update");
      break;
    case Policy::kPerContext:
      if (!both || later == nullptr || later->ran) problems.push_back("percontext: the expected lost update did not show");
      break;
    case Policy::kLanded:
      if (both || later_missed) problems.push_back("landed lost an update");
      break;
  }
  return problems;
}

Result<LostUpdateExample> FindLostUpdate(Sandbox& sandbox, const jit::TrampolineBugs& bugs) {
  LostUpdateExample example;
  const Schedule base = BaseSchedule();
  const std::vector<Event> alphabet = {Task("A"), Task("B"), Until(Anchor::kLoaded), Until(Anchor::kProgram),
                                       Switch("A"), Switch("B")};
  auto attachment = Attachment::Create(sandbox, base.programs);
  if (!attachment) return attachment.error();
  const auto run = [&](const Schedule& s, Policy policy) {
    return RunSchedule(sandbox, **attachment, s, Config(policy, AtomicLowering::kLse, bugs));
  };
  const SearchResult found = BreadthFirst(base, alphabet, 5, [&](const Schedule& s) {
    auto p = run(s, Policy::kPerContext);
    return p && p->ok() && p->split_by_preemption && (TwoRunsAtOnce(*p) || AnyActiveLeft(*p));
  });
  example.candidates = found.candidates;
  if (!found.found) return example;
  // One more task after the race, to show what follows.
  Schedule s = *found.found;
  Event finish;
  finish.kind = Event::Kind::kFinish;
  s.events.push_back(finish);
  s.events.push_back(Task("C"));
  example.schedule = s;
  for (Policy policy : kPolicies) {
    auto result = run(s, policy);
    if (!result) return result.error();
    ExampleRun& row = example.runs.emplace_back(ExampleRun{.policy = policy, .decisions = DecisionList(*result)});
    row.notes = result->notes;
    row.problems = LostUpdateProblems(policy, *result);
    if (policy != Policy::kPerContext) continue;
    example.percontext_both = TwoRunsAtOnce(*result);
    const InvocationRecord* later = result->Find("C.1");
    example.percontext_later_missed = later != nullptr && !later->ran;
    row.timeline = FormatTimeline(*result);
  }
  return example;
}

bool RunsOk(const std::vector<ExampleRun>& runs) {
  for (const auto& run : runs) {
    if (!run.problems.empty()) return false;
  }
  return true;
}

// ---- the formatter ----------------------------------------------------------

std::string Problem(std::string_view text) { return fmt::format("  PROBLEM: {}\n", text); }

std::string FormatHeader() {
  return "bpfdiff recursion --compare: the three recursion policies on the same schedules\n"
         "  atomic      int active; this_cpu_inc_return(active) != 1 is a miss (LSE and LL/SC)\n"
         "  percontext  u8 active[4]; ++active[rctx] != 1 is a miss (plain load/add/store)\n"
         "  landed      preempt_disable(); ++active[rctx]; miss unless u32 == 1 << (rctx * 8); preempt_enable()\n"
         "Every run executes the emitted trampolines in Unicorn; the model follows every step, and each\n"
         "program run is compared with the interpreter.\n\n";
}

std::string FormatRandom(const RandomSchedules& r) {
  std::string out = fmt::format(
      "1. {} random interrupt-only schedules (seed {}): 1-2 CPUs, 1-3 programs with same-context\n"
      "   triggers, softirq/hardirq/NMI taken at named positions (policy-independent)\n",
      r.schedules, r.seed);
  out += fmt::format("   runs: {} ({} configurations each), invocations: {}\n", r.runs, r.configurations,
                     r.invocations);
  out += fmt::format("   code vs model, invariants, interpreter: {} finding(s)\n", r.findings);
  if (r.first_finding) out += Problem("first finding: " + *r.first_finding);
  out += fmt::format("   atomic LSE vs atomic LL/SC : identical decisions in {}/{} schedules\n", r.llsc_same, r.clean);
  out += fmt::format("   landed vs atomic           : identical decisions in {}/{} schedules{}\n", r.landed_same,
                     r.clean, r.clean > 0 && r.landed_same == r.clean ? "  => landed == atomic" : "");
  if (r.clean < r.schedules) {
    out += Problem(fmt::format("{} of {} schedules had findings and were not compared", r.schedules - r.clean,
                               r.schedules));
  }
  out += fmt::format("   percontext vs atomic       : identical in {}, different in {}; each first difference is a\n"
                     "                                program fired in a higher context while active in a lower one\n"
                     "                                on the same CPU ({} checked, {} unexplained)\n",
                     r.percontext_same, r.percontext_different, r.percontext_same + r.percontext_different,
                     r.unexplained);
  for (const auto& p : r.problems) out += Problem(p);
  return out + "\n";
}

std::string FormatNested(const NestedRunExample& e) {
  std::string out = fmt::format(
      "2. Minimal schedule where percontext runs a program nested in a higher context\n"
      "   (breadth-first over {} candidate schedules of 1-4 events; the first with a difference)\n",
      e.candidates);
  if (!e.schedule) return out + Problem("no schedule of up to 4 events makes percontext differ from atomic") + "\n";
  out += Indent(FormatSchedule(*e.schedule));
  for (const auto& run : e.runs) {
    out += fmt::format("   {:<11} {}\n", PolicyName(run.policy), run.decisions);
    for (const auto& p : run.problems) out += Problem(p);
    if (run.policy != Policy::kPerContext) continue;
    if (e.nested) {
      out += fmt::format("   {} runs in {} context while an invocation of program {} holds the task-level\n"
                         "   byte: percontext checks only its own byte; atomic and landed see the whole state.\n",
                         e.nested->id, LevelName(e.nested->level), e.nested->program);
    }
    if (run.timeline) out += "   percontext timeline:\n" + Indent(*run.timeline, "     ");
  }
  return out + "\n";
}

// Why each policy does what it does on the lost-update schedule.
std::string LostUpdateExplanation(Policy policy, const LostUpdateExample& e) {
  switch (policy) {
    case Policy::kAtomic:
      return "               this_cpu_inc_return is one atomic instruction (or an LL/SC loop that retries):\n"
             "               a task switch cannot split it; the later increment sees the earlier one.\n";
    case Policy::kPerContext:
      return fmt::format(
          "               LOST UPDATE: A loaded active[task] = 0 and was preempted before its store; B\n"
          "               incremented it to 1 and ran; A then stored its stale 0 + 1 = 1 and ran as well:\n"
          "               {} ran program 0 at task level on CPU 0 at the same time. The two exits\n"
          "               then took the byte to 0 and to 0xff: every later task-level trigger on that CPU\n"
          "               computes 0xff + 1 = 0 != 1 and misses (C.1 {}), and its exit puts 0xff back,\n"
          "               so the program stays disabled at task level on that CPU for good.\n",
          e.percontext_both.value_or("?"), e.percontext_later_missed ? "missed" : "?");
    case Policy::kLanded:
      return "               The increment and the check sit inside preempt_disable(): at the load,\n"
             "               preempt_count is 1 and the scheduler cannot switch tasks, so the window does\n"
             "               not exist (the preemption is refused). Interrupts can still land there; they\n"
             "               nest and restore the byte before the store, so nothing is lost either.\n";
  }
  return "";
}

std::string FormatLostUpdate(const LostUpdateExample& e) {
  std::string out = fmt::format(
      "3. Task preemption between the load and the store of the non-atomic increment (PREEMPT_RCU:\n"
      "   the trampoline runs under rcu_read_lock + migrate_disable, so the task can be preempted)\n"
      "   minimal schedule (breadth-first over {} candidates of 1-5 events), then one more task to\n"
      "   show what follows:\n",
      e.candidates);
  if (!e.schedule) return out + Problem("no schedule of up to 5 events loses an update under percontext") + "\n";
  out += Indent(FormatSchedule(*e.schedule));
  for (const auto& run : e.runs) {
    out += fmt::format("   {:<11} {}\n", PolicyName(run.policy), run.decisions);
    for (const auto& note : run.notes) out += fmt::format("               {}\n", note);
    for (const auto& p : run.problems) out += Problem(p);
    out += LostUpdateExplanation(run.policy, e);
    if (run.timeline) out += "   percontext timeline:\n" + Indent(*run.timeline, "     ");
  }
  return out + "\n";
}

std::string FormatAtomics(const PolicyComparison& c) {
  std::string out =
      "4. Atomic instructions executed per trigger, counted in Unicorn by instruction class (LSE atomics,\n"
      "   load/store exclusive); the run path is a trigger that runs its program, the miss path one that\n"
      "   misses (the misses counter is an atomic add, as local64_inc is on arm64)\n";
  return out + (c.atomics_error ? Problem(*c.atomics_error) : FormatAtomicsTable(c.atomics));
}

}  // namespace

bool PolicyComparison::ok() const {
  return random.problems.empty() && !random.first_finding && random.clean == random.schedules &&
         nested.schedule && RunsOk(nested.runs) && lost_update.schedule && RunsOk(lost_update.runs) &&
         !atomics_error;
}

Result<PolicyComparison> ComparePolicies(const CompareOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  auto sandbox = Sandbox::Create({.cpus = 2, .fast_machine = false});
  if (!sandbox) return sandbox.error();
  PolicyComparison c;
  auto random = RunRandomSchedules(**sandbox, options);
  if (!random) return random.error();
  c.random = std::move(random).value();
  auto nested = FindNestedRun(**sandbox, options.bugs);
  if (!nested) return nested.error();
  c.nested = std::move(nested).value();
  auto lost = FindLostUpdate(**sandbox, options.bugs);
  if (!lost) return lost.error();
  c.lost_update = std::move(lost).value();
  auto rows = CountAtomicsPerTrigger(options.bugs);
  if (rows) {
    c.atomics = std::move(rows).value();
  } else {
    c.atomics_error = rows.message();
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return c;
}

std::string FormatPolicyComparison(const PolicyComparison& c) {
  return FormatHeader() + FormatRandom(c.random) + FormatNested(c.nested) + FormatLostUpdate(c.lost_update) +
         FormatAtomics(c) +
         fmt::format("\n{} ({:.1f} s)\n",
                     c.ok() ? "All claims hold." : "SOME CLAIMS DO NOT HOLD (see PROBLEM lines).", c.seconds);
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

}  // namespace bpfdiff::recursion
