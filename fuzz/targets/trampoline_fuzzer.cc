// trampoline_fuzzer: fuzz bytes become a traced program and the fentry,
// fexit and fmod_ret programs attached to it (fuzz/generator/
// trampoline_case.h). The kernel's own arch code builds the trampoline
// (arch_prepare_bpf_trampoline) and attaches it (bpf_arch_text_poke), after
// a first one when the input asks (the modify path); the traced program is
// called through it (a struct_ops trampoline is called itself; an
// extension program, freplace, takes the traced one's place), then
// detached and freed, and called again
// (harness/trampoline/kernel_trampoline.h). Each run is compared with the
// oracle's composition (oracle/trampoline.h): r0, the helper trace, the map
// value every program writes into, and the log of enter and exit calls.
//
// A divergence prints the case and aborts (one crash state: the frame of
// Found()); the input file is its reproducer (`trampoline_fuzzer FILE`).
// So does a case the kernel's code refused: every case is one the kernel
// loads and attaches (valid programs, at most three links of each kind,
// one to eight arguments, struct arguments past 8 registers refused as
// they must be), so another refusal is the kernel's or the shims'.
// When Unicorn fails, the target says so once and exits with status 2
// (fuzz/targets/target_settings.h). Built only where the build has the
// kernel's JIT.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "fuzz/generator/trampoline_case.h"
#include "fuzz/targets/target_settings.h"
#include "harness/trampoline/kernel_trampoline.h"

namespace {

using namespace bpfdiff;

// A fresh runner (sandbox, engines) every so many inputs bounds what
// Unicorn's translation cache holds (as recursion_fuzzer does).
constexpr uint64_t kInputsPerRunner = 5000;

struct Target {
  fuzz::TargetSettings settings;
  std::unique_ptr<trampoline::KernelTrampolineRunner> runner;
  uint64_t inputs = 0, runner_inputs = 0;
  // For the stats file.
  uint64_t compared = 0, not_comparable = 0, replaced = 0, struct_ops = 0, freplace = 0, links = 0, misses = 0,
           runners = 0;
  // Trampolines the kernel refused as it must (more than 8 argument registers).
  uint64_t refused = 0;
  // The paths of prepare_trampoline() and bpf_arch_text_poke() a case
  // took, each counted per case that ran (fuzz::TrampolinePaths): the
  // report names those never reached.
  std::vector<std::pair<std::string, uint64_t>> paths;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};
Target* target = nullptr;

void ReportStats() {
  if (target == nullptr) return;
  fuzz::FuzzStatsFile file;
  file.target = "trampoline_fuzzer";
  file.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - target->start).count();
  file.inputs = target->inputs;
  file.counters = {{"compared", target->compared}, {"not_comparable", target->not_comparable},
                   {"refused_as_the_kernel_must", target->refused},
                   {"replaced", target->replaced},  {"struct_ops", target->struct_ops}, {"freplace", target->freplace},
                   {"links", target->links},       {"misses", target->misses},
                   {"runners", target->runners}};
  file.states_reached = target->paths;
  fuzz::WriteStats(target->settings, file);
}

void NewRunner() {
  trampoline::RunnerOptions options;
  options.shim_bugs = target->settings.bugs.kernel_shims;
  auto runner = trampoline::KernelTrampolineRunner::Create(options);
  if (!runner) {
    ReportStats();
    fuzz::ExitOnHarnessFailure("trampoline_fuzzer", runner.message());
  }
  target->runner = std::move(runner).value();
  target->runner_inputs = 0;
  ++target->runners;
}

// Never inlined: it is the frame of the crash state.
[[noreturn, gnu::noinline]] void Found(const trampoline::TrampolineCase& c, const std::string& what,
                                       std::string_view kind) {
  fmt::print(stderr, "\n==== trampoline_fuzzer finding ====\n{}\n---- case ----\n{}----\nfinding kind: {}\n", what,
             fuzz::DescribeTrampolineCase(c), kind);
  std::fflush(stderr);
  ReportStats();
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  target = new Target;
  target->settings = fuzz::ReadTargetSettings("trampoline_fuzzer");
  for (const auto& [path, taken] : fuzz::TrampolinePaths({})) target->paths.emplace_back(path, 0);
  NewRunner();
  std::atexit(ReportStats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ++target->inputs;
  if (++target->runner_inputs > kInputsPerRunner) NewRunner();
  const trampoline::TrampolineCase c = fuzz::DecodeTrampolineInput({data, size});
  auto verdict = target->runner->Run(c);
  if (auto failure = target->runner->sandbox().UnicornFailure()) {
    ReportStats();
    fuzz::ExitOnHarnessFailure("trampoline_fuzzer", *failure);
  }
  if (!verdict) Found(c, fmt::format("the case was refused: {}", verdict.message()), "trampoline refused");
  // The same paths in the same order for every case (TrampolinePaths).
  const auto paths = fuzz::TrampolinePaths(c);
  for (size_t i = 0; i < paths.size() && i < target->paths.size(); ++i) target->paths[i].second += paths[i].second;
  target->replaced += c.replace ? 1 : 0;
  target->struct_ops += c.attachment.struct_ops ? 1 : 0;
  target->freplace += c.attachment.freplace ? 1 : 0;
  for (const auto* links : {&c.attachment.fentry, &c.attachment.fexit, &c.attachment.fmod_ret}) {
    target->links += links->size();
    for (const trampoline::Link& link : *links) target->misses += link.runs ? 0 : 1;
  }
  if (verdict->before.kind == Verdict::Kind::kDivergence) {
    Found(c, verdict->Describe(), fmt::format("trampoline before: {}", verdict->before.field));
  }
  if (verdict->attached.kind == Verdict::Kind::kDivergence) {
    Found(c, verdict->Describe(), fmt::format("trampoline attached: {}", verdict->attached.field));
  }
  if (verdict->detached.kind == Verdict::Kind::kDivergence) {
    Found(c, verdict->Describe(), fmt::format("trampoline detached: {}", verdict->detached.field));
  }
  if (!verdict->refused.empty()) {
    ++target->refused;
  } else if (verdict->match()) {
    ++target->compared;
  } else {
    ++target->not_comparable;
  }
  return 0;
}
