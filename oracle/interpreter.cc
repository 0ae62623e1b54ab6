#include "oracle/interpreter.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "oracle/guest_layout.h"
#include "oracle/interpreter/alu.h"
#include "oracle/interpreter/calls.h"
#include "oracle/interpreter/jump.h"
#include "oracle/interpreter/memory.h"
#include "oracle/interpreter/program_run.h"

namespace bpfdiff {
namespace interp {

ProgramRun::ProgramRun(GuestEnvironment& env, const LoadedCase& loaded, const InterpreterOptions& options,
                       size_t index, const std::array<uint64_t, 5>& args)
    : env_(env),
      memory_(env.memory()),
      loaded_(loaded),
      options_(options),
      helpers_{env.memory(), env.helper_state(options.cpu)},
      deepest_frame_(options.geometry.FramePointer(options.cpu, isa::kMaxCallDepth - 1) - isa::kStackSize),
      stack_top_(options.geometry.FramePointer(options.cpu, 0)),
      program_index_(index),
      code_(loaded.programs[index].program.insns.data()),
      executed_(options.executed ? (*options.executed)[index].data() : nullptr) {
  memory_.ClearPrivateRead();
  memory_.ClearHeldRead();
  for (int i = 0; i < 5; ++i) r_[i + 1] = args[static_cast<size_t>(i)];
  if (options.geometry.per_function()) {
    window_.emplace(options.geometry.EntrySp(options.cpu), GuestEnvironment::kResetStackBytes);
    helpers_.frames = &*window_;
    EnterFunction(options.geometry.EntryFramePointer(options.cpu, static_cast<uint32_t>(index)));
  } else {
    r_[isa::kFramePointer] = options.geometry.FramePointer(options.cpu, 0);
  }
}

void ProgramRun::EnterFunction(uint64_t fp) {
  r_[isa::kFramePointer] = fp;
  const auto program = static_cast<uint32_t>(program_index_);
  window_->Enter(fp, options_.geometry.StackBytes(program, function_), options_.geometry.PrologueBytes(program, function_));
}

// Decode by class; each class's semantics live in its own header. Inlined
// into Execute, the loop every BPF instruction goes through.
[[gnu::always_inline]] inline StepResult ProgramRun::Step(const isa::Insn& insn, uint32_t pc) {
  uint64_t& dst = r_[insn.dst];
  const uint64_t src = r_[insn.src];
  switch (isa::ClassOf(insn.opcode)) {
    case isa::kClassAlu64:
      if (ExecuteAlu64(insn, dst, src)) return Next(pc + 1);
      if (isa::IsPerCpuAddressMove(insn)) {
        // this_cpu_ptr(): TPIDR_EL1 holds the CPU's per-CPU area.
        dst = src + guest::PerCpuArea(options_.cpu);
        return Next(pc + 1);
      }
      if (isa::IsAddrSpaceCast(insn)) {
        // cast_user: the arena offset in user_vm_start's 4 GiB, NULL kept.
        const uint64_t low = src & 0xffffffffULL;
        dst = low == 0 ? 0 : (guest::kArenaUserStart & ~0xffffffffULL) | low;
        return Next(pc + 1);
      }
      break;
    case isa::kClassAlu:
      if (ExecuteAlu32(insn, dst, src)) return Next(pc + 1);
      break;
    case isa::kClassJmp:
    case isa::kClassJmp32: return Jump(insn, dst, src, pc);
    case isa::kClassLdx: return Load(insn, dst, src, pc);
    case isa::kClassSt: return Store(insn, dst, src, pc);
    case isa::kClassStx:
      if (isa::ModeOf(insn.opcode) == isa::kModeMem || isa::ModeOf(insn.opcode) == isa::kModeProbeMem32) {
        return Store(insn, dst, src, pc);
      }
      if (isa::ModeOf(insn.opcode) == isa::kModeAtomic || isa::ModeOf(insn.opcode) == isa::kModeProbeAtomic) {
        return AtomicUpdate(insn, dst, src, pc);
      }
      break;
    case isa::kClassLd:
      if (insn.opcode == isa::kOpLddw) {  // dst = imm64, over two slots
        // lddw_func: a token of the callback (guest_layout.h), not its address.
        const uint32_t target = pc + 1 + static_cast<uint32_t>(insn.imm);
        dst = insn.src == isa::kPseudoFunc ? guest::kCallbackTokenBase + target : isa::Imm64(insn, code_[pc + 1]);
        return Next(pc + 2);
      }
      if (isa::ModeOf(insn.opcode) == isa::kModeAbs || isa::ModeOf(insn.opcode) == isa::kModeInd) {
        return LegacyPacketLoad(insn, src, pc);
      }
      break;
  }
  return Finish(EndKind::kHarnessError, 0,
                fmt::format("instruction {}: opcode 0x{:02x} reached the interpreter unvalidated", pc, insn.opcode));
}

// if (dst OP src|imm) pc += offset; ja; and the others (OtherJump).
[[gnu::always_inline]] inline StepResult ProgramRun::Jump(const isa::Insn& insn, uint64_t dst, uint64_t src,
                                                          uint32_t pc) {
  switch (ConditionalBranch(insn, dst, src)) {
    case Branch::kTaken: return Next(pc + 1 + static_cast<uint32_t>(static_cast<int32_t>(insn.offset)));
    case Branch::kNotTaken: return Next(pc + 1);
    case Branch::kOther: return OtherJump(insn, dst, pc);
  }
  return OtherJump(insn, dst, pc);
}

// The jumps that are not a plain offset: gotol, calls, exit, tail calls.
// Out of line, so that the loop stays small.
[[gnu::noinline]] StepResult ProgramRun::OtherJump(const isa::Insn& insn, uint64_t dst, uint32_t pc) {
  switch (insn.opcode) {
    case isa::kClassJmp32 | isa::kJmpJa: return Next(pc + 1 + static_cast<uint32_t>(insn.imm));
    case isa::kOpCall:
      if (insn.src == isa::kPseudoCall) return LocalCall(insn, pc);
      if (insn.src == isa::kPseudoKfuncCall) return Throw();  // bpf_throw, the one kfunc (load.cc)
      return insn.imm == kHelperLoop ? LoopCall(pc) : HelperCall(insn, dst, pc);
    case isa::kOpCallX: return HelperCall(insn, dst, pc);
    case isa::kOpExit: return Exit();
    case isa::kOpTailCall: return TailCall(pc);
    default:
      return Finish(EndKind::kHarnessError, 0,
                    fmt::format("instruction {}: opcode 0x{:02x} reached the interpreter unvalidated", pc, insn.opcode));
  }
}

Outcome ProgramRun::Execute() { return options_.trace != nullptr ? ExecuteLoop<true>() : ExecuteLoop<false>(); }

void ProgramRun::RecordBoundary(uint32_t pc) {
  std::array<uint64_t, isa::kNumRegs> regs;
  std::copy(std::begin(r_), std::end(r_), regs.begin());
  options_.trace->Record(static_cast<uint32_t>(program_index_), pc, regs, outcome_.helper_calls);
}

template <bool kTraced>
Outcome ProgramRun::ExecuteLoop() {
  // The budget, the count, the code and the coverage map live in locals
  // (the outcome's count is set once the run ends):
  // a store to a BPF register (a uint64_t) or to the coverage map (a byte)
  // could alias a member, which would cost a reload of each on every
  // instruction. Only a tail call changes the code and the map.
  const uint64_t budget = options_.budget;
  const isa::Insn* code = code_;
  uint8_t* executed = executed_;
  uint32_t pc = 0;
  for (uint64_t steps = 1;; ++steps) {
    if (steps > budget) {
      Finish(EndKind::kBudget, 0, fmt::format("{} instructions", budget));
      outcome_.steps = steps;
      return std::move(outcome_);
    }
    const isa::Insn& insn = code[pc];
    if (executed != nullptr) executed[pc] = 1;
    if constexpr (kTraced) RecordBoundary(pc);
    const StepResult result = Step(insn, pc);
    pc = result.next;
    if (result.flow == Flow::kNext) continue;
    if (result.flow == Flow::kEnded) {
      outcome_.steps = steps;
      return std::move(outcome_);
    }
    code = code_;  // kNewProgram
    executed = executed_;
  }
}

StepResult ProgramRun::Finish(EndKind end, uint64_t r0, std::string message) {
  if (window_) outcome_.memory.window = window_->Window();
  outcome_.end = end;
  outcome_.r0 = r0;
  outcome_.message = std::move(message);
  outcome_.read_engine_private = outside_ || helpers_.touched_private || memory_.private_read();
  outcome_.read_program_array_slots = memory_.held_read();
  return kEnded;
}

StepResult ProgramRun::EndWithFault(const FaultInfo& info) {
  if (window_) outcome_.memory.window = window_->Window();
  outcome_.end = EndKind::kFault;
  outcome_.fault = info;
  outcome_.read_engine_private = outside_ || helpers_.touched_private || memory_.private_read();
  outcome_.read_program_array_slots = memory_.held_read();
  return kEnded;
}

StepResult ProgramRun::Fault(uint32_t pc, uint64_t address, uint64_t size, AccessKind kind) {
  const uint64_t first = memory_.FirstInaccessible(address, size, kind);
  const bool partial = first != address || (size > 1 && memory_.Accessible(address, 1, kind));
  return EndWithFault(FaultInfo{pc, static_cast<uint32_t>(program_index_), first, kind, partial});
}

}  // namespace interp

Outcome Interpreter::Run() {
  Outcome outcome = RunProgram(0, {env_.context_address(), env_.context_length(), 0, 0, 0});
  outcome.memory = options_.geometry.per_function() ? env_.Capture(outcome.memory.window)
                                                    : env_.Capture(options_.cpu, options_.geometry);
  return outcome;
}

Outcome Interpreter::RunProgram(size_t index, const std::array<uint64_t, 5>& args) {
  return interp::ProgramRun(env_, loaded_, options_, index, args).Execute();
}

}  // namespace bpfdiff
