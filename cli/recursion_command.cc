// bpfdiff recursion: the trampoline's recursion check under simulated
// interrupts and task switches.
//
//   bpfdiff recursion --policy atomic|percontext|landed [--schedule FILE] [--llsc]
//       runs a schedule (docs/recursion.md; a built-in one without FILE) on
//       the emitted trampolines, with the model checking every step, and
//       prints the event timeline.
//   bpfdiff recursion --policy P [--llsc] --listing
//       the emitted trampoline, disassembled, with the label of every
//       instruction boundary.
//   bpfdiff recursion --compare [--schedules N] [--seed S]
//       the equivalence report: the three policies over many schedules,
//       minimal schedules for each difference, the preemption race, and the
//       atomic instructions per trigger.
//
// BPFDIFF_PLANTED_BUG=<recursion bug> plants a bug in the emitted trampoline
// (a negative control; a banner says so).
#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/recursion/compare_report.h"
#include "harness/recursion/percpu_layout.h"
#include "harness/recursion/runner.h"
#include "harness/recursion/timeline.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

using namespace bpfdiff::recursion;

// Shown when no --schedule is given: a hardirq and an NMI fire programs
// while a task runs one, and a program triggers another in its own context.
constexpr std::string_view kDemoSchedule = R"(# bpfdiff recursion demo
cpus 1
program 0 loop 6
program 1 loop 3 trigger 0 at 1
task 0 A fire 0
until 0 program+8
hardirq 0 fire 0 1
until 0 trigger
nmi 0 fire 0
)";

struct RecursionArgs {
  std::string policy = "landed";
  std::string schedule;
  bool llsc = false;
  bool compare = false;
  bool listing = false;
  size_t schedules = 1000;
  uint64_t seed = 1;
};

int RunOne(const RecursionArgs& args, const jit::TrampolineBugs& bugs, UnicornFault unicorn_fault) {
  const auto policy = ParsePolicy(args.policy);
  if (!policy) {
    fmt::print(stderr, "bpfdiff recursion: --policy must be atomic, percontext or landed\n");
    return kExitBadInput;
  }
  std::string text(kDemoSchedule);
  if (!args.schedule.empty()) {
    auto file = ReadTextFile(args.schedule);
    if (!file) {
      fmt::print(stderr, "bpfdiff recursion: {}\n", file.message());
      return kExitBadInput;
    }
    text = std::move(file).value();
  }
  auto schedule = ParseSchedule(text);
  if (!schedule) {
    fmt::print(stderr, "bpfdiff recursion: {}: {}\n", args.schedule.empty() ? "demo" : args.schedule,
               schedule.message());
    return kExitBadInput;
  }
  auto sandbox = Sandbox::Create({.cpus = schedule->cpus, .fast_machine = false, .unicorn_fault = unicorn_fault});
  if (!sandbox) {
    fmt::print(stderr, "bpfdiff recursion: {}\n", sandbox.message());
    return kExitBadInput;
  }
  RunConfig config;
  config.policy = *policy;
  config.lowering = args.llsc ? jit::AtomicLowering::kLlSc : jit::AtomicLowering::kLse;
  config.bugs = bugs;
  config.count_atomics = true;
  auto result = RunSchedule(**sandbox, *schedule, config);
  // A machine that failed ran nothing of the schedule: no timeline.
  if (auto failure = (*sandbox)->UnicornFailure()) {
    fmt::print(stderr, "bpfdiff recursion: could not run: {}\n", *failure);
    return kExitBadInput;
  }
  if (!result) {
    fmt::print(stderr, "bpfdiff recursion: {}\n", result.message());
    return kExitFailed;
  }
  fmt::print("schedule ({}):\n{}\n", args.schedule.empty() ? "built-in demo" : args.schedule,
             FormatSchedule(*schedule));
  fmt::print("{}\n", FormatTimeline(*result));
  fmt::print("{}", FormatSummary(*result));
  return result->ok() ? kExitOk : kExitFailed;
}

// The trampoline of attached program 0 as emitted, each word with the label
// of the boundary before it.
int Listing(const RecursionArgs& args, Policy policy, const jit::TrampolineBugs& bugs) {
  auto disassembler = A64Disassembler::Create();
  if (!disassembler) {
    fmt::print(stderr, "bpfdiff recursion: {}\n", disassembler.message());
    return kExitFailed;
  }
  jit::TrampolineSpec spec;
  spec.policy = policy;
  spec.atomics = args.llsc ? jit::AtomicLowering::kLlSc : jit::AtomicLowering::kLse;
  spec.program_entry = guest::kPackBase + 0x1000;  // where a program might be
  spec.preempt_count_offset = static_cast<uint32_t>(guest::kPreemptCountOffset);
  spec.state_offset = static_cast<uint32_t>(StateOffset(0));
  spec.bugs = bugs;
  auto code = jit::EmitTrampoline(spec);
  if (!code) {
    fmt::print(stderr, "bpfdiff recursion: {}\n", code.message());
    return kExitFailed;
  }
  fmt::print("{} trampoline ({}), {} words; per-CPU state of program 0 at TPIDR_EL1 + 0x{:x}\n",
             PolicyName(policy), args.llsc ? "LL/SC" : "LSE", code->words.size(), StateOffset(0));
  fmt::print("       word      instruction                        boundary before it\n");
  for (size_t i = 0; i < code->words.size(); ++i) {
    const auto& label = code->labels[i];
    std::string where(PointName(label.mark));
    if (label.status_reg >= 0) {
      where = fmt::format("{} if w{} == 0, else {}", where, label.status_reg,
                          PointName(label.mark_if_failed));
    }
    switch (label.anchor) {
      case jit::TrampolineAnchor::kEnterWindow: where += "  <- enter window (until loaded)"; break;
      case jit::TrampolineAnchor::kExitWindow: where += "  <- exit window (until exit-loaded)"; break;
      case jit::TrampolineAnchor::kExitStart: where += "  <- exit path (until exit)"; break;
      case jit::TrampolineAnchor::kNone: break;
    }
    const auto text = disassembler->Disassemble(code->words[i], 4 * i);
    fmt::print("{:4}:  {:08x}  {:<34} {}{}\n", 4 * i, code->words[i], text.value_or("?"), where,
               i == code->call_word ? "  (calls the program)" : "");
  }
  return kExitOk;
}

int Run(const RecursionArgs& args, const jit::TrampolineBugs& bugs, UnicornFault unicorn_fault) {
  if (args.listing) {
    const auto policy = ParsePolicy(args.policy);
    if (!policy) {
      fmt::print(stderr, "bpfdiff recursion: --policy must be atomic, percontext or landed\n");
      return kExitBadInput;
    }
    return Listing(args, *policy, bugs);
  }
  if (!args.compare) return RunOne(args, bugs, unicorn_fault);
  CompareOptions options;
  options.schedules = args.schedules;
  options.seed = args.seed;
  options.bugs = bugs;
  auto comparison = ComparePolicies(options);
  if (!comparison) {
    fmt::print(stderr, "bpfdiff recursion: {}\n", comparison.message());
    return kExitFailed;
  }
  fmt::print("{}", FormatPolicyComparison(*comparison));
  return comparison->ok() ? kExitOk : kExitFailed;
}

}  // namespace

void AddRecursionCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto args = std::make_shared<RecursionArgs>();
  CLI::App* cmd = app.add_subcommand(
      "recursion", "Run the trampoline's recursion check under simulated interrupts and preemption");
  cmd->add_option("--policy", args->policy, "atomic, percontext or landed")->capture_default_str();
  cmd->add_option("--schedule", args->schedule, "A schedule file (docs/recursion.md); a built-in demo without it");
  cmd->add_flag("--llsc", args->llsc, "LL/SC instead of LSE atomics in the trampoline");
  cmd->add_flag("--compare", args->compare, "Print the equivalence report of the three policies");
  cmd->add_flag("--listing", args->listing, "Print the emitted trampoline of --policy, with its boundary labels");
  cmd->add_option("--schedules", args->schedules, "Random schedules for --compare")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the random schedules for --compare")->capture_default_str();
  cmd->callback([args, &settings, &exit_code] { exit_code = Run(*args, settings.bugs.trampoline, settings.unicorn_fault); });
}

}  // namespace bpfdiff::cli
