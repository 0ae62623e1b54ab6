// JIT costs: compiling a 100-instruction program, one pack
// alloc+finalize+free cycle, and one warm Unicorn run of a short program.
#include <benchmark/benchmark.h>

#include <cstring>

#include "bench/bench_programs.h"
#include "harness/diff/jit_engine.h"
#include "harness/machine/sandbox.h"

namespace bpfdiff::bench {
namespace {

// A program that stays loaded for the whole benchmark, as on any system
// running BPF: it keeps its pack alive, so that the measured cycles reuse
// the pack instead of creating (and filling 2 MiB of) a new one each time.
// BM_PackCycleWithNewPack measures the other case.
std::unique_ptr<jit::PackAllocation> KeepPackAlive(jit::ProgPack& pack) {
  auto resident = pack.Alloc(64);
  if (!resident) return nullptr;
  pack.Finalize(**resident);
  return std::move(resident).value();
}

void BM_JitCompile100Instructions(benchmark::State& state) {
  auto sandbox = Sandbox::Create();
  CaseSource source;
  source.programs.push_back(MustAssemble(MixedProgram(100)));
  auto loaded = LoadCase(source);
  if (!sandbox || !loaded) {
    state.SkipWithError("setup failed");
    return;
  }
  auto resident = KeepPackAlive((*sandbox)->pack());
  jit::Jit jit((*sandbox)->pack(), Sandbox::JitEnvironment(), jit::JitOptions{});
  const isa::Program& program = loaded->programs[0].program;
  for (auto _ : state) {
    auto compiled = jit.Compile(program);
    if (!compiled) {
      state.SkipWithError(compiled.message().c_str());
      return;
    }
    state.PauseTiming();  // the free is the pack cycle's, measured below
    jit.Release(*compiled);
    state.ResumeTiming();
  }
  state.SetLabel(fmt::format("{} BPF slots, passes + pack alloc + finalize", program.size()));
}

void BM_PackAllocFinalizeFree(benchmark::State& state) {
  auto sandbox = Sandbox::Create();
  if (!sandbox) {
    state.SkipWithError("setup failed");
    return;
  }
  jit::ProgPack& pack = (*sandbox)->pack();
  const uint64_t image_bytes = static_cast<uint64_t>(state.range(0));
  auto resident = state.range(1) != 0 ? KeepPackAlive(pack) : nullptr;
  for (auto _ : state) {
    auto allocation = pack.Alloc(image_bytes);
    if (!allocation) {
      state.SkipWithError(allocation.message().c_str());
      return;
    }
    std::memset((*allocation)->rw_image(), 0, image_bytes);
    pack.Finalize(**allocation);
    pack.Free(std::move(allocation).value());
  }
  state.SetLabel(resident ? "alloc + write + finalize (copy, flush) + free (fill, flush)"
                          : "the same, creating and releasing a pack every time");
}

void BM_WarmUnicornRun(benchmark::State& state) {
  auto sandbox = Sandbox::Create();
  CaseSource source;
  source.programs.push_back(MustAssemble(R"(
    mov %r0, 1
    mov %r2, 2
    add %r0, %r2
    lsh %r0, 4
    stxdw [%r10-8], %r0
    ldxdw %r3, [%r10-8]
    xor %r0, %r3
    add %r0, 7
    exit
  )"));
  auto loaded = LoadCase(source);
  if (!sandbox || !loaded) {
    state.SkipWithError("setup failed");
    return;
  }
  (*sandbox)->env().Install(*loaded);
  JitEngine engine(**sandbox, jit::JitOptions{}, "jit");
  if (!engine.Prepare(*loaded)) {
    state.SkipWithError("compile failed");
    return;
  }
  engine.Run(1'000'000);  // translate once
  for (auto _ : state) {
    Outcome outcome = engine.Run(1'000'000);
    benchmark::DoNotOptimize(outcome.r0);
  }
  state.SetLabel("9 BPF instructions, 30 arm64; run + outcome capture");
}

BENCHMARK(BM_JitCompile100Instructions)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PackAllocFinalizeFree)
    ->ArgNames({"image_bytes", "pack_kept_alive"})
    ->Args({512, 1})
    ->Args({4096, 1})
    ->Args({512, 0})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WarmUnicornRun)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bpfdiff::bench
