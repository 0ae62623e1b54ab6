#include "fuzz/findings/known_kernel_findings.h"

#include <algorithm>
#include <string>

#include "harness/diff/compare.h"
#include "harness/diff/engines.h"
#include "isa/insn.h"
#include "kernelsrc/kernel_jit.h"

namespace bpfdiff::fuzz {
namespace {

bool IsKernelEngine(std::string_view engine) { return engine.starts_with("kernel-jit"); }

// The kernel's LL/SC lowering, blinded or not (kernel-jit-llsc,
// kernel-jit-llsc-blind): the atomics' known finding is the lowering's.
bool IsKernelLlsc(std::string_view engine) { return engine.starts_with("kernel-jit-llsc"); }

// The LSE engine that compiles as `llsc` does but for the lowering:
// kernel-jit for kernel-jit-llsc, kernel-jit-blind for kernel-jit-llsc-blind.
std::string LseCounterpart(std::string_view llsc) {
  std::string name(llsc);
  name.erase(std::string_view("kernel-jit").size(), std::string_view("-llsc").size());
  return name;
}

// lock fetch OP [rX+0], rX (OP not cmpxchg, which leaves src alone).
bool IsFetchWithSrcAsAddress(const isa::Insn& insn) {
  return isa::ClassOf(insn.opcode) == isa::kClassStx && isa::ModeOf(insn.opcode) == isa::kModeAtomic &&
         (insn.imm & isa::kAtomicFetch) != 0 && insn.imm != isa::kAtomicCmpXchg && insn.src == insn.dst &&
         insn.offset == 0;
}

// The instruction at `slot` of program `program` of `loaded`, by the slot
// of the program as written (`source`) or as loaded.
const isa::Insn* InsnAt(const LoadedCase& loaded, uint32_t program, uint32_t slot, bool source) {
  if (program >= loaded.programs.size()) return nullptr;
  const LoadedProgram& p = loaded.programs[program];
  if (!source) return slot < p.program.insns.size() ? &p.program.insns[slot] : nullptr;
  const auto at = std::find(p.source_slot.begin(), p.source_slot.end(), slot);
  if (at == p.source_slot.end()) return nullptr;
  return &p.program.insns[static_cast<size_t>(at - p.source_slot.begin())];
}

bool FetchSrcIsDst(const CaseRun& run, const EngineRun& diverged, const Localization* localization) {
  if (!IsKernelLlsc(diverged.engine) || !run.loaded) return false;
  // A located culprit decides: another instruction before the atomic is
  // another bug, even when the run then faults at the atomic.
  if (localization != nullptr && localization->culprit) {
    const Culprit& named = *localization->culprit;
    const isa::Insn* culprit = named.prologue ? nullptr : InsnAt(*run.loaded, named.program, named.slot, false);
    return culprit != nullptr && IsFetchWithSrcAsAddress(*culprit);
  }
  if (diverged.outcome && diverged.outcome->fault) {
    const FaultInfo& fault = *diverged.outcome->fault;
    const isa::Insn* faulted = InsnAt(*run.loaded, fault.program, fault.insn, true);
    if (faulted != nullptr && IsFetchWithSrcAsAddress(*faulted)) return true;
  }
  return false;
}

// probe32 stX [rD+off], imm where off is not an offset the store's scaled
// unsigned 12-bit immediate holds (negative, not a multiple of the size, or
// past 4095 units): 6.12's JIT (BPF_ST | BPF_PROBE_MEM32) puts the arena
// address in tmp2 and then overwrites tmp2 with the offset.
bool IsArenaStoreOfImmAtARegisterOffset(const isa::Insn& insn) {
  if (isa::ClassOf(insn.opcode) != isa::kClassSt || isa::ModeOf(insn.opcode) != isa::kModeProbeMem32) return false;
  const int size = static_cast<int>(isa::SizeBytes(insn.opcode));
  const int off = insn.offset;
  const bool scaled_imm12 = off >= 0 && off % size == 0 && off / size <= 0xfff;
  return !scaled_imm12;
}

// Only a located culprit names it: the store faults inside the JIT's code
// and the exception table skips it, so no fault points at it.
bool ArenaStoreOffsetClobbersAddress(const CaseRun& run, const EngineRun& diverged,
                                     const Localization* localization) {
  if (!IsKernelEngine(diverged.engine) || !run.loaded || localization == nullptr || !localization->culprit) {
    return false;
  }
  const Culprit& named = *localization->culprit;
  if (named.prologue) return false;
  const isa::Insn* culprit = InsnAt(*run.loaded, named.program, named.slot, false);
  return culprit != nullptr && IsArenaStoreOfImmAtARegisterOffset(*culprit);
}

// The finding is a tree's whose JIT counts a tail call only once the slot
// holds a program (6.12); 6.1's counts it first, as the interpreter does,
// and a divergence of this shape there is something else. The tree is the
// engine's (kernel-jit@6.1.192 runs 6.1's code in a 6.12 build).
bool TreeLeavesEmptySlotsUncounted(std::string_view engine) {
  const EngineSpec* spec = FindEngine(engine);
  const kernelsrc::KernelTree* tree = kernelsrc::TreeOrBuilt(spec != nullptr ? spec->tree : nullptr);
  return tree != nullptr && tree->features.tail_call_empty_slot_uncounted;
}

bool EmptySlotCountedThenLimit(const CaseRun& run, const EngineRun& diverged) {
  if (!IsKernelEngine(diverged.engine) || !TreeLeavesEmptySlotsUncounted(diverged.engine)) return false;
  const std::vector<EngineRun>* runs = run.RunsHolding(diverged);
  if (runs == nullptr) return false;
  const EngineRun* reference = &runs->front();  // the interpreter's run on the same input memory
  if (!reference->outcome) return false;
  using Result = TailCallAttempt::Result;
  bool empty_slot = false;
  for (const TailCallAttempt& attempt : reference->outcome->tail_call_attempts) {
    empty_slot |= attempt.result == Result::kEmptySlot;
    if (attempt.result == Result::kCountAtLimit && empty_slot) return true;
  }
  return false;
}

bool IsAtomic(const isa::Insn& insn) {
  const uint8_t mode = isa::ModeOf(insn.opcode);
  return isa::ClassOf(insn.opcode) == isa::kClassStx && (mode == isa::kModeAtomic || mode == isa::kModeProbeAtomic);
}

// The LL/SC lowering diverged where the LSE one matched, and every atomic
// of the case is a fetch with its address as src.
bool LlscAloneDivergedOnKnownAtomics(const CaseRun& run, const EngineRun& diverged) {
  if (!IsKernelLlsc(diverged.engine) || !run.loaded) return false;
  const std::vector<EngineRun>* runs = run.RunsHolding(diverged);
  if (runs == nullptr) return false;
  const std::string lse_name = LseCounterpart(diverged.engine);
  const auto lse = std::find_if(runs->begin(), runs->end(), [&](const EngineRun& r) { return r.engine == lse_name; });
  if (lse == runs->end() || !lse->verdict.match()) return false;
  bool any = false;
  for (const LoadedProgram& program : run.loaded->programs) {
    for (const isa::Insn& insn : program.program.insns) {
      if (!IsAtomic(insn)) continue;
      if (!IsFetchWithSrcAsAddress(insn)) return false;
      any = true;
    }
  }
  return any;
}

}  // namespace

std::optional<std::string_view> CertainKnownKernelFinding(const CaseRun& run, const EngineRun& diverged) {
  if (EmptySlotCountedThenLimit(run, diverged)) return "tailcall-count-rules";
  if (LlscAloneDivergedOnKnownAtomics(run, diverged)) return "atomic-fetch-src-is-dst";
  return std::nullopt;
}

std::optional<std::string_view> KnownKernelFindingBySemantics(DifferentialRunner& runner, const CaseSource& source,
                                                              const CaseRun& run, const EngineRun& diverged) {
  if (!IsKernelEngine(diverged.engine) || !diverged.outcome || !run.loaded || runner.engines().empty() ||
      runner.engines().front()->kind() != EngineKind::kInterpreter) {
    return std::nullopt;
  }
  const std::vector<EngineRun>* runs = run.RunsHolding(diverged);
  if (runs == nullptr) return std::nullopt;
  // Which input memory the engine ran on: the case's, or a variant's.
  const bool own_memory = runs == &run.runs;
  CaseSource changed = source;
  bool any = false;
  for (auto& program : changed.programs) {
    for (isa::Insn& insn : program) {
      if (!IsArenaStoreOfImmAtARegisterOffset(insn)) continue;
      insn = isa::Insn{static_cast<uint8_t>(isa::kClassJmp | isa::kJmpJa), 0, 0, 0, 0};
      any = true;
    }
  }
  if (!any) return std::nullopt;
  RunOptions options;
  options.engine_limit = 1;  // the interpreter alone
  if (!own_memory) {
    const std::vector<uint8_t>* memory = run.InputMemoryOf(diverged);
    if (memory == nullptr) return std::nullopt;
    options.input_variants.push_back(*memory);
  }
  Engine& interpreter = *runner.engines().front();
  const StackGeometry own = interpreter.geometry();
  if (!interpreter.UseGeometry(diverged.geometry)) return std::nullopt;
  const CaseRun again = runner.Run(changed, options);
  interpreter.UseGeometry(own);
  const std::vector<EngineRun>* rerun = own_memory ? &again.runs : again.variants.empty() ? nullptr : &again.variants[0];
  if (rerun == nullptr || rerun->empty() || !rerun->front().outcome) return std::nullopt;
  const Outcome& expected = *rerun->front().outcome;
  if (expected.read_engine_private) return std::nullopt;
  // The comparison the runner makes (DifferentialRunner::
  // CompareWithReference): calls of the helpers the engine's code performs
  // inline, or the case's JIT-only rewrites inline, are in one trace only.
  std::vector<int32_t> inlined = diverged.inlined_by_code;
  if (diverged.ran_jit_only_rewrites) {
    const auto rewritten = run.loaded->options.JitInlinedHelpers();
    inlined.insert(inlined.end(), rewritten.begin(), rewritten.end());
  }
  const std::string_view reference = rerun->front().engine;
  const Verdict verdict = inlined.empty()
                              ? Compare(expected, *diverged.outcome, reference, diverged.engine)
                              : CompareHelperWithInlined(expected, *diverged.outcome, reference, diverged.engine, inlined);
  if (!verdict.match()) return std::nullopt;
  return "arena-st-offsets";
}

std::optional<std::string_view> KnownKernelFinding(const CaseRun& run, const EngineRun& diverged,
                                                   const Localization* localization) {
  if (FetchSrcIsDst(run, diverged, localization)) return "atomic-fetch-src-is-dst";
  if (EmptySlotCountedThenLimit(run, diverged)) return "tailcall-count-rules";
  if (ArenaStoreOffsetClobbersAddress(run, diverged, localization)) return "arena-st-offsets";
  return std::nullopt;
}

}  // namespace bpfdiff::fuzz
