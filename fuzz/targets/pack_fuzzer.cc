// pack_fuzzer: sequences of loads, frees, interleaved steps on 1 to 4 CPUs,
// stale calls and prog_array updates over one set of prog packs (see
// fuzz/pack/pack_script.h), with every lifecycle invariant checked after each
// operation and every call's outcome compared with the interpreter's. A
// broken invariant aborts with the CPU, pc, slot and operation, from the
// stack frame of the invariant (fuzz/findings/pack_frames.h), so that
// ClusterFuzz files one bug per invariant. When the harness fails (Unicorn
// would not start), the target says so once and exits with status 2
// (fuzz/targets/target_settings.h).
//
// Its inputs are mutated as scripts, operations inserted, deleted,
// duplicated and reordered, by a mutator that steers toward full bitmap
// words, big images and CPUs inside programs being freed
// (fuzz/pack/script_mutator.h); its stats say which of those states the
// campaign reached (fuzz/pack/pack_states.h).
//
// With BPFDIFF_ENGINES=kernel the programs are compiled by the kernel's own
// arm64 JIT (kernelsrc/), which allocates, finalizes and frees through the
// same packs: its use of the pack API is under the same invariants.
//
// Thin glue: the script format, the mutator, the world and its checks
// live elsewhere.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include <fmt/format.h>

#include "fuzz/findings/pack_frames.h"
#include "fuzz/pack/pack_script.h"
#include "fuzz/pack/script_mutator.h"
#include "fuzz/targets/target_settings.h"

// The engines this build runs unless BPFDIFF_ENGINES names others:
// "kernel" in the build of bpfdiff_kernel_fuzz_target (cmake/fuzz_target.cmake).
#ifndef BPFDIFF_TARGET_ENGINES
#define BPFDIFF_TARGET_ENGINES "all"
#endif

namespace {

bpfdiff::fuzz::PackScriptOptions* options = nullptr;
bpfdiff::fuzz::TargetSettings* settings = nullptr;

struct Totals {
  uint64_t scripts = 0, operations = 0, loads = 0, loads_rejected = 0, frees = 0, stale_calls = 0, interrupts = 0;
  uint64_t failing_reloads = 0;
  uint64_t calls_compared = 0, calls_not_comparable = 0;
  uint64_t calls_replayed = 0;
  uint64_t by_cpus[5] = {};
  std::map<std::string, uint64_t> not_comparable;  // reason -> calls
  bpfdiff::fuzz::PackStates states;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_print = start;

  void Add(const bpfdiff::fuzz::PackScriptResult& r) {
    ++scripts;
    ++by_cpus[r.cpus];
    operations += r.operations;
    loads += r.loads;
    loads_rejected += r.loads_rejected;
    frees += r.frees;
    stale_calls += r.stale_calls;
    interrupts += r.interrupts;
    failing_reloads += r.failing_reloads;
    calls_compared += r.calls_compared;
    calls_not_comparable += r.calls_not_comparable;
    calls_replayed += r.calls_replayed;
    for (const auto& [reason, calls] : r.not_comparable_reasons) not_comparable[reason] += calls;
    states.Add(r.states);
  }
  double Seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  void Print() const {
    const double seconds = Seconds();
    fmt::print(stderr,
               "pack_fuzzer: {} scripts ({:.0f}/s; by CPUs 1:{} 2:{} 3:{} 4:{}), {} operations, {} loads "
               "({} rejected), {} frees, {} stale calls, {} interrupts, {} failing reloads, {} calls compared, {} not "
               "comparable\n",
               scripts, scripts / std::max(seconds, 1e-9), by_cpus[1], by_cpus[2], by_cpus[3], by_cpus[4],
               operations, loads, loads_rejected, frees, stale_calls, interrupts, failing_reloads, calls_compared,
               calls_not_comparable);
    for (const auto& [reason, calls] : not_comparable) fmt::print(stderr, "pack_fuzzer:   not comparable: {} {}\n", reason, calls);
    std::string reached, not_reached, largest;
    for (const auto& [state, times] : states.Reached()) {
      std::string& list = times > 0 ? reached : not_reached;
      list += fmt::format("{}{}", list.empty() ? "" : ", ", state);
      if (times > 0) list += fmt::format(" {}", times);
    }
    for (const auto& [value, most] : states.Largest()) largest += fmt::format("{}{} {}", largest.empty() ? "" : ", ", value, most);
    fmt::print(stderr, "pack_fuzzer:   states reached: {}\n", reached.empty() ? "none" : reached);
    fmt::print(stderr, "pack_fuzzer:   states NOT reached: {}\n", not_reached.empty() ? "none" : not_reached);
    fmt::print(stderr, "pack_fuzzer:   largest: {}\n", largest);
  }
  bpfdiff::fuzz::FuzzStatsFile ToFile() const {
    bpfdiff::fuzz::FuzzStatsFile file;
    // The kernel's JIT's run is a target of its own in the nightly report.
    file.target = options->jit_engine == "jit" ? "pack_fuzzer" : "pack_fuzzer.kernel";
    file.seconds = Seconds();
    file.inputs = scripts;
    file.counters = {{"operations", operations},         {"loads", loads},
                     {"loads_rejected", loads_rejected}, {"frees", frees},
                     {"stale_calls", stale_calls},       {"calls_compared", calls_compared},
                     {"calls_not_comparable", calls_not_comparable},
                     {"calls_replayed", calls_replayed},   {"interrupts", interrupts},
                     {"failing_reloads", failing_reloads}};
    for (int cpus = 1; cpus <= 4; ++cpus) file.counters.emplace_back(fmt::format("scripts_on_{}_cpus", cpus), by_cpus[cpus]);
    file.not_comparable = bpfdiff::fuzz::MostFrequentFirst({not_comparable.begin(), not_comparable.end()});
    for (const auto& [state, times] : states.Reached()) file.states_reached.emplace_back(state, times);
    for (const auto& [value, most] : states.Largest()) file.states_largest.emplace_back(value, most);
    return file;
  }
};
Totals* totals = nullptr;

// The states a script reached, as coverage: libFuzzer reads this section
// as its "extra counters" after each input (and clears it before the
// next), so that a script that first gets a CPU inside a program by a
// tail call is kept even though the free it defers runs no new code. In
// the replay build it is an ordinary array.
__attribute__((used, section("__libfuzzer_extra_counters"))) uint8_t state_counters[bpfdiff::fuzz::kPackStateCounters];

// On stderr, and to BPFDIFF_FUZZ_STATS_JSON for the nightly report: at exit
// and before the abort of a broken invariant.
void ReportTotals() {
  if (totals == nullptr) return;
  totals->Print();
  bpfdiff::fuzz::WriteStats(*settings, totals->ToFile());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  settings = new bpfdiff::fuzz::TargetSettings(bpfdiff::fuzz::ReadTargetSettings("pack_fuzzer", BPFDIFF_TARGET_ENGINES));
  options = new bpfdiff::fuzz::PackScriptOptions;
  options->bugs = settings->bugs;
  options->unicorn_fault = settings->unicorn_fault;
  // BPFDIFF_ENGINES=kernel: the programs are compiled by the kernel's JIT
  // (LSE atomics), into the same packs, under the same invariants.
  // kernel@<version>: a tree linked beside the build's own. One JIT runs
  // the scripts: "trees" names several.
  if (settings->engines == "kernel") options->jit_engine = "kernel-jit-blind";
  if (settings->engines.starts_with("kernel@")) {
    options->jit_engine = "kernel-jit-blind" + settings->engines.substr(std::string_view("kernel").size());
  }
  if (settings->engines == "trees") {
    fmt::print(stderr, "pack_fuzzer: BPFDIFF_ENGINES=trees: the pack scripts run one JIT; name one tree "
                       "(kernel@<version>)\n");
    std::exit(2);
  }
  totals = new Totals;
  std::atexit(ReportTotals);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto result = bpfdiff::fuzz::RunPackScript({data, size}, *options);
  if (!result) {
    ReportTotals();
    bpfdiff::fuzz::ExitOnHarnessFailure("pack_fuzzer", result.message());
  }
  if (!result->is_script) return 0;
  totals->Add(*result);
  bpfdiff::fuzz::StatesAsCounters(result->states, state_counters);
  if (!result->violations.empty()) {
    fmt::print(stderr, "==== bpfdiff: PACK INVARIANT BROKEN ({} CPUs, operation {}) ====\n", result->cpus,
               result->operations);
    for (const auto& violation : result->violations) fmt::print(stderr, "{}\n", violation.Describe());
    fmt::print(stderr, "replay with: bpfdiff pack replay <this input> --trace{}\n",
               options->jit_engine == "jit" ? "" : " --jit " + options->jit_engine);
    fmt::print(stderr, "finding kind: pack invariant {}\n",
               bpfdiff::lifecycle::InvariantName(result->violations.front().invariant));
    ReportTotals();
    bpfdiff::fuzz::EndInPackInvariantFrames(result->violations.front().invariant, std::abort);
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - totals->last_print > std::chrono::seconds(30)) {
    totals->last_print = now;
    totals->Print();
  }
  return 0;
}

// libFuzzer's own mutations; absent (null) in the replay build, which has
// no libFuzzer and never mutates.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) __attribute__((weak));

// One mutation in kLibFuzzerShare is libFuzzer's own: its byte edits and
// comparison-guided replacements reach argument values the script mutator
// draws only at random.
constexpr unsigned kLibFuzzerShare = 8;

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  // A non-script (the empty input an empty corpus starts from) goes to the
  // script mutator, which generates a script in its place.
  const bool script = size > 0 && bpfdiff::fuzz::IsPackScriptVersion(data[0]);
  if (LLVMFuzzerMutate != nullptr && seed % kLibFuzzerShare == 0 && script) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  return bpfdiff::fuzz::MutatePackScript(data, size, max_size, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* first, size_t first_size, const uint8_t* second,
                                            size_t second_size, uint8_t* out, size_t max_out, unsigned seed) {
  return bpfdiff::fuzz::CrossOverPackScripts(first, first_size, second, second_size, out, max_out, seed);
}
