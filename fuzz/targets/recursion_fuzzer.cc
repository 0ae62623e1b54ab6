// recursion_fuzzer: fuzz bytes become a recursion schedule (CPUs, attached
// programs with same-context triggers, interrupts and task switches at named
// positions or after counted instructions), which runs under every policy:
// atomic (LSE and LL/SC), percontext and landed (with the lowering the input
// picks). Every run checks code against model on every step, the policy's
// invariants and every program run against the interpreter; schedules without
// task preemption also check the equivalence claims. Any finding prints the
// schedule in the text format (`bpfdiff recursion --schedule FILE` replays
// it) and aborts, from the stack frames of what broke and under which
// policy (fuzz/findings/recursion_frames.h), so that ClusterFuzz files one
// bug per kind. When Unicorn fails, the target says so once and exits with
// status 2 (fuzz/targets/target_settings.h).
//
// An input that parses as a schedule text (docs/recursion.md) is run as
// written; the seed corpus holds a few such files.
//
// BPFDIFF_PLANTED_BUG=<recursion bug> plants a bug in the trampoline: a
// negative control, which this target must catch.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <cstdint>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "fuzz/findings/recursion_frames.h"
#include "fuzz/targets/target_settings.h"
#include "harness/recursion/equivalence.h"
#include "harness/recursion/runner.h"
#include "harness/recursion/schedule_generator.h"
#include "harness/recursion/timeline.h"

namespace {

using namespace bpfdiff;
using namespace bpfdiff::recursion;

constexpr int kCpus = 2;

// Compiled programs and trampolines are kept across inputs (ProgramCache):
// fresh code costs Unicorn a translation per block, which would otherwise
// dominate the run time.
constexpr size_t kCachedPrograms = 512;

// Fresh Unicorn engines every so many inputs. Unicorn 2.0.1 crashed once in
// ~55k inputs inside its block chaining (a SEGV in tb_set_jmp_target on a
// block without host code, like upstream #1923 / #2048, fixed after 2.0.1),
// which no replay reproduced: it depends on the engine's translation
// history. Machine::set_recycle_after now reopens engines long before
// their translation buffer fills, which covers that crash; the fresh
// sandbox is kept because it also bounds the RSS of the runner's state.
constexpr uint64_t kInputsPerSandbox = 5000;

struct Target {
  std::unique_ptr<Sandbox> sandbox;
  // The recursion checks plant the trampoline's part of a planted bug; the
  // attached programs are compiled as they are (diff_fuzzer checks those).
  fuzz::TargetSettings settings;
  std::unique_ptr<ProgramCache> cache;
  uint64_t inputs = 0;
  // For the stats file: schedules by how they came (text or generated
  // from bytes), their events, and the runs of all four configurations.
  uint64_t text_schedules = 0, generated_schedules = 0, events = 0, runs = 0, sandboxes = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};
Target* target = nullptr;

// To BPFDIFF_FUZZ_STATS_JSON for the nightly report: at exit and before the
// abort of a finding.
void ReportStats() {
  if (target == nullptr) return;
  fuzz::FuzzStatsFile file;
  file.target = "recursion_fuzzer";
  file.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - target->start).count();
  file.inputs = target->inputs;
  file.counters = {{"text_schedules", target->text_schedules},
                   {"generated_schedules", target->generated_schedules},
                   {"events", target->events},
                   {"runs", target->runs},
                   {"sandboxes", target->sandboxes}};
  fuzz::WriteStats(target->settings, file);
}

// Never inlined: it is a frame of the crash state, whatever the optimiser
// does.
[[noreturn, gnu::noinline]] void Found(const Schedule& schedule, const fuzz::RecursionFindingKind& kind,
                                       const std::string& what) {
  fmt::print(stderr, "\n==== recursion_fuzzer finding ====\n{}\n---- schedule (save as a file; "
                     "`bpfdiff recursion --policy P --schedule FILE` replays it) ----\n{}----\n"
                     "finding kind: {}\n",
             what, FormatSchedule(schedule), fuzz::DescribeKind(kind));
  std::fflush(stderr);
  ReportStats();
  fuzz::EndInRecursionFrames(kind, std::abort);
  std::abort();  // not reached: the frames end in std::abort
}

// What failed was Unicorn, not the schedule: not a finding.
void ExitIfUnicornFailed() {
  if (auto failure = target->sandbox->UnicornFailure()) {
    ReportStats();
    fuzz::ExitOnHarnessFailure("recursion_fuzzer", *failure);
  }
}

Schedule Decode(const uint8_t* data, size_t size, jit::AtomicLowering& lowering) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (size > 0 && (data[0] == '#' || data[0] == 'c' || data[0] == 'p')) {
    if (auto parsed = ParseSchedule(text); parsed && parsed->cpus <= kCpus) {
      lowering = jit::AtomicLowering::kLse;
      ++target->text_schedules;
      return std::move(parsed).value();
    }
  }
  ++target->generated_schedules;
  BytesSource source({data, size});
  lowering = (source.Byte() & 1) ? jit::AtomicLowering::kLlSc : jit::AtomicLowering::kLse;
  GeneratorOptions options;
  options.max_cpus = kCpus;
  options.max_events = 16;
  return GenerateSchedule(source, options);
}

void NewSandbox() {
  target->cache.reset();  // frees its code in the old sandbox's pack
  target->sandbox.reset();
  auto sandbox =
      Sandbox::Create({.cpus = kCpus, .fast_machine = false, .unicorn_fault = target->settings.unicorn_fault});
  if (!sandbox) {
    ReportStats();
    fuzz::ExitOnHarnessFailure("recursion_fuzzer", sandbox.message());
  }
  target->sandbox = std::move(sandbox).value();
  target->cache = std::make_unique<ProgramCache>(*target->sandbox, kCachedPrograms);
  ++target->sandboxes;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  target = new Target;
  target->settings = fuzz::ReadTargetSettings("recursion_fuzzer");
  NewSandbox();
  std::atexit(ReportStats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (++target->inputs % kInputsPerSandbox == 0) NewSandbox();
  jit::AtomicLowering lowering = jit::AtomicLowering::kLse;
  const Schedule schedule = Decode(data, size, lowering);
  target->events += schedule.events.size();
  Sandbox& sandbox = *target->sandbox;
  auto attachment = Attachment::Create(sandbox, schedule.programs, target->cache.get());
  if (!attachment) {
    ExitIfUnicornFailed();
    Found(schedule, {fuzz::RecursionBreak::kAttachedProgramsDoNotLoad, std::nullopt},
          "the attached programs do not load: " + attachment.message());
  }

  RunConfig configs[4];
  const Policy policies[4] = {Policy::kAtomic, Policy::kAtomic, Policy::kPerContext, Policy::kLanded};
  const jit::AtomicLowering lowerings[4] = {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc, lowering,
                                            lowering};
  std::vector<RunResult> runs;
  for (int i = 0; i < 4; ++i) {
    configs[i].policy = policies[i];
    configs[i].lowering = lowerings[i];
    configs[i].bugs = target->settings.bugs.trampoline;
    auto run = RunSchedule(sandbox, **attachment, schedule, configs[i]);
    ExitIfUnicornFailed();
    if (!run) {
      Found(schedule, {fuzz::RecursionBreak::kScheduleDoesNotRun, configs[i].policy},
            fmt::format("{}: {}", ConfigName(configs[i]), run.message()));
    }
    if (!run->ok()) {
      Found(schedule, fuzz::KindOfRunFindings(*run),
            fmt::format("{}\n{}", FormatSummary(*run), FormatTimeline(*run)));
    }
    runs.push_back(std::move(run).value());
    ++target->runs;
  }
  const auto problems = CheckEquivalence(schedule, runs[0], runs[1], runs[2], runs[3]);
  if (!problems.empty()) {
    std::string what = "equivalence:";
    for (const auto& p : problems) what += "\n  " + p;
    Found(schedule, {fuzz::RecursionBreak::kPoliciesNotEquivalent, std::nullopt}, what);
  }
  return 0;
}
