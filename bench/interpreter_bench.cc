// Interpreter throughput, in BPF instructions per second.
#include <benchmark/benchmark.h>

#include "bench/bench_programs.h"
#include "harness/machine/sandbox.h"
#include "oracle/interpreter.h"

namespace bpfdiff::bench {
namespace {

void RunLoop(benchmark::State& state, const std::string& text) {
  auto sandbox = Sandbox::Create();
  CaseSource source;
  source.programs.push_back(MustAssemble(text));
  auto loaded = LoadCase(source);
  if (!sandbox || !loaded) {
    state.SkipWithError("setup failed");
    return;
  }
  GuestEnvironment& env = (*sandbox)->env();
  env.Install(*loaded);
  InterpreterOptions options{~uint64_t{0} >> 1, 0, Sandbox::Geometry()};
  uint64_t steps = 0;
  for (auto _ : state) {
    Outcome outcome = Interpreter(env, *loaded, options).RunProgram(0, {0, 0, 0, 0, 0});
    if (outcome.end != EndKind::kExit) {
      state.SkipWithError("the loop did not exit");
      return;
    }
    steps += outcome.steps;
    benchmark::DoNotOptimize(outcome.r0);
  }
  state.SetItemsProcessed(static_cast<int64_t>(steps));
  state.SetLabel("items = BPF instructions");
}

void BM_InterpreterAluBranchLoop(benchmark::State& state) { RunLoop(state, AluLoop(100000)); }
void BM_InterpreterLoadStoreLoop(benchmark::State& state) { RunLoop(state, MemoryLoop(100000)); }

BENCHMARK(BM_InterpreterAluBranchLoop)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InterpreterLoadStoreLoop)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bpfdiff::bench
