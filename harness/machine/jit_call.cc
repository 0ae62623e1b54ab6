#include "harness/machine/jit_call.h"

#include <cstring>

#include <fmt/format.h>

#include "harness/machine/a64_access.h"
#include "harness/machine/sandbox.h"
#include "harness/machine/throw_kfunc.h"
#include "jit/a64/branch_targets.h"
#include "jit/a64/operands.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

bool IsAtomic(const isa::Insn& insn) {
  return isa::ClassOf(insn.opcode) == isa::kClassStx &&
         (isa::ModeOf(insn.opcode) == isa::kModeAtomic || isa::ModeOf(insn.opcode) == isa::kModeProbeAtomic);
}

}  // namespace

CodeConventions ModelConventions() {
  CodeConventions conventions;
  conventions.geometry = Sandbox::Geometry();
  return conventions;
}

JitCall::JitCall(GuestEnvironment& env, Machine& machine, int cpu, CallPrograms programs)
    : env_(env),
      machine_(machine),
      cpu_(cpu),
      programs_(std::move(programs)),
      helpers_{env.memory(), env.helper_state(cpu)} {}

JitCall::~JitCall() {
  if (running_) Detach();
}

void JitCall::Detach() {
  machine_.set_helper_context(nullptr, nullptr);
  machine_.set_observer(nullptr);
}

void JitCall::Start(size_t index, const std::array<uint64_t, 5>& args, uint64_t budget, uint64_t sp) {
  StartAt(programs_.compiled[index]->entry(), args, budget, sp);
  current_program_ = index;
}

void JitCall::Attach() {
  machine_.set_helper_context(&helpers_, &outcome_.helper_calls);
  machine_.set_observer(this);
  machine_.set_budget(budget_);
}

void JitCall::StartAt(uint64_t entry, const std::array<uint64_t, 5>& args, uint64_t budget, uint64_t sp) {
  outcome_ = Outcome{};
  budget_ = budget;
  running_ = true;
  imprecise_ = false;
  current_program_ = 0;
  previous_block_end_ = 0;
  resume_pc_ = 0;
  branch_target_violation_.clear();
  frame_chain_violation_.clear();
  firmware_calls_ = 0;
  Attach();
  start_error_.clear();
  entry_sp_ = sp != 0 ? sp : guest::StackTop(cpu_);
  if (auto prepared = machine_.PrepareCall(entry, args, entry_sp_); !prepared) {
    start_error_ = prepared.message();  // Step() reports it as the call's outcome
  }
}

std::optional<std::string> JitCall::CalleeSavedChanged() const {
  // PrepareCall starts every register but x0..x4 at 0.
  for (int reg = 19; reg <= 29; ++reg) {
    if (const uint64_t value = machine_.ReadX(reg); value != 0) {
      return fmt::format("the call returned with x{} = 0x{:x}, where its caller left 0 (AAPCS64: a callee "
                         "preserves x19..x29)",
                         reg, value);
    }
  }
  if (const uint64_t sp = machine_.ReadSp(); sp != entry_sp_) {
    return fmt::format("the call returned with sp = 0x{:x}, where its caller's was 0x{:x}", sp, entry_sp_);
  }
  return std::nullopt;
}

std::optional<JitCall::Location> JitCall::Locate(uint64_t pc) const {
  for (size_t p = 0; p < programs_.compiled.size(); ++p) {
    if (programs_.compiled[p] == nullptr) continue;
    if (const auto* sub = programs_.compiled[p]->SubprogramAt(pc)) return Location{p, sub};
  }
  return std::nullopt;
}

void JitCall::OnBlock(int cpu, uint64_t address, uint32_t size) {
  // A block that starts at a program's tail-call entry, other than by
  // running on from the prologue (Unicorn ends a block at a page boundary),
  // is a tail call into it: nothing else branches past a prologue.
  // A block that starts where the last call to Step stopped (or where an
  // exception-table fixup resumed) continues the code that ran before:
  // its block hook fired then, before the stop.
  const bool fell_through = address == previous_block_end_ || address == resume_pc_;
  if (!fell_through && programs_.conventions.guarded_pages) CheckBranchTarget(address);
  if (programs_.conventions.frame_records) CheckFrameChain(address);
  previous_block_end_ = address + size;
  resume_pc_ = 0;
  if (!fell_through) {
    for (size_t p = 0; p < programs_.compiled.size(); ++p) {
      if (programs_.compiled[p] != nullptr &&
          address == programs_.compiled[p]->entry() + programs_.conventions.tail_call_entry_offset) {
        outcome_.tail_calls.push_back(static_cast<uint32_t>(p));
        current_program_ = p;
      }
    }
  }
  if (forward_ != nullptr) forward_->OnBlock(cpu, address, size);
}

void JitCall::CheckBranchTarget(uint64_t target) {
  // BPF code lies on guarded pages wherever the allocator put it: every
  // pack, and the images of their own (oversize, or far from the packs).
  const bool packed = target >= guest::kPackBase && target - guest::kPackBase < guest::kMaxPacks * guest::kPackSize;
  const bool own = target >= guest::kOversizeBase && target - guest::kOversizeBase < guest::kOversizeSize;
  if (!branch_target_violation_.empty() || (!packed && !own)) return;
  const auto word_at = [&](uint64_t pc) {
    uint32_t word = 0;
    if (const uint8_t* p = env_.memory().HostPointer(pc, 4)) std::memcpy(&word, p, 4);
    return word;
  };
  // The call's first block was entered by bpf_prog_run's blr; any other
  // block that does not follow on from the last one, by the branch that
  // ended the last block.
  constexpr uint32_t kBlr = 0xd63f0000;  // blr x0: what the caller's branch is, as a word
  const bool first = previous_block_end_ == 0;
  const uint64_t branch_pc = first ? 0 : previous_block_end_ - 4;
  const uint32_t branch = first ? kBlr : word_at(branch_pc);
  if (auto violation = a64::BranchTargetViolation(branch, branch_pc, word_at(target), target)) {
    branch_target_violation_ = first ? "the call's entry: " + *violation : *violation;
  }
}

void JitCall::CheckFrameChain(uint64_t callee) {
  // Only the entries of what BPF code calls: a helper's, a trampoline
  // stub's (each entered by a call and nothing else).
  const bool helper = callee >= guest::kHelperBase && callee < guest::kHelperBase + guest::kHelperRegionSize;
  const bool stub = (callee >= guest::kTrampProgEnterAddress &&
                     callee < guest::kTrampImageExitAddress + guest::kTrampStubBytes) ||
                    callee == guest::kLoopHelperAddress || callee == guest::kThrowKfuncAddress;
  if (!frame_chain_violation_.empty() || (!helper && !stub)) return;
  const auto read = [&](uint64_t at) -> std::optional<uint64_t> {
    const uint8_t* p = env_.memory().HostPointer(at, 8);
    if (p == nullptr) return std::nullopt;
    uint64_t value = 0;
    std::memcpy(&value, p, 8);
    return value;
  };
  const auto is_code = [&](uint64_t at) {
    const Region* region = env_.memory().Find(at, 4);
    return region != nullptr && (region->permissions & kPermExec) != 0;
  };
  // A return address signed by paciasp (the kernel's JIT signs lr before
  // it pushes it; VIXL computes the code, Unicorn does not) carries its
  // code above the 48 bits of the address: the unwinder strips it.
  constexpr uint64_t kVirtualAddressBits = (uint64_t{1} << 48) - 1;
  // The caller's own frame pointer ends the chain: PrepareCall starts x29 at 0.
  const uint64_t stack_low = machine_.ReadSp(), stack_top = guest::StackTop(cpu_);
  uint64_t fp = machine_.ReadX(29), last = 0;
  for (int depth = 0; fp != 0; ++depth) {
    std::string wrong;
    if (depth == 64) {
      wrong = "more than 64 frame records";
    } else if (fp % 16 != 0 || fp < stack_low || fp + 16 > stack_top || (last != 0 && fp <= last)) {
      wrong = fmt::format("the frame record at 0x{:x} is not a record of this stack above the last (0x{:x}; the "
                          "stack is [0x{:x}, 0x{:x}))",
                          fp, last, stack_low, stack_top);
    } else if (const auto lr = read(fp + 8); !lr || !is_code(*lr & kVirtualAddressBits)) {
      wrong = fmt::format("the frame record at 0x{:x} returns to 0x{:x}, which is not code", fp, lr.value_or(0));
    }
    if (!wrong.empty()) {
      frame_chain_violation_ =
          fmt::format("the frame chain does not unwind at the call of 0x{:x} (from 0x{:x}): {}", callee,
                      machine_.ReadX(30), wrong);
      return;
    }
    last = fp;
    fp = read(fp).value_or(1);  // 1: not a record, reported above on the next turn
  }
}

Outcome JitCall::Finish() {
  running_ = false;
  if (!branch_target_violation_.empty()) {
    // The CPU would have stopped at the landing; the kernel oopses there.
    outcome_.end = EndKind::kTrap;
    outcome_.message = branch_target_violation_;
    outcome_.fault.reset();
  } else if (!frame_chain_violation_.empty()) {
    // Whatever the run came to after it, an unwind there would have gone
    // astray (a garbage call chain, bpf_throw's walk into the weeds): the
    // first thing that went wrong is what the run reports.
    outcome_.end = EndKind::kTrap;
    outcome_.message = frame_chain_violation_;
    outcome_.fault.reset();
  }
  outcome_.steps = machine_.steps();
  outcome_.memory = env_.Capture(cpu_, programs_.conventions.geometry);
  Detach();
  return std::move(outcome_);
}

std::optional<uint64_t> JitCall::GuestCodeOfKernelAddress(const MachineStop& stop) const {
  constexpr uint64_t kKernelHalf = 0xffff'0000'0000'0000;
  if (!programs_.conventions.kernel_virtual_calls || stop.access != AccessKind::kExec) return std::nullopt;
  if ((stop.address & kKernelHalf) != kKernelHalf || stop.pc != stop.address) return std::nullopt;
  const uint64_t guest = stop.address & ~kKernelHalf;
  const Region* region = env_.memory().Find(guest, 4);
  if (region == nullptr || (region->permissions & kPermExec) == 0) return std::nullopt;
  return guest;
}

Outcome JitCall::MarkImprecise() {
  imprecise_ = true;
  running_ = false;
  Detach();
  return Outcome{};
}

bool JitCall::IsBreakFault(uint64_t pc) const {
  uint32_t word = 0;
  if (const uint8_t* p = env_.memory().HostPointer(pc, 4)) std::memcpy(&word, p, 4);
  return word == jit::kBreakFault;
}

bool JitCall::ApplyFixup(uint64_t pc) {
  // What the kernel does: search the faulting program's exception table,
  // as it lies in RX memory, for the faulting pc.
  const auto location = Locate(pc);
  if (!location) return false;
  const jit::CompiledSubprogram& sub = *location->subprogram;
  const uint8_t* table =
      env_.memory().HostPointer(sub.rx_extable, uint64_t{sub.extable_entries} * jit::kExtableEntrySize);
  if (table == nullptr) return false;
  const auto fixup = programs_.conventions.search_extable(table, sub.rx_extable, sub.extable_entries, pc);
  if (!fixup) return false;
  if (fixup->reg != static_cast<int>(a64::Reg::kZr)) machine_.WriteX(fixup->reg, 0);
  machine_.WritePc(fixup->resume_pc);
  resume_pc_ = fixup->resume_pc;
  return true;
}

namespace {

// `hvc #0` and `smc #0` (exception generation: 1101 0100 000 imm16 000 LL,
// LL = 10 HVC, 11 SMC), what the kernel's SMCCC calls are.
constexpr uint32_t kHvc0 = 0xd4000002;
constexpr uint32_t kSmc0 = 0xd4000003;
// What x1..x3 hold after a firmware call: SMCCC v1.1 returns results in
// x0..x3 and preserves x4..x17, so the code may count on nothing in x1..x3.
constexpr uint64_t kFirmwareClobber = 0xf12e'f12e'f12e'f12eULL;

}  // namespace

bool JitCall::IsFirmwareCall(uint64_t pc) const {
  const kernelsrc::SmcccConduit conduit = programs_.conventions.firmware;
  if (conduit == kernelsrc::SmcccConduit::kNone) return false;
  uint32_t word = 0;
  if (const uint8_t* p = env_.memory().HostPointer(pc, 4)) std::memcpy(&word, p, 4);
  return word == (conduit == kernelsrc::SmcccConduit::kHvc ? kHvc0 : kSmc0);
}

std::optional<std::string> JitCall::CallFirmware(uint64_t pc) {
  const uint32_t function = static_cast<uint32_t>(machine_.ReadX(0));
  if (function != kernelsrc::kSmcccArchWorkaround3) {
    return fmt::format("a firmware call at 0x{:x} of SMCCC function 0x{:08x}: the kernel's code calls only "
                       "ARCH_WORKAROUND_3 (0x{:08x})",
                       pc, function, kernelsrc::kSmcccArchWorkaround3);
  }
  ++firmware_calls_;
  machine_.WriteX(0, 0);  // SMCCC_RET_SUCCESS
  for (int reg = 1; reg <= 3; ++reg) machine_.WriteX(reg, kFirmwareClobber);
  machine_.WritePc(pc + 4);
  resume_pc_ = pc + 4;
  return std::nullopt;
}

bool JitCall::ReadTpidrEl2(uint64_t pc) {
  if (!programs_.conventions.per_cpu_in_tpidr_el2) return false;
  uint32_t word = 0;
  if (const uint8_t* p = env_.memory().HostPointer(pc, 4)) std::memcpy(&word, p, 4);
  // MRS Xt, TPIDR_EL2: op0 3, op1 4, CRn 13, CRm 0, op2 2.
  if ((word & ~uint32_t{31}) != 0xd53cd040) return false;
  const int rt = static_cast<int>(word & 31);
  if (rt != 31) machine_.WriteX(rt, guest::PerCpuArea(cpu_));
  machine_.WritePc(pc + 4);
  resume_pc_ = pc + 4;
  return true;
}

bool JitCall::ExceptionPcIsExact(uint64_t pc) const {
  uint32_t word = 0;
  if (const uint8_t* p = env_.memory().HostPointer(pc, 4)) std::memcpy(&word, p, 4);
  if (word == jit::kBreakFault) return true;
  const auto location = Locate(pc);
  if (!location) return false;
  const uint32_t slot = location->subprogram->SlotAt(pc);
  const MachineRegisters registers(machine_);
  return IsAtomic(programs_.programs[location->program]->insns[slot]) &&
         MemoryAccessOf(word, pc, registers).has_value();
}

Outcome JitCall::Unhandled(const MachineStop& stop) {
  GuestMemory& memory = env_.memory();
  uint32_t word = 0;
  if (const uint8_t* p = memory.HostPointer(stop.pc, 4)) std::memcpy(&word, p, 4);
  const auto location = Locate(stop.pc);

  if (stop.kind == MachineStop::Kind::kException) {
    if (auto trap = ThrowKfuncTrap(stop.pc)) {
      outcome_.end = EndKind::kTrap;
      outcome_.message = std::move(*trap);
      return Finish();
    }
  }
  if (stop.kind == MachineStop::Kind::kException && word == jit::kBreakFault) {
    outcome_.end = EndKind::kTrap;
    outcome_.message = fmt::format("executed AARCH64_BREAK_FAULT at 0x{:x}{}", stop.pc,
                                   location ? "" : " (not in any live program)");
    return Finish();
  }
  if (!location) {
    outcome_.end = EndKind::kTrap;
    outcome_.message =
        stop.kind == MachineStop::Kind::kFault
            ? fmt::format("{} of 0x{:x} at pc 0x{:x}, outside any program", AccessKindName(stop.access),
                          stop.address, stop.pc)
            : fmt::format("CPU exception at pc 0x{:x} (word 0x{:08x}), outside any program", stop.pc, word);
    return Finish();
  }
  const uint32_t slot = location->subprogram->SlotAt(stop.pc);
  const isa::Insn& insn = programs_.programs[location->program]->insns[slot];
  FaultInfo fault{slot, static_cast<uint32_t>(location->program), stop.address, stop.access, false};
  const MachineRegisters registers(machine_);
  if (stop.kind == MachineStop::Kind::kFault && IsAtomic(insn)) {
    // The architecture checks alignment before translation (the Arm ARM's
    // AArch64.CheckAlignment comes before AArch64.TranslateAddress);
    // Unicorn reports the translation fault of a misaligned atomic first.
    if (auto range = MemoryAccessOf(word, stop.pc, registers)) {
      if (range->begin % isa::SizeBytes(insn.opcode) != 0) {
        fault.kind = AccessKind::kMisaligned;
        fault.address = range->begin;
      }
    }
  }
  if (stop.kind == MachineStop::Kind::kException) {
    if (word == kHvc0 || word == kSmc0) {
      outcome_.end = EndKind::kTrap;
      outcome_.message = fmt::format(
          "a firmware call ({} #0) at pc 0x{:x} in instruction {}, where none is due: the loader or the CPU rules "
          "out the Spectre-BHB firmware mitigation, or it goes through the other conduit",
          word == kHvc0 ? "hvc" : "smc", stop.pc, slot);
      return Finish();
    }
    if (!IsAtomic(insn)) {
      outcome_.end = EndKind::kTrap;
      outcome_.message = fmt::format("CPU exception at pc 0x{:x} (word 0x{:08x}) in instruction {}", stop.pc,
                                     word, slot);
      return Finish();
    }
    // An alignment fault of an atomic: its address register is Rn.
    fault.kind = AccessKind::kMisaligned;
    if (auto range = MemoryAccessOf(word, stop.pc, registers)) fault.address = range->begin;
  }
  outcome_.end = EndKind::kFault;
  outcome_.fault = fault;
  return Finish();
}

std::optional<Outcome> JitCall::Step(uint64_t max_steps) {
  if (!start_error_.empty()) {
    outcome_.end = EndKind::kHarnessError;
    outcome_.message = start_error_;
    return Finish();
  }
  if (running_) Attach();
  const uint64_t limit = machine_.mode() == MachineMode::kPrecise ? max_steps : ~uint64_t{0};
  const uint64_t end = limit == ~uint64_t{0} ? limit : machine_.steps() + limit;
  if (machine_.steps() != 0) resume_pc_ = machine_.ReadPc();
  for (;;) {
    const uint64_t remaining = end == ~uint64_t{0} ? end : end - machine_.steps();
    const MachineStop stop = machine_.Resume(remaining);
    switch (stop.kind) {
      case MachineStop::Kind::kStep: return std::nullopt;
      case MachineStop::Kind::kReturned:
        if (auto broken = CalleeSavedChanged()) {
          outcome_.end = EndKind::kTrap;
          outcome_.message = std::move(*broken);
          return Finish();
        }
        if (programs_.conventions.firmware != kernelsrc::SmcccConduit::kNone && firmware_calls_ == 0) {
          outcome_.end = EndKind::kTrap;
          outcome_.message = fmt::format(
              "the call returned without the Spectre-BHB firmware call (`{} #0` of ARCH_WORKAROUND_3) that the "
              "epilogue of a classic program makes under this loader",
              programs_.conventions.firmware == kernelsrc::SmcccConduit::kHvc ? "hvc" : "smc");
          return Finish();
        }
        outcome_.end = EndKind::kExit;
        outcome_.r0 = machine_.ReadX(0);
        return Finish();
      case MachineStop::Kind::kFault: {
        if (auto target = GuestCodeOfKernelAddress(stop)) {
          // The branch to the kernel address (a `blr` of emit_call, the
          // trampoline's call of a program) lands here: BTI sees it.
          if (programs_.conventions.guarded_pages) CheckBranchTarget(*target);
          // Calls out of the kernel's code go this way (a helper or a stub
          // lies beyond a `bl`); the machine observes no block outside the
          // JIT's regions.
          if (programs_.conventions.frame_records) CheckFrameChain(*target);
          machine_.WritePc(*target);
          resume_pc_ = *target;
          if (end != ~uint64_t{0} && machine_.steps() >= end) return std::nullopt;
          continue;
        }
        if (ApplyFixup(stop.pc)) {
          if (end != ~uint64_t{0} && machine_.steps() >= end) return std::nullopt;
          continue;
        }
        return Unhandled(stop);
      }
      case MachineStop::Kind::kException:
        // QEMU and VIXL both stop at the call itself (Machine::Resume).
        if (IsFirmwareCall(stop.pc)) {
          if (auto refused = CallFirmware(stop.pc)) {
            outcome_.end = EndKind::kTrap;
            outcome_.message = std::move(*refused);
            return Finish();
          }
          if (end != ~uint64_t{0} && machine_.steps() >= end) return std::nullopt;
          continue;
        }
        if (ReadTpidrEl2(stop.pc)) {
          if (end != ~uint64_t{0} && machine_.steps() >= end) return std::nullopt;
          continue;
        }
        // A fast machine's pc for an exception is exact for BRK and for
        // the alignment fault of an atomic; an exception anywhere else is
        // reported at some block start (seen after an exception-table
        // fixup): run the call again on a precise machine.
        if (machine_.mode() == MachineMode::kFast && !ExceptionPcIsExact(stop.pc)) return MarkImprecise();
        // The kernel's alignment fault goes through the exception table
        // too (do_alignment_fault, __do_kernel_fault): an arena atomic
        // that is misaligned is skipped. A BRK is not a fault.
        if (!IsBreakFault(stop.pc) && ApplyFixup(stop.pc)) {
          if (end != ~uint64_t{0} && machine_.steps() >= end) return std::nullopt;
          continue;
        }
        return Unhandled(stop);
      case MachineStop::Kind::kHelper:
        if (stop.helper.kind == HelperResult::Kind::kUnwind) {
          outcome_.end = EndKind::kUnwind;
          outcome_.r0 = 0;
        } else {
          outcome_.end = EndKind::kHelperError;
          outcome_.message = stop.helper.error;
          if (stop.helper_id >= 0) outcome_.refusing_helper = stop.helper_id;
        }
        return Finish();
      case MachineStop::Kind::kBudget:
        outcome_.end = EndKind::kBudget;
        outcome_.message = fmt::format("{} arm64 instructions", budget_);
        return Finish();
      case MachineStop::Kind::kImpreciseFault: return MarkImprecise();
      case MachineStop::Kind::kHelperTrap:  // a call traps no helper
      case MachineStop::Kind::kError:
        outcome_.end = EndKind::kHarnessError;
        outcome_.message = stop.message.empty() ? "unexpected helper trap" : stop.message;
        return Finish();
    }
  }
}

}  // namespace bpfdiff
