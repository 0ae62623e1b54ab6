// The two arm64 executors side by side: diff_fuzzer's seeds (every engine
// of the model, four input variants each, as diff_fuzzer runs them) on
// Unicorn and on VIXL's simulator. Items are cases run; "guest insns" the
// JIT instructions the machines executed (Outcome::steps), and its
// inverted rate the time per executed instruction, everything included
// (the interpreter, the JIT, loading, comparing), which both executors
// pay alike.
//
//   taskset -c 0 build/bench/bench/bpfdiff_bench --benchmark_filter=Executor
#include <benchmark/benchmark.h>

#include <filesystem>
#include <vector>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/diff/triage.h"
#include "harness/machine/vixl_cpu.h"
#include "support/files.h"

namespace bpfdiff::bench {
namespace {

void BM_Executor(benchmark::State& state) {
  const bool vixl = state.range(0) != 0;
  auto harness = fuzz::DiffHarness::Create({}, {}, "all", vixl ? &CreateVixlMachine : nullptr);
  auto files = ListFiles(std::filesystem::path(BPFDIFF_SOURCE_DIR) / "fuzz/corpus/diff_fuzzer");
  if (!harness || !files) {
    state.SkipWithError(!harness ? harness.message().c_str() : files.message().c_str());
    return;
  }
  std::vector<CaseSource> cases;
  for (const auto& file : *files) {
    if (auto source = fuzz::LoadArtifact(file)) cases.push_back(std::move(source).value());
  }
  uint64_t steps = 0, runs = 0;
  for (auto _ : state) {
    for (const CaseSource& source : cases) {
      const CaseRun run = (*harness)->RunCase(source, fuzz::DiffHarness::kInputVariants);
      const auto count = [&](const std::vector<EngineRun>& list) {
        for (const EngineRun& engine_run : list) {
          if (engine_run.outcome && engine_run.engine != "interp") steps += engine_run.outcome->steps;
        }
      };
      count(run.runs);
      for (const auto& variant : run.variants) count(variant);
      ++runs;
    }
  }
  if (auto failure = (*harness)->sandbox().UnicornFailure()) state.SkipWithError(failure->c_str());
  state.SetItemsProcessed(static_cast<int64_t>(runs));
  state.counters["guest insns"] = benchmark::Counter(static_cast<double>(steps));
  state.counters["s/guest insn"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(vixl ? "vixl" : "unicorn");
}
BENCHMARK(BM_Executor)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bpfdiff::bench
