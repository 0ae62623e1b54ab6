// diff_fuzzer: the interpreter against the JIT with LSE atomics and the JIT
// with LL/SC atomics, on generated programs. Each run starts from a fresh,
// identically initialised guest state; the whole outcome is compared. A
// divergence aborts with the first differing field and a `.data`
// reproducer, from the stack frames of its kind (the form of the culprit
// instruction, found by stepping both engines again in lockstep, and the
// lowering: fuzz/findings/divergence_frames.h),
// so that ClusterFuzz files one bug per kind; a case that cannot be
// compared is counted with its reason, and so is a divergence that is a
// known finding of the kernel's JIT (fuzz/findings/known_kernel_findings.h),
// which is said once and not reported. Where the build has VIXL, the JITs'
// code runs on VIXL's simulator and Unicorn checks it (see `checker`): an
// emulator disagreement aborts from frames of its own
// (fuzz/findings/emulator_frames.h). When Unicorn (or VIXL) fails, the
// target says so once and exits with status 2
// (fuzz/targets/target_settings.h).
//
// Thin glue: the generator, the engines and the comparison live elsewhere.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/findings/divergence_frames.h"
#include "fuzz/findings/emulator_frames.h"
#include "fuzz/findings/known_kernel_findings.h"
#include "fuzz/generator/mutator.h"
#include "fuzz/targets/target_settings.h"
#include "harness/diff/executor_compare.h"
#if BPFDIFF_WITH_VIXL
#include "harness/machine/vixl_cpu.h"
#endif

// The engines this build runs unless BPFDIFF_ENGINES names others:
// "kernel" in the build of bpfdiff_kernel_fuzz_target (cmake/fuzz_target.cmake).
#ifndef BPFDIFF_TARGET_ENGINES
#define BPFDIFF_TARGET_ENGINES "all"
#endif

namespace {

bpfdiff::fuzz::DiffHarness* harness = nullptr;
// On VIXL (BPFDIFF_EXECUTOR): the same engines on Unicorn, which runs every
// input VIXL found divergent and a sample of those it found alike again,
// and compares each engine's outcome on both. A difference is an emulator
// disagreement (its own finding, never a JIT's); a divergence that both
// show is reported from Unicorn's run. nullptr on Unicorn alone.
bpfdiff::fuzz::DiffHarness* checker = nullptr;
// One agreeing input in kCheckOneInPerJit times the JIT engines is
// checked, chosen by its bytes, so that a replay of the corpus checks the
// same ones. A check runs the case's JIT engines again on Unicorn, which
// translates each image anew, and the kernel's sample more engines a case
// (DiffHarness::OptionsFor): with the model's two engines one in 64
// inputs, with the kernel's five one in 160 (there a check took 22 ms, and
// one in 64 spent 6.7% of a campaign on them).
constexpr uint64_t kCheckOneInPerJit = 32;
uint64_t check_one_in = 2 * kCheckOneInPerJit;
bpfdiff::fuzz::FuzzStats* stats = nullptr;
bpfdiff::fuzz::TargetSettings* settings = nullptr;
// The known findings of the kernel's JIT this run has met: each is said
// once, and counted in the stats every time.
auto* known_said = new std::set<std::string, std::less<>>();

// Runs of the compiled programs on more input memories per input.
constexpr size_t kVariantsPerInput = bpfdiff::fuzz::DiffHarness::kInputVariants;

// On stderr, and to BPFDIFF_FUZZ_STATS_JSON for the nightly report: at exit
// and before the abort of a divergence.
void ReportStats() {
  if (stats == nullptr) return;
  stats->PrintFinal();
  bpfdiff::fuzz::WriteStats(*settings, stats->ToFile());
}

uint64_t Fnv1a(const uint8_t* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 0x100000001b3;
  return hash;
}

// The executor the settings name, or this build's default: VIXL where the
// build has it. Exits when the settings name one the build lacks.
bpfdiff::MachineFactory ExecutorOf(const bpfdiff::fuzz::TargetSettings& target) {
#if BPFDIFF_WITH_VIXL
  if (target.executor != "unicorn") return &bpfdiff::CreateVixlMachine;
#else
  if (target.executor == "vixl") {
    fmt::print(stderr, "diff_fuzzer: BPFDIFF_EXECUTOR=vixl, but this build has no VIXL (a static build given no VIXL source)\n");
    std::exit(2);
  }
#endif
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  settings = new bpfdiff::fuzz::TargetSettings(bpfdiff::fuzz::ReadTargetSettings("diff_fuzzer", BPFDIFF_TARGET_ENGINES));
  // Filed apart when it runs the kernel's engines, as the nightly names
  // that run (diff_fuzzer.kernel), so that the two runs' stats do not mix.
  stats = new bpfdiff::fuzz::FuzzStats(settings->engines == "all" ? "diff_fuzzer" : "diff_fuzzer." + settings->engines);
  const bpfdiff::MachineFactory executor = ExecutorOf(*settings);
  auto created =
      bpfdiff::fuzz::DiffHarness::Create(settings->bugs, settings->unicorn_fault, settings->engines, executor);
  if (!created) {
    ReportStats();
    bpfdiff::fuzz::ExitOnHarnessFailure("diff_fuzzer", created.message());
  }
  harness = created->release();
  if (executor != nullptr) {
    auto unicorn = bpfdiff::fuzz::DiffHarness::Create(settings->bugs, settings->unicorn_fault, settings->engines);
    if (!unicorn) {
      ReportStats();
      bpfdiff::fuzz::ExitOnHarnessFailure("diff_fuzzer", unicorn.message());
    }
    checker = unicorn->release();
    const auto& engines = harness->runner().engines();
    const auto jits = std::count_if(engines.begin(), engines.end(), [](const auto& engine) {
      return engine->kind() == bpfdiff::EngineKind::kJit;
    });
    check_one_in = kCheckOneInPerJit * static_cast<uint64_t>(std::max<std::ptrdiff_t>(jits, 1));
    stats->set_executor(std::string(harness->sandbox().machine(0).executor()));
    fmt::print(stderr, "diff_fuzzer: executor {}, checked on unicorn (BPFDIFF_EXECUTOR=unicorn runs unicorn alone)\n",
               harness->sandbox().machine(0).executor());
  }
  stats->set_cost(&harness->runner().cost());
  std::atexit(ReportStats);
  return 0;
}

namespace {

// Adds the wall time of a scope to one of the stats' cost counters.
class CostScope {
 public:
  explicit CostScope(void (bpfdiff::fuzz::FuzzStats::*add)(uint64_t)) : add_(add), start_(bpfdiff::SteadyNanos()) {}
  ~CostScope() {
    if (stats != nullptr) (stats->*add_)(bpfdiff::SteadyNanos() - start_);
  }
  CostScope(const CostScope&) = delete;
  CostScope& operator=(const CostScope&) = delete;

 private:
  void (bpfdiff::fuzz::FuzzStats::*add_)(uint64_t);
  uint64_t start_;
};

// Runs `work` and adds its wall time to the stats through `add`, less what
// the runner whose phases the stats print counted meanwhile (a culprit's
// search prepares the engines again through it).
template <typename Work>
auto TimedPart(void (bpfdiff::fuzz::FuzzStats::*add)(uint64_t), Work&& work) {
  const uint64_t start = bpfdiff::SteadyNanos();
  const uint64_t counted = harness->runner().cost().TotalNanos();
  auto result = work();
  const uint64_t in_phases = harness->runner().cost().TotalNanos() - counted;
  const uint64_t wall = bpfdiff::SteadyNanos() - start;
  if (stats != nullptr) (stats->*add)(wall > in_phases ? wall - in_phases : 0);
  return result;
}

}  // namespace

namespace {

void ExitIfAMachineFailed(bpfdiff::fuzz::DiffHarness& on) {
  if (auto failure = on.sandbox().UnicornFailure()) {
    ReportStats();
    bpfdiff::fuzz::ExitOnHarnessFailure("diff_fuzzer", *failure);
  }
}

// Whether `engine_run` (of `run`) did not match the interpreter because
// it ran into a known finding of the kernel's JIT.
bool PastAKnownFinding(const bpfdiff::CaseRun& run, const bpfdiff::EngineRun* engine_run) {
  return engine_run != nullptr && !engine_run->verdict.match() &&
         bpfdiff::fuzz::KnownKernelFinding(run, *engine_run, nullptr).has_value();
}

// Runs the input on Unicorn too (see `checker`); aborts on an emulator
// disagreement. Returns Unicorn's run.
//
// Past a JIT's bug the code may run what the architecture leaves open:
// the LL/SC known finding loops on exclusives at addresses read from
// memory, where QEMU's monitor (which compares the value loaded) and
// VIXL's (the address) differ, and so may the stack bytes the loop
// leaves. So where both emulators show a divergence, the finding is
// Unicorn's to report and the outcomes are not compared; nor is an
// engine's run that, on both, ran into a known finding of the kernel's
// JIT, divergent or not comparable (a campaign met one whose run read
// engine-private bytes before it faulted at the atomic). Otherwise every
// engine's outcome must be the same on both.
bpfdiff::fuzz::DiffHarness::InputRun CheckOnUnicorn(std::span<const uint8_t> input,
                                                   const bpfdiff::fuzz::DiffHarness::InputRun& fast) {
  stats->EmulatorCheck();
  auto checked = checker->RunInput(input, kVariantsPerInput);
  ExitIfAMachineFailed(*checker);
  if (checked.run.FirstDivergence() != nullptr && fast.run.FirstDivergence() != nullptr) return checked;
  auto disagreements = bpfdiff::CompareExecutors(checked.run, fast.run, "unicorn",
                                                 harness->sandbox().machine(0).executor());
  std::erase_if(disagreements, [&](const bpfdiff::EmulatorDisagreement& d) {
    return PastAKnownFinding(checked.run, d.a_run) && PastAKnownFinding(fast.run, d.b_run);
  });
  if (!disagreements.empty()) {
    fmt::print(stderr, "==== bpfdiff: EMULATOR DISAGREEMENT ====\n");
    for (const auto& d : disagreements) {
      fmt::print(stderr, "{}{}: {}\n", d.engine.empty() ? "the case" : d.engine,
                 d.memory == 0 ? "" : fmt::format(" (input variant {})", d.memory), d.detail);
    }
    fmt::print(stderr, "not a JIT divergence: the two emulators ran the same code differently "
                       "(replay it with `bpfdiff emulators`)\n");
    ReportStats();
    bpfdiff::fuzz::EndInEmulatorFrames(std::abort);
  }
  return checked;
}

// Says each known finding of the kernel's JIT once, counts it every time,
// and returns what LLVMFuzzerTestOneInput returns for the input.
int CountKnownFindings(const std::vector<std::string>& known) {
  for (const std::string& name : known) {
    if (known_said->insert(name).second) {
      fmt::print(stderr,
                 "diff_fuzzer: known finding of the kernel's JIT, {} (kernelsrc/SHIMS.md): counted in the stats, "
                 "not reported\n",
                 name);
    }
    stats->KnownFinding(name);
  }
  stats->MaybePrint();
  // Not worth keeping: a corpus that keeps every mutant reaching a known
  // finding drifts toward it (a fifth of a night's kernel inputs). A
  // libFuzzer that honours -1 does not add the input; LLVM 14's accepts
  // the value and keeps it anyway (tried: inputs returning -1 still landed
  // in the corpus).
  return -1;
}

// The known findings among a run's divergences, set aside one after
// another (each engine's verdict "not comparable" for the while), so that
// a divergence behind one (another tree's engine, another loader's, on the
// same input) is still seen and reported. Put back before the stats count
// the run, which then shows every divergence as it was. A known finding
// of a tree linked beside the build's is named with it
// (atomic-fetch-src-is-dst@6.1.192).
struct KnownSetAside {
  std::vector<std::pair<bpfdiff::EngineRun*, bpfdiff::Verdict>> held;
  std::vector<std::string> names;

  void Add(bpfdiff::EngineRun& diverged, std::string_view known) {
    const size_t at = diverged.engine.find('@');
    std::string name(known);
    if (at != std::string::npos) name += diverged.engine.substr(at);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    held.emplace_back(&diverged, diverged.verdict);
    diverged.verdict.kind = bpfdiff::Verdict::Kind::kNotComparable;
    diverged.verdict.detail = "known finding " + name;
  }
  void PutBack() {
    for (auto& [run, verdict] : held) run->verdict = verdict;
    held.clear();
  }
};

// Which known finding `diverged` is, if any: by its shape, by its own
// semantics, or by the culprit `localization` names (nullptr: none yet).
std::optional<std::string_view> RecognizeKnown(bpfdiff::fuzz::DiffHarness& owner,
                                               const bpfdiff::fuzz::DiffHarness::InputRun& result,
                                               const bpfdiff::EngineRun& diverged,
                                               const bpfdiff::Localization* localization) {
  if (auto known = bpfdiff::fuzz::CertainKnownKernelFinding(result.run, diverged)) return known;
  if (localization != nullptr) {
    if (auto known = bpfdiff::fuzz::KnownKernelFinding(result.run, diverged, localization)) return known;
  }
  return bpfdiff::fuzz::KnownKernelFindingBySemantics(owner.runner(), *result.source, result.run, diverged);
}

}  // namespace

namespace {
// Whether a mutator made an input since the last one ran: the next run is
// of a new input, not of the corpus replayed.
bool mutated = false;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const CostScope cost(&bpfdiff::fuzz::FuzzStats::AddTargetNanos);
  if (std::exchange(mutated, false)) stats->NewInput();
  auto result = harness->RunInput({data, size}, kVariantsPerInput);
  if (!result.source) {
    stats->NotOurs();
    return 0;
  }
  ExitIfAMachineFailed(*harness);
  bpfdiff::fuzz::DiffHarness* reporter = harness;  // whose run is reported and localized
  // A known finding certain without its culprit costs no more than the
  // comparison: nothing is stepped again, nothing run on Unicorn. So does
  // one whose own semantics give the engine's outcome, for one more
  // interpreter run, which records its own coverage: the input's is kept.
  std::vector<std::vector<uint8_t>> executed_copy;
  const std::vector<std::vector<uint8_t>>* executed = &harness->executed();
  KnownSetAside aside;
  while (bpfdiff::EngineRun* diverged = result.run.FirstDivergence()) {
    if (executed_copy.empty()) {
      executed_copy = harness->executed();
      executed = &executed_copy;
    }
    auto known = RecognizeKnown(*harness, result, *diverged, nullptr);
    if (!known) break;
    aside.Add(*diverged, *known);
  }
  if (!aside.names.empty() && result.run.FirstDivergence() == nullptr) {
    aside.PutBack();
    stats->Record(*result.source, result.run, *executed);
    stats->ExtraRuns(result.run.variants.size());
    return CountKnownFindings(aside.names);
  }
  if (checker != nullptr && result.run.FirstDivergence() != nullptr) {
    // A known finding of the kernel's JIT is told on VIXL's run alone: a
    // kernel campaign meets one in four inputs, each of which Unicorn
    // would otherwise run and step again.
    while (bpfdiff::EngineRun* diverged = result.run.FirstDivergence()) {
      const bpfdiff::Localization localization =
          TimedPart(&bpfdiff::fuzz::FuzzStats::AddLocalizationNanos, [&] { return harness->Localize(result.run); });
      ExitIfAMachineFailed(*harness);
      auto known = RecognizeKnown(*harness, result, *diverged, &localization);
      if (!known) break;
      aside.Add(*diverged, *known);
    }
    if (result.run.FirstDivergence() == nullptr) {
      aside.PutBack();
      stats->Record(*result.source, result.run, *executed);
      stats->ExtraRuns(result.run.variants.size());
      return CountKnownFindings(aside.names);
    }
  }
  // What is left diverges for a reason not known: the run goes back as it
  // was, and what follows sets the known ones aside again on the run it
  // reports (Unicorn's, when VIXL ran it).
  aside.PutBack();
  if (checker != nullptr && (result.run.FirstDivergence() != nullptr || Fnv1a(data, size) % check_one_in == 0)) {
    auto checked = TimedPart(&bpfdiff::fuzz::FuzzStats::AddEmulatorCheckNanos,
                             [&] { return CheckOnUnicorn({data, size}, result); });
    if (result.run.FirstDivergence() != nullptr) {
      result = std::move(checked);
      reporter = checker;
    }
  }
  stats->Record(*result.source, result.run, reporter == harness ? *executed : reporter->executed());
  stats->ExtraRuns(result.run.variants.size());
  if (result.run.FirstDivergence() != nullptr) {
    // Only now, for the divergent input: step both engines again to name
    // the culprit instruction, which the finding's kind is keyed by.
    std::optional<bpfdiff::Localization> localization;
    while (bpfdiff::EngineRun* diverged = result.run.FirstDivergence()) {
      localization =
          TimedPart(&bpfdiff::fuzz::FuzzStats::AddLocalizationNanos, [&] { return reporter->Localize(result.run); });
      ExitIfAMachineFailed(*reporter);  // while stepping: no verdict to give
      auto known = RecognizeKnown(*reporter, result, *diverged, &*localization);
      if (!known) break;
      aside.Add(*diverged, *known);
    }
    if (result.run.FirstDivergence() == nullptr) {
      aside.PutBack();
      return CountKnownFindings(aside.names);
    }
    const auto kind = bpfdiff::fuzz::KindOfFirstDivergence(*result.source, result.run, &*localization);
    fmt::print(stderr, "==== bpfdiff: DIVERGENCE ====\n{}finding kind: {}\n",
               bpfdiff::fuzz::DescribeDivergence(*result.source, result.run, &*localization),
               bpfdiff::fuzz::DescribeKind(*kind));
    ReportStats();
    bpfdiff::fuzz::EndInDivergenceFrames(*kind, std::abort);
  }
  stats->MaybePrint();
  return 0;
}

// libFuzzer's own mutations; absent (null) in the replay build, which has
// no libFuzzer and never mutates.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) __attribute__((weak));

// One mutation in kLibFuzzerShare is libFuzzer's own: its comparison-guided
// replacements (from the JIT's comparisons, traced with trace-cmp) and
// dictionary entries land on the records' plain little-endian words, which
// the structured mutator only changes at random or to a magnitude class.
constexpr unsigned kLibFuzzerShare = 8;

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  const CostScope cost(&bpfdiff::fuzz::FuzzStats::AddMutationNanos);
  mutated = true;
  if (LLVMFuzzerMutate != nullptr && seed % kLibFuzzerShare == 0) return LLVMFuzzerMutate(data, size, max_size);
  return bpfdiff::fuzz::MutateInput(data, size, max_size, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* first, size_t first_size, const uint8_t* second,
                                            size_t second_size, uint8_t* out, size_t max_out, unsigned seed) {
  const CostScope cost(&bpfdiff::fuzz::FuzzStats::AddMutationNanos);
  mutated = true;
  return bpfdiff::fuzz::CrossOverInputs(first, first_size, second, second_size, out, max_out, seed);
}
