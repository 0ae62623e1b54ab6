// test_tag, simulated: the kernel selftest (tools/testing/selftests/bpf/
// test_tag.c) loads and frees 40,945 programs: for five rounds, every
// length from 2 to BPF_MAXINSNS (4,096) of a generator of 64-bit immediate
// moves, then every length from 3 of a generator of map-fd loads. Per
// program: load (our verifier-lite), JIT into the pack, finalize, free.
//
// Per-word invalidation made this take 3 minutes instead of 27 seconds in
// the prog pack series' review; the counters show the text operations each
// cycle costs: exactly one copy and one cache operation per finalize and
// one fill and one cache operation per free, or the run is an error.
// Arg 1 runs the per-word-invalidate planted bug for comparison.
//
//   taskset -c 0 build/bench/bench/bpfdiff_bench --benchmark_filter=TestTag
#include <benchmark/benchmark.h>

#include <cstdint>

#include <fmt/format.h>

#include "harness/machine/sandbox.h"
#include "jit/jit.h"
#include "oracle/load.h"

namespace bpfdiff::bench {
namespace {

constexpr uint32_t kMaxInsns = 4096;  // BPF_MAXINSNS
constexpr int kRounds = 5;
constexpr int32_t kMapFd = 1;

isa::Insn MovImm(uint8_t dst, int32_t imm) { return {isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, dst, 0, 0, imm}; }

// bpf_gen_imm_prog: r(i % 10) = random, then exit.
std::vector<isa::Insn> ImmProgram(uint32_t insns, uint64_t& random) {
  std::vector<isa::Insn> prog(insns);
  for (uint32_t i = 0; i < insns; ++i) {
    random = random * 6364136223846793005ULL + 1442695040888963407ULL;
    prog[i] = MovImm(static_cast<uint8_t>(i % 10), static_cast<int32_t>(random >> 33));
  }
  prog[insns - 1] = {isa::kOpExit, 0, 0, 0, 0};
  return prog;
}

// bpf_gen_map_prog: r(j++ % 10) = map fd (lddw pairs), an even length ends
// with r = 42 in place of the last pair's first half, then exit.
std::vector<isa::Insn> MapProgram(uint32_t insns) {
  std::vector<isa::Insn> prog(insns);
  uint32_t i = 0, j = 0;
  for (; i + 1 < insns; i += 2, ++j) {
    prog[i] = {isa::kOpLddw, static_cast<uint8_t>(j % 10), isa::kPseudoMapFd, 0, kMapFd};
    prog[i + 1] = {0, 0, 0, 0, 0};
  }
  if (insns % 2 == 0) prog[insns - 2] = MovImm(static_cast<uint8_t>(i % 10), 42);
  prog[insns - 1] = {isa::kOpExit, 0, 0, 0, 0};
  return prog;
}

void BM_TestTag(benchmark::State& state) {
  SandboxOptions options;
  options.fast_machine = false;
  options.pack_bugs.per_word_invalidate = state.range(0) != 0;
  auto sandbox = Sandbox::Create(options);
  if (!sandbox) {
    state.SkipWithError(sandbox.message().c_str());
    return;
  }
  jit::Jit jit((*sandbox)->pack(), Sandbox::JitEnvironment(), jit::JitOptions{});
  UnicornTextPatcher& patcher = (*sandbox)->patcher();
  const isa::MapSpec hash_map{kMapFd, isa::MapType::kHash, 4, 4, 1, {}, {}};
  const uint64_t packs_before = (*sandbox)->pack().Accounting().packs_created;
  uint64_t cycles = 0, random = 1;
  patcher.ResetCounters();

  for (auto _ : state) {
    for (int round = 0; round < kRounds; ++round) {
      for (int generator = 0; generator < 2; ++generator) {
        for (uint32_t insns = generator == 0 ? 2 : 3; insns <= kMaxInsns; ++insns) {
          CaseSource source;
          source.programs.push_back(generator == 0 ? ImmProgram(insns, random) : MapProgram(insns));
          if (generator == 1) source.maps = {hash_map};
          auto loaded = LoadCase(source);
          if (!loaded) {
            state.SkipWithError(fmt::format("length {}: {}", insns, loaded.message()).c_str());
            return;
          }
          auto compiled = jit.Compile(loaded->programs.front().program);
          if (!compiled) {
            state.SkipWithError(fmt::format("length {}: {}", insns, compiled.message()).c_str());
            return;
          }
          jit.Release(*compiled);
          ++cycles;
        }
      }
    }
  }
  const TextCounters& finalize = patcher.counters(jit::TextOrigin::kFinalize);
  const TextCounters& free = patcher.counters(jit::TextOrigin::kFree);
  const auto per = [&](uint64_t n) { return static_cast<double>(n) / static_cast<double>(cycles); };
  state.counters["cycles"] = static_cast<double>(cycles);
  state.counters["packs_used"] =
      static_cast<double>((*sandbox)->pack().Accounting().packs_created - packs_before + 1);
  state.counters["copies/finalize"] = per(finalize.copies);
  state.counters["flushes/finalize"] = per(finalize.flushes);
  state.counters["fills/free"] = per(free.fills);
  state.counters["flushes/free"] = per(free.flushes);
  const bool exact = finalize.copies == cycles && finalize.flushes == cycles && free.fills == cycles &&
                     free.flushes == cycles;
  state.SetLabel(exact ? "exactly 1 copy + 1 flush per finalize, 1 fill + 1 flush per free"
                       : "NOT one text operation per range");
  if (!exact && state.range(0) == 0) state.SkipWithError("a finalize or free used more than one operation per range");
}

BENCHMARK(BM_TestTag)->ArgName("per_word_invalidate")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
}  // namespace bpfdiff::bench
