#include "harness/diff/localize.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/diff/jit_engine.h"
#include "isa/disassembler.h"
#include "isa/opcode_table.h"
#include "oracle/register_use.h"

namespace bpfdiff {
namespace {

constexpr uint16_t kAllRegisters = (1u << isa::kNumRegs) - 1;

const isa::Insn& InsnAt(const LoadedCase& loaded, uint32_t program, uint32_t slot) {
  return loaded.programs[program].program.insns[slot];
}

// The registers whose values the next boundary must agree on, after `insn`
// ran with `defined` holding defined values. A call leaves r1..r5 undefined
// (the JIT's helpers and callees clobber them; the verifier forbids reading
// them), a subprogram's exit that returns (`returned`) too, and a tail
// call leaves only r1 (the context) of r0..r5, and none of r6..r9 on a JIT
// that restores the caller's (`tail_call_restores_registers`). A local
// call hands r1..r5 to the callee as they are.
uint16_t DefinedAfter(const isa::Insn& insn, uint16_t defined, bool returned, bool tail_call_restores_registers) {
  const auto id = isa::Classify(insn);
  if (!id) return defined;
  const isa::Form& form = isa::FormById(*id);
  switch (form.shape) {
    case isa::Shape::kCallLocal: return defined;
    // A callback's address in the JITs, a token of it in the interpreter:
    // the register is the same function, not the same value.
    case isa::Shape::kLddwFunc: return static_cast<uint16_t>(defined & ~RegisterBit(insn.dst));
    // bpf_throw: the next state is the exception callback's entry, where
    // r2..r5 are bpf_throw's (the JITs' x2 is a frame record, which the
    // interpreter does not have; the verifier lets no callback read them).
    case isa::Shape::kCallKfunc: return static_cast<uint16_t>((defined & ~kArgRegisters) | RegisterBit(0) | RegisterBit(1));
    case isa::Shape::kExit:
      return returned ? static_cast<uint16_t>((defined & ~kArgRegisters) | RegisterBit(0)) : defined;
    case isa::Shape::kTailCall: {
      uint16_t undefined = (kArgRegisters & ~RegisterBit(1)) | RegisterBit(0);
      if (tail_call_restores_registers) undefined |= RegisterBit(6) | RegisterBit(7) | RegisterBit(8) | RegisterBit(9);
      return static_cast<uint16_t>(defined & ~undefined);
    }
    default: break;
  }
  const RegisterUse use = UseOf(insn, form);
  if (use.clobbers_args) defined = static_cast<uint16_t>(defined & ~kArgRegisters);
  return static_cast<uint16_t>(defined | use.writes);
}

std::string Where(uint32_t program, uint32_t slot) {
  return program == 0 ? fmt::format("slot {}", slot) : fmt::format("slot {} of program {}", slot, program);
}

// What differs between the interpreter's state `x` and the JIT's `y` at one
// boundary, over the registers in `defined`.
std::vector<std::string> Differences(const BoundaryState& x, const BoundaryState& y, uint16_t defined) {
  std::vector<std::string> out;
  if (x.program != y.program || x.slot != y.slot) {
    out.push_back(fmt::format("interp goes on at {}, jit at {}", Where(x.program, x.slot), Where(y.program, y.slot)));
    return out;
  }
  for (unsigned r = 0; r < isa::kNumRegs; ++r) {
    if ((defined & RegisterBit(r)) != 0 && x.regs[r] != y.regs[r]) {
      out.push_back(fmt::format("r{}: interp 0x{:x}, jit 0x{:x}", r, x.regs[r], y.regs[r]));
    }
  }
  if (x.helper_calls != y.helper_calls) {
    out.push_back(fmt::format("helper calls made: interp {}, jit {}", x.helper_calls, y.helper_calls));
  } else if (x.helper_calls != 0 && x.last_call != y.last_call) {
    out.push_back(fmt::format("helper call #{}: interp {}, jit {}", x.helper_calls - 1, FormatHelperCall(x.last_call),
                              FormatHelperCall(y.last_call)));
  }
  for (size_t d = 0; d < x.memory.stack_frames.size(); ++d) {
    if (x.memory.stack_frames[d] != y.memory.stack_frames[d]) {
      out.push_back(fmt::format("the bytes of stack frame {} differ", d));
    }
  }
  if (x.memory.context != y.memory.context) out.push_back("the bytes of the input memory differ");
  if (x.memory.map_values != y.memory.map_values) out.push_back("the bytes of the map values differ");
  if (x.memory.arena != y.memory.arena) out.push_back("the bytes of the arena differ");
  return out;
}

// The culprit at `program`/`slot` (or the prologue of `program`), with its
// arm64 code.
Culprit MakeCulprit(const LoadedCase& loaded, const std::vector<jit::CompiledProgram>& compiled, uint32_t program,
                    uint32_t slot, bool prologue) {
  Culprit culprit;
  culprit.prologue = prologue;
  culprit.program = program;
  culprit.slot = prologue ? 0 : slot;
  const auto& sources = loaded.programs[program].source_slot;
  culprit.source_slot = culprit.slot < sources.size() ? sources[culprit.slot] : culprit.slot;
  if (program >= compiled.size()) return culprit;
  for (const auto& sub : compiled[program].subprograms) {
    if (culprit.slot < sub.first_slot || culprit.slot >= sub.end_slot) continue;
    const uint32_t i = culprit.slot - sub.first_slot;
    const uint32_t begin = prologue ? 0 : sub.offsets[i];
    const uint32_t end = prologue ? sub.offsets[0] : sub.offsets[i + 1];
    culprit.code_address = sub.rx_image + 4ull * begin;
    culprit.code_words.assign(sub.words.begin() + begin, sub.words.begin() + end);
    break;
  }
  return culprit;
}

// For each program, whether each of its functions (subprograms) has an
// instruction that reads or writes r10 by name.
std::vector<std::vector<bool>> FunctionsNamingFramePointer(const LoadedCase& loaded) {
  std::vector<std::vector<bool>> names(loaded.programs.size());
  for (size_t p = 0; p < loaded.programs.size(); ++p) {
    const isa::Program& program = loaded.programs[p].program;
    names[p].assign(program.subprogram_starts.size(), false);
    for (uint32_t slot = 0; slot < program.insns.size(); ++slot) {
      const isa::Insn& insn = program.insns[slot];
      if (insn.dst != isa::kFramePointer && insn.src != isa::kFramePointer) continue;
      const size_t function = program.SubprogramOf(slot);
      if (function < names[p].size()) names[p][function] = true;
    }
  }
  return names;
}

}  // namespace

Localization CompareTraces(const LoadedCase& loaded, const std::vector<jit::CompiledProgram>& compiled,
                           const BoundaryTrace& interp, const Outcome& interp_outcome, const BoundaryTrace& jit,
                           const Outcome& jit_outcome, bool tail_call_restores_registers) {
  const std::vector<BoundaryState>& all = interp.states();
  const std::vector<BoundaryState>& b = jit.states();
  // The registers defined at each of the interpreter's boundaries. r10 is
  // left out in a function none of whose instructions names it: nothing
  // can observe it there, and the kernel's prologue sets it only for a
  // function that uses it (ctx->fp_used), so a callee that does not keeps
  // its caller's.
  const std::vector<std::vector<bool>> names_fp = FunctionsNamingFramePointer(loaded);
  const auto with_fp = [&](size_t i, uint16_t registers) {
    if (i >= all.size()) return registers;
    const uint32_t program = all[i].program;
    if (program >= loaded.programs.size()) return registers;
    const size_t function = loaded.programs[program].program.SubprogramOf(all[i].slot);
    const bool named = function < names_fp[program].size() && names_fp[program][function];
    const uint16_t fp = RegisterBit(isa::kFramePointer);
    return static_cast<uint16_t>(named ? registers | fp : registers & ~fp);
  };
  std::vector<uint16_t> defined(all.size() + 1, kAllRegisters);
  defined[0] = with_fp(0, kAllRegisters);
  for (size_t i = 0; i < all.size(); ++i) {
    defined[i + 1] =
        with_fp(i + 1, DefinedAfter(InsnAt(loaded, all[i].program, all[i].slot), defined[i], i + 1 < all.size(),
                                  tail_call_restores_registers));
  }
  // The interpreter stops before every instruction, the JIT only where an
  // instruction's code starts: the interpreter's stops at instructions
  // whose lowering is empty are hidden (the JIT's state there is also its
  // state before the next instruction).
  const auto has_boundary = [&](const BoundaryState& state) {
    return state.program < compiled.size() && HasBoundary(compiled[state.program], state.slot);
  };
  std::vector<size_t> a;  // indices into `all` of the boundaries the JIT also has
  for (size_t i = 0; i < all.size(); ++i) {
    if (has_boundary(all[i])) a.push_back(i);
  }

  // Of the hidden instructions at all[from .. to), the first that changed
  // the state in the interpreter: its empty lowering cannot have (an
  // instruction with no code is correct only as a no-op). Control flow is
  // left out: an exit into the epilogue restores the caller's registers,
  // a jump only moves on. `to` may be all.size() (the end of the run; the
  // last instruction has no state after it to look at).
  const auto first_hidden_change = [&](size_t from, size_t to) -> std::optional<size_t> {
    for (size_t j = from; j < to && j + 1 < all.size(); ++j) {
      if (has_boundary(all[j])) continue;
      const auto id = isa::Classify(InsnAt(loaded, all[j].program, all[j].slot));
      if (!id) continue;
      const isa::Shape shape = isa::FormById(*id).shape;
      if (isa::IsBranchShape(shape) || shape == isa::Shape::kExit || shape == isa::Shape::kCallHelper ||
          shape == isa::Shape::kCallReg || shape == isa::Shape::kTailCall || shape == isa::Shape::kCallKfunc) {
        continue;
      }
      BoundaryState after = all[j + 1];
      after.program = all[j].program;
      after.slot = all[j].slot;
      if (!Differences(all[j], after, defined[j + 1]).empty()) return j;
    }
    return std::nullopt;
  };

  Localization result;
  // The runs part after the JIT's boundary k - 1 (or before its first),
  // and before the interpreter's state at `next`: the culprit is the
  // instruction the JIT ran there, or a hidden one after it that should
  // have changed the state and did not.
  const auto blame = [&](size_t k, size_t next) {
    result.agreeing_boundaries = k;
    if (auto hidden = first_hidden_change(k == 0 ? 0 : a[k - 1], next)) {
      result.before = all[*hidden];
      result.culprit = MakeCulprit(loaded, compiled, all[*hidden].program, all[*hidden].slot, false);
      return;
    }
    if (k == 0) {
      const uint32_t program = !all.empty() ? all[0].program : !b.empty() ? b[0].program : 0;
      result.culprit = MakeCulprit(loaded, compiled, program, 0, true);
      return;
    }
    result.before = all[a[k - 1]];
    result.culprit = MakeCulprit(loaded, compiled, all[a[k - 1]].program, all[a[k - 1]].slot, false);
  };

  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    std::vector<std::string> differences = Differences(all[a[k]], b[k], defined[a[k]]);
    if (!differences.empty()) {
      blame(k, a[k]);
      result.differences = std::move(differences);
      result.interp_after = all[a[k]];
      result.jit_after = b[k];
      return result;
    }
  }
  if (interp.full() || jit.full()) {
    result.agreeing_boundaries = n;
    result.why_not = fmt::format("the first {} instruction boundaries agree, and the traces stop there", n);
    return result;
  }
  // The traces agree as far as both go: the runs part in the last
  // instruction both ran (or a hidden one after it), where one run ended
  // and the other went on, or both ended differently.
  blame(n, a.size() > n ? a[n] : all.size());
  if (a.size() > n) {
    result.interp_after = all[a[n]];
    result.jit_end = jit_outcome.Summary();
    result.differences.push_back(fmt::format("jit ended after it ({}); interp went on at {}", result.jit_end,
                                             Where(all[a[n]].program, all[a[n]].slot)));
  } else if (b.size() > n) {
    result.jit_after = b[n];
    result.interp_end = interp_outcome.Summary();
    result.differences.push_back(fmt::format("interp ended after it ({}); jit went on at {}", result.interp_end,
                                             Where(b[n].program, b[n].slot)));
  } else {
    result.interp_end = interp_outcome.Summary();
    result.jit_end = jit_outcome.Summary();
    const Verdict verdict = Compare(interp_outcome, jit_outcome);
    result.differences.push_back(
        fmt::format("both ended after it: {}", verdict.kind == Verdict::Kind::kDivergence ? verdict.Describe()
                                                                                           : "alike"));
  }
  return result;
}

Result<std::unique_ptr<PreparedAgain>> PreparedAgain::For(DifferentialRunner& runner, const CaseRun& run,
                                                           const EngineRun& diverged) {
  auto& engines = runner.engines();
  size_t index = 0;
  while (index < engines.size() && engines[index]->name() != diverged.engine) ++index;
  if (!run.loaded || index == engines.size() || index == 0 || engines[0]->kind() != EngineKind::kInterpreter ||
      engines[index]->kind() != EngineKind::kJit) {
    return Fail("{} is not a JIT compared with the interpreter", diverged.engine);
  }
  Sandbox& sandbox = runner.sandbox();
  GuestEnvironment& env = sandbox.env();
  sandbox.pack().set_hole_state(runner.hole_state());
  const LoadedCase& loaded = *run.loaded;
  env.Install(loaded);
  if (const auto* memory = run.InputMemoryOf(diverged)) env.ReplaceContext(*memory);
  std::unique_ptr<PreparedAgain> again(new PreparedAgain(engines, index));
  for (size_t i = 0; i <= index; ++i) {
    // The interpreter runs the case as the JIT does, so that their slots
    // line up.
    const LoadedCase& form = i == 0 ? loaded : run.LoadedFor(engines[i]->RunsJitOnlyRewrites());
    if (auto status = engines[i]->Prepare(form); !status) {
      if (i == 0 || i == index) {
        return Fail("{} could not prepare the case again: {}", engines[i]->name(), status.message());
      }
      continue;
    }
    again->prepared_.push_back(i);
  }
  return again;
}

PreparedAgain::~PreparedAgain() {
  for (size_t i : prepared_) engines_[i]->Release();
}

namespace {

// The JIT names each function by the slot of its entry in the case as
// written, for the comparison's interpreter, which runs the case without
// the JIT-only rewrites (an inlined kptr_xchg is two slots). Stepping, the
// interpreter runs them too: its functions are named by their slots in the
// rewritten case.
StackGeometry KeyedByRewrittenSlots(StackGeometry geometry, const CaseRun& run) {
  if (!run.loaded_without_jit_rewrites || !run.loaded) return geometry;
  for (FunctionFrame& function : geometry.functions) {
    if (function.program >= run.loaded->programs.size()) continue;
    const auto& source_slot = run.loaded->programs[function.program].source_slot;
    const auto at = std::find(source_slot.begin(), source_slot.end(), function.entry);
    if (at != source_slot.end()) function.entry = static_cast<uint32_t>(at - source_slot.begin());
  }
  return geometry;
}

}  // namespace

Localization LocalizeFirstDivergence(DifferentialRunner& runner, const CaseRun& run, const RunOptions& options,
                                     size_t limit) {
  Localization result;
  const EngineRun* diverged = run.FirstDivergence();
  if (diverged == nullptr || !run.loaded) {
    result.why_not = "the engines agree";
    return result;
  }
  result.engine = diverged->engine;
  if (!diverged->outcome) {
    result.why_not = "the JIT refused the program: there is no run to step through";
    return result;
  }
  auto again = PreparedAgain::For(runner, run, *diverged);
  if (!again) {
    result.why_not = again.message();
    return result;
  }
  GuestEnvironment& env = runner.sandbox().env();
  Engine& interp = (*again)->interp();
  Engine& jit = (*again)->jit();
  // Both sides with the JIT's frames (the kernel's differ from the model's).
  const StackGeometry geometry = KeyedByRewrittenSlots(jit.geometry(), run);
  const StackGeometry interp_geometry = interp.geometry();
  if (!(geometry == interp_geometry) && !interp.UseGeometry(geometry)) {
    result.why_not = fmt::format("{} cannot lay its frames out as {} does", interp.name(), jit.name());
    return result;
  }
  // With per-function frames, the stack is compared through the window of
  // the interpreter's path, which a first run gives.
  std::optional<StackWindow> window;
  if (geometry.per_function()) {
    env.ResetForRun(interp.cpu());
    window = interp.Run(options.interp_budget).memory.window;
  }
  auto trace_for = [&](const Engine& engine) {
    return window ? BoundaryTrace(env, engine.cpu(), geometry, *window, limit)
                  : BoundaryTrace(env, engine.cpu(), geometry, limit);
  };
  BoundaryTrace interp_trace = trace_for(interp);
  interp_trace.set_uncounted_helpers(jit.inlined_helpers());
  env.ResetForRun(interp.cpu());
  const Outcome interp_outcome = interp.RunTraced(options.interp_budget, interp_trace);
  interp.UseGeometry(interp_geometry);
  BoundaryTrace jit_trace = trace_for(jit);
  env.ResetForRun(jit.cpu());
  Outcome jit_outcome =
      jit.RunTraced(interp_outcome.steps * options.jit_budget_factor + options.jit_budget_base, jit_trace);
  if (window) jit_outcome.memory = env.Capture(interp_outcome.memory.window);

  if (interp_outcome.end == EndKind::kHarnessError || jit_outcome.end == EndKind::kHarnessError) {
    result.why_not = fmt::format("a stepped run failed: interp {}; jit {}", interp_outcome.Summary(),
                                 jit_outcome.Summary());
  } else if (Compare(interp_outcome, jit_outcome).kind != Verdict::Kind::kDivergence) {
    result.why_not = "stepped through with the JIT-only rewrites on both sides, the engines agree: the divergence "
                     "lies in the rewrite, not in an instruction";
  } else {
    result = CompareTraces(*run.loaded, *jit.compiled_programs(), interp_trace, interp_outcome, jit_trace,
                           jit_outcome, diverged->tail_call_restores_registers);
    result.engine = diverged->engine;
  }
  return result;
}

namespace {

std::string Registers(const BoundaryState& state) {
  std::string out;
  for (unsigned r = 0; r < isa::kNumRegs; ++r) {
    out += fmt::format("{}r{}=0x{:x}", r == 0 ? "" : " ", r, state.regs[r]);
  }
  return out;
}

}  // namespace

std::string DescribeLocalization(const Localization& localization, const LoadedCase& loaded) {
  if (!localization.culprit) return fmt::format("culprit: not located: {}\n", localization.why_not);
  const Culprit& culprit = *localization.culprit;
  std::string out;
  if (culprit.prologue) {
    out += fmt::format("culprit: the entry of program {}, before its first instruction (the prologue), in {}\n",
                       culprit.program, localization.engine);
  } else {
    const auto& insns = loaded.programs[culprit.program].program.insns;
    const isa::Insn* next = culprit.slot + 1 < insns.size() ? &insns[culprit.slot + 1] : nullptr;
    out += fmt::format("culprit: {}: {}{}, in {}\n", Where(culprit.program, culprit.slot),
                       isa::DisassembleInsn(insns[culprit.slot], next),
                       culprit.source_slot != culprit.slot
                           ? fmt::format(" (slot {} of the case as written)", culprit.source_slot)
                           : "",
                       localization.engine);
  }
  out += fmt::format("  after {} instruction boundaries alike\n", localization.agreeing_boundaries);
  if (localization.before) out += fmt::format("  before it, both: {}\n", Registers(*localization.before));
  if (localization.interp_after) out += fmt::format("  after it, interp: {}\n", Registers(*localization.interp_after));
  if (localization.jit_after) out += fmt::format("  after it, jit:    {}\n", Registers(*localization.jit_after));
  for (const auto& difference : localization.differences) out += fmt::format("  differs: {}\n", difference);
  if (culprit.code_words.empty()) {
    out += fmt::format("  arm64 code at 0x{:x}: none (the JIT emitted nothing for it)\n", culprit.code_address);
  } else {
    out += fmt::format("  arm64 code at 0x{:x}:", culprit.code_address);
    for (uint32_t word : culprit.code_words) out += fmt::format(" {:08x}", word);
    out += "\n";
  }
  return out;
}

}  // namespace bpfdiff
